"""The store's identity: who it is, and which ledger is its own.

``init`` appends one ``store.identity@1`` record (seq 1 in a new store) and writes the store
marker ``reviewtrail-store.json`` naming it: the store id, the identity record's seq, id and
hash, and where the ledger was (kind and location). Every later open checks that the configured
ledger still holds that exact record, so a deleted, emptied, replaced or rewritten-from-the-start
ledger is an integrity failure, never a fresh empty ledger.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail._durable import replace_file
from reviewtrail._value import Value
from reviewtrail.errors import IntegrityError

if TYPE_CHECKING:
    from reviewtrail.ledger import Envelope, Projection
    from reviewtrail.store._identity_payload import RECORD_TYPES, StoreIdentity

__all__ = [
    "IDENTITY_TYPE",
    "MARKER_FORMAT",
    "PROJECTIONS",
    "RECORD_TYPES",
    "StoreIdentity",
    "StoreMarker",
    "identity_problems",
    "ledger_location",
    "read_marker",
    "unnamed_identity_problems",
    "write_marker",
]

IDENTITY_TYPE = "store.identity@1"
MARKER_FORMAT = 1
# What the store itself adds to the application's record catalog (see reviewtrail.app): no query
# table, and the payload model of its identity record, ``StoreIdentity`` (a msgspec model, in
# reviewtrail.store._identity_payload, loaded on first use: opening a store loads no model).
PROJECTIONS: tuple[Projection, ...] = ()


def __getattr__(name: str) -> Any:
    if name in ("StoreIdentity", "RECORD_TYPES"):
        from reviewtrail.store import _identity_payload

        value = getattr(_identity_payload, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class StoreMarker(Value):
    """What ``reviewtrail-store.json`` says. Stores made before identities have none."""

    format: int
    store_id: str | None = None
    identity_seq: int | None = None
    identity_id: str | None = None
    identity_hash: str | None = None
    ledger_kind: str | None = None
    ledger_location: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": self.format}
        if self.store_id is not None:
            doc["storeId"] = self.store_id
            doc["identity"] = {"seq": self.identity_seq, "id": self.identity_id, "hash": self.identity_hash}
            doc["ledger"] = {"kind": self.ledger_kind, "location": self.ledger_location}
        return doc


def ledger_location(database_url: str, store: Path) -> tuple[str, str]:
    """(kind, location) of a ledger URL for the marker: a path inside the store is relative,
    a server URL is kept without its password."""
    from reviewtrail._redact import redact_url
    from reviewtrail.config import sqlite_path

    path = sqlite_path(database_url)
    if path is not None:
        path = path.absolute()
        try:
            return "sqlite", str(path.relative_to(store))
        except ValueError:
            return "sqlite", str(path)
    if database_url == "memory:":
        return "memory", "memory:"
    return "postgresql", redact_url(database_url)


def _bad(path: Path, problem: str) -> IntegrityError:
    return IntegrityError(f"store marker {path}: {problem}", field="store")


def read_marker(path: Path) -> StoreMarker:
    """Parse the marker; a damaged one is an integrity failure naming what is wrong."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"unreadable ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != MARKER_FORMAT:
        raise _bad(path, f"not a reviewtrail store marker of format {MARKER_FORMAT}")
    if "storeId" not in doc:
        return StoreMarker(format=MARKER_FORMAT)
    identity, ledger = doc.get("identity"), doc.get("ledger")
    store_id = doc.get("storeId")
    if not isinstance(store_id, str) or not isinstance(identity, dict) or not isinstance(ledger, dict):
        raise _bad(path, "storeId, identity and ledger must be a string and two objects")
    seq, rid, rhash = identity.get("seq"), identity.get("id"), identity.get("hash")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise _bad(path, "identity.seq must be a positive integer")
    if not isinstance(rid, str) or not isinstance(rhash, str) or len(rhash) != 64:
        raise _bad(path, "identity.id and identity.hash must be the identity record's id and hash")
    return StoreMarker(
        format=MARKER_FORMAT,
        store_id=store_id,
        identity_seq=seq,
        identity_id=rid,
        identity_hash=rhash,
        ledger_kind=str(ledger.get("kind")),
        ledger_location=str(ledger.get("location")),
    )


def write_marker(path: Path, marker: StoreMarker) -> None:
    """Write the marker durably and atomically (temp file, fsync, rename)."""
    replace_file(path, (json.dumps(marker.to_json(), indent=2) + "\n").encode())


def identity_problems(marker: StoreMarker, record: Envelope | None, where: str) -> list[str]:
    """Whether the ledger ``where`` still holds the identity record the marker names."""
    if marker.store_id is None:
        return []
    expected = (
        f"store {marker.store_id} (identity record seq {marker.identity_seq}, {marker.identity_id}; "
        f"created on {marker.ledger_kind} ledger {marker.ledger_location})"
    )
    if record is None:
        return [f"{where} does not hold the identity record of {expected}: the ledger was emptied or replaced"]
    if record.id != marker.identity_id or record.hash != marker.identity_hash:
        return [
            f"{where} holds record {record.id} (hash {record.hash[:12]}…) at seq {record.seq}, not the identity "
            f"record of {expected}: the ledger was replaced or rewritten"
        ]
    try:
        payload = json.loads(record.payload)
    except ValueError:
        payload = None
    if record.type != IDENTITY_TYPE or not isinstance(payload, dict) or payload.get("storeId") != marker.store_id:
        return [f"{where}: record seq {record.seq} is not the identity record of {expected}"]
    return []


def unnamed_identity_problems(found: Envelope | None, where: str) -> list[str]:
    """A marker that names no identity (an older store's) while the ledger ``where`` holds
    ``found``, an identity record: the marker was rewritten or replaced, and the ledger's record
    is the store's identity."""
    if found is None:
        return []
    try:
        payload = json.loads(found.payload)
    except ValueError:
        payload = None
    store_id = payload.get("storeId") if isinstance(payload, dict) else None
    return [
        f"the store marker names no identity, but {where} holds the identity record of store {store_id} "
        f"(seq {found.seq}, {found.id}): the marker was rewritten or replaced; 'reviewtrail init' restores it "
        "from that record"
    ]
