"""Checkpoints: signed statements of a ledger's head, kept outside the store.

The hash chain shows that no record was changed *relative to the others*; it cannot show
that the whole chain was not rewritten, or cut back to an older copy, by someone able to
recompute every hash. A checkpoint closes that gap: a small statement of the head at a
moment (seq, hash, record count, time, store id), optionally signed with an Ed25519 key
the store never sees, kept where the store's writers cannot change it. Later the ledger
must still hold that record at that seq with that hash (its chain, verified separately by
``Ledger.verify``, then extends the checkpoint).

Statement (``reviewtrail.checkpoint@1``)::

    {"type": "reviewtrail.checkpoint@1", "storeId": str | null, "seq": int,
     "headHash": hex, "records": int, "time": RFC 3339 UTC,
     "signature": {"alg": "ed25519", "keyId": sha256(raw public key), "value": base64}}

The signature (optional) is over the RFC 8785 bytes of the statement without ``signature``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import canonical_json, loads_json
from reviewtrail.cas import is_hex
from reviewtrail.errors import ConflictError, IntegrityError, InvalidInputError
from reviewtrail.inputs import read_input
from reviewtrail.ledger.contract._protocol import Ledger
from reviewtrail.ledger.keys._ed25519 import load_private_key, load_public_key, public_key_id
from reviewtrail.ledger.records._envelope import GENESIS_HASH, chain_problems, format_time

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = [
    "CHECKPOINT_TYPE",
    "check_checkpoint",
    "load_checkpoint",
    "make_checkpoint",
    "parse_checkpoint",
    "save_checkpoint",
]

CHECKPOINT_TYPE = "reviewtrail.checkpoint@1"
_FIELDS = ("type", "storeId", "seq", "headHash", "records", "time")
_SIGNATURE_FIELDS = ("alg", "keyId", "value")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")
_MAX_INT = 2**53 - 1


# --- making -------------------------------------------------------------------------------
def make_checkpoint(
    ledger: Ledger, *, store_id: str | None, private_key_pem: bytes | None, now: datetime | None = None
) -> dict[str, Any]:
    """A statement of ``ledger``'s current head, signed when ``private_key_pem`` is given.

    The key (PEM, PKCS#8, Ed25519, unencrypted) is only used to sign: it is neither kept
    nor written anywhere. A non-Ed25519 key is :class:`InvalidInputError` (field ``key``).
    """
    key = load_private_key(private_key_pem) if private_key_pem is not None else None
    with ledger.snapshot():
        head = ledger.head()
        count, low, _ = ledger.stats()
        seq = head.seq if head is not None else 0
        # Only a chain that verifies is anchored: every link and hash from seq 1 to the head.
        damage = next(chain_problems(ledger.read(end=seq or None)), None) if seq else None
    if count != seq or (count and low != 1):
        raise IntegrityError(
            f"the ledger holds {count} records but its head is seq {seq}; run 'reviewtrail verify' before anchoring it",
            field="ledger",
        )
    if damage is not None:
        raise IntegrityError(
            f"the ledger's chain does not verify ({damage}); refusing to sign it; run 'reviewtrail verify'",
            field="ledger",
        )
    statement: dict[str, Any] = {
        "type": CHECKPOINT_TYPE,
        "storeId": store_id,
        "seq": seq,
        "headHash": head.hash if head is not None else GENESIS_HASH,
        "records": count,
        "time": format_time(now or datetime.now(UTC)),
    }
    parse_checkpoint(statement)  # the same rules as for a statement read back
    if key is not None:
        raw = key.sign(_signed_bytes(statement))
        statement["signature"] = {
            "alg": "ed25519",
            "keyId": public_key_id(key.public_key()),
            "value": base64.b64encode(raw).decode("ascii"),
        }
    return statement


def save_checkpoint(path: str | os.PathLike[str], checkpoint: dict[str, Any]) -> Path:
    """Write ``checkpoint`` to a new file at ``path`` (never replacing one), durably."""
    import json

    from reviewtrail._durable import fsync_dir

    doc = parse_checkpoint(checkpoint)
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.exists() or target.is_symlink():
        raise ConflictError(f"{target} already exists; a checkpoint is never replaced", field="out")
    tmp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, target)
    except FileExistsError as exc:
        raise ConflictError(f"{target} already exists; a checkpoint is never replaced", field="out") from exc
    except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        raise InvalidInputError(f"cannot write {target}: {exc.strerror}", field="out") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    fsync_dir(folder)
    return target


# --- reading ------------------------------------------------------------------------------
def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a checkpoint file; :class:`InvalidInputError` names the field at fault."""
    data = read_input(os.fspath(path), "checkpoint", field="checkpoint")
    try:
        value = loads_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"{os.fspath(path)!r} is not a JSON document ({exc})", field="checkpoint") from exc
    return parse_checkpoint(value)


def parse_checkpoint(value: object) -> dict[str, Any]:
    """Check a statement's shape (pure); return a copy holding exactly its fields."""
    if not isinstance(value, dict):
        raise InvalidInputError("must be a JSON object", field="checkpoint")
    unknown = sorted(set(value) - {*_FIELDS, "signature"})
    if unknown:
        raise InvalidInputError("is not a field of a checkpoint", field=f"checkpoint.{unknown[0]}")
    for name in _FIELDS:
        if name not in value:
            raise InvalidInputError("is missing", field=f"checkpoint.{name}")
    if value["type"] != CHECKPOINT_TYPE:
        raise InvalidInputError(f"is {value['type']!r}, expected {CHECKPOINT_TYPE!r}", field="checkpoint.type")
    store_id = value["storeId"]
    if store_id is not None and (not isinstance(store_id, str) or not 0 < len(store_id) <= 1024):
        raise InvalidInputError("must be null or a non-empty string", field="checkpoint.storeId")
    for name in ("seq", "records"):
        n = value[name]
        if type(n) is not int or not 0 <= n <= _MAX_INT:
            raise InvalidInputError("must be a whole number >= 0", field=f"checkpoint.{name}")
    if not is_hex(value["headHash"]):
        raise InvalidInputError("must be 64 lowercase hex digits", field="checkpoint.headHash")
    if not isinstance(value["time"], str) or _TIME.fullmatch(value["time"]) is None or not _valid_time(value["time"]):
        raise InvalidInputError("must be an RFC 3339 UTC time ending in Z", field="checkpoint.time")
    doc = {name: value[name] for name in _FIELDS}
    if "signature" in value:
        doc["signature"] = _parse_signature(value["signature"])
    return doc


def _valid_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _parse_signature(sig: object) -> dict[str, str]:
    if not isinstance(sig, dict):
        raise InvalidInputError("must be an object {alg, keyId, value}", field="checkpoint.signature")
    unknown = sorted(set(sig) - set(_SIGNATURE_FIELDS))
    if unknown:
        raise InvalidInputError("is not a field of a signature", field=f"checkpoint.signature.{unknown[0]}")
    for name in _SIGNATURE_FIELDS:
        if name not in sig:
            raise InvalidInputError("is missing", field=f"checkpoint.signature.{name}")
    if sig["alg"] != "ed25519":
        raise InvalidInputError(f"is {sig['alg']!r}; only 'ed25519' is supported", field="checkpoint.signature.alg")
    if not is_hex(sig["keyId"]):
        raise InvalidInputError("must be 64 lowercase hex digits", field="checkpoint.signature.keyId")
    if not isinstance(sig["value"], str) or len(_b64(sig["value"])) != 64:
        raise InvalidInputError("must be the base64 of a 64-byte signature", field="checkpoint.signature.value")
    return {name: sig[name] for name in _SIGNATURE_FIELDS}


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return b""


# --- checking -----------------------------------------------------------------------------
def check_checkpoint(
    ledger: Ledger, checkpoint: dict[str, Any], *, public_keys: list[bytes], store_id: str | None
) -> list[str]:
    """Every reason ``ledger`` does not extend ``checkpoint`` (empty when it does).

    Problems: the checkpoint is beyond the ledger's head (records cut from the end, or an
    older copy of the store); the record at its seq has another hash (history rewritten);
    it names another store; it is not signed by any of ``public_keys`` (when keys are given,
    an unsigned checkpoint is refused too; with none given, signatures are not checked).
    The chain from seq 1 to the head is checked by ``Ledger.verify``, not here.
    A malformed checkpoint or key is :class:`InvalidInputError`.
    """
    doc = parse_checkpoint(checkpoint)
    keys = [load_public_key(pem) for pem in public_keys]
    problems = _signature_problems(doc, keys)
    claimed = doc["storeId"]
    if claimed is not None and claimed != store_id:
        here = f"this store is {store_id}" if store_id is not None else "this store has no identity"
        problems.append(f"the checkpoint is for store {claimed}, but {here}")
    seq, expected = doc["seq"], doc["headHash"]
    if doc["records"] != seq:
        problems.append(f"the checkpoint counts {doc['records']} records at seq {seq}; a sound ledger has as many")
    if seq == 0:
        if expected != GENESIS_HASH:
            problems.append("the checkpoint is at seq 0 but its headHash is not the genesis hash")
        return problems
    with ledger.snapshot():
        head = ledger.head()
        found = next(iter(ledger.read(start=seq, end=seq)), None)
    last = head.seq if head is not None else 0
    if last < seq:
        problems.append(
            f"the checkpoint is at seq {seq} ({doc['time']}) but the ledger ends at seq {last}: records were "
            "cut from its end, or this is an older copy of the store"
        )
    elif found is None or found.seq != seq:
        problems.append(f"the ledger has no record at seq {seq}, which the checkpoint anchors")
    elif found.hash != expected:
        problems.append(
            f"the record at seq {seq} has hash {found.hash}, the checkpoint says {expected}: the history up "
            "to the checkpoint was rewritten"
        )
    return problems


def _signature_problems(doc: dict[str, Any], keys: list[Ed25519PublicKey]) -> list[str]:
    if not keys:
        return []  # nothing to check a signature against; the statement is still compared
    sig = doc.get("signature")
    if sig is None:
        return ["the checkpoint is not signed, but public keys were given: refused"]
    from cryptography.exceptions import InvalidSignature

    body = _signed_bytes(doc)
    raw = base64.b64decode(sig["value"])
    for key in keys:
        try:
            key.verify(raw, body)
        except InvalidSignature:
            continue
        if public_key_id(key) != sig["keyId"]:
            return [f"the signature verifies, but under key {public_key_id(key)}, not the keyId it names"]
        return []
    return [
        f"the signature (keyId {sig['keyId']}) does not verify against any given public key: the checkpoint "
        "was altered, or signed by another key"
    ]


def _signed_bytes(doc: dict[str, Any]) -> bytes:
    return canonical_json({k: v for k, v in doc.items() if k != "signature"}, field="checkpoint")
