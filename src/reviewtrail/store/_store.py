"""A reviewtrail store: one CAS and one ledger, opened from settings.

The store knows no record type of its own beyond its identity: :meth:`Store.open` and
:meth:`Store.init` take the :class:`~reviewtrail.ledger.RecordCatalog` its ledger validates and
projects with. :mod:`reviewtrail.app` assembles that catalog and opens stores for callers.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail._durable import special_file_problem
from reviewtrail.cas import CasStore, open_cas, parse_cas_url
from reviewtrail.config import STORE_MARKER as _MARKER
from reviewtrail.config import Settings, sqlite_path
from reviewtrail.errors import (
    IntegrityError,
    InvalidInputError,
    LedgerMissingError,
    StoreNotInitializedError,
)
from reviewtrail.ledger import Envelope, Ledger, RecordCatalog, open_ledger
from reviewtrail.store.identity import (
    IDENTITY_TYPE,
    MARKER_FORMAT,
    StoreMarker,
    identity_problems,
    ledger_location,
    read_marker,
    unnamed_identity_problems,
    write_marker,
)

if TYPE_CHECKING:
    from reviewtrail.ledger import FileSigner, NewRecord

__all__ = ["STORE_FORMAT", "Progress", "Store"]

STORE_FORMAT = 1
# What a store folder holds besides its marker: a folder with any of these but no marker lost it.
_STORE_CONTENTS = ("versioning", "ledger.sqlite", "cas", "workspaces")
# Folders commands create in the store when they first need them; when present, they are folders.
_STORE_FOLDERS = ("workspaces", "workspaces/.locks", "runs-pending", "cas", "campaign-claims")

# (phase, advance, total) — total is known up front for every phase.
Progress = Callable[[str, int, int], None]


class Store:
    """The CAS and the ledger together."""

    def __init__(
        self, cas: CasStore, ledger: Ledger, root: Path | None = None, marker: StoreMarker | None = None
    ) -> None:
        self.cas = cas
        self.ledger = ledger
        self.root = root
        self.marker = marker

    @property
    def store_id(self) -> str | None:
        return self.marker.store_id if self.marker is not None else None

    @property
    def read_only(self) -> bool:
        return self.ledger.read_only

    @property
    def created_at(self) -> str | None:
        """When the store's identity record was written (RFC 3339 UTC), or None for an older store."""
        if self.marker is None or self.marker.identity_seq is None:
            return None
        record = self.ledger.records_at([self.marker.identity_seq]).get(self.marker.identity_seq)
        return record.time if record is not None else None

    # --- opening --------------------------------------------------------------------------
    @classmethod
    def init(cls, settings: Settings, catalog: RecordCatalog) -> Store:
        """Create the store at the configured location, or re-open it. Idempotent.

        A new store gets its identity record and marker. An existing store is opened as it is:
        ``init`` never replaces a missing or foreign ledger with a new one. ``catalog`` must list
        the identity record type (``store.identity@1``).
        """
        root = settings.store
        if root.exists() and not root.is_dir():
            raise InvalidInputError(f"{root} exists and is not a folder", field="store")
        if settings.cas_url is not None:
            parse_cas_url(settings.cas_url)  # a malformed URL is refused before anything is made
        root.mkdir(parents=True, exist_ok=True)
        with _init_lock(root):
            marker_path = root / _MARKER
            if marker_path.is_symlink() or marker_path.exists():
                _refuse_special(marker_path, "the store marker")
            marker = read_marker(marker_path) if marker_path.exists() else None
            if marker is not None and marker.store_id is not None:
                # An existing store is opened as it is: init never re-creates what was removed.
                existing = open_cas(settings.cas_url, store=root, s3=settings.s3, require_layout=False)
                return cls._open_checked(settings, catalog, existing, marker, read_only=False)
            cas = open_cas(settings.cas_url, store=root, s3=settings.s3, create=True)
            ledger = open_ledger(
                settings.database_url, catalog=catalog, create=marker is None, signer=_signer(settings)
            )
            try:
                marker = _adopt_or_create_identity(ledger, settings)
                write_marker(marker_path, marker)
            except BaseException:
                ledger.close()
                raise
        return cls(cas, ledger, root, marker)

    @classmethod
    def open(
        cls, settings: Settings, catalog: RecordCatalog, *, read_only: bool | None = None, check_identity: bool = True
    ) -> Store:
        """Open an existing store; :class:`StoreNotInitializedError` when there is none.

        Never creates anything. ``read_only=None`` opens read-only when the store folder or its
        ledger file cannot be written (a read-only mount, a copy without write permission).
        A ledger that does not hold the store's identity record is :class:`LedgerMissingError`,
        unless ``check_identity=False`` (``verify`` reports it among everything else).
        """
        _refuse_special(settings.store / _MARKER, "the store marker")
        if not settings.store_exists:
            leftovers = [n for n in _STORE_CONTENTS if (settings.store / n).exists()]
            if leftovers:
                raise IntegrityError(
                    f"the store marker {settings.store / _MARKER} is missing, but the folder holds a store "
                    f"({', '.join(leftovers)}); 'reviewtrail init' restores the marker from the ledger's identity "
                    "record",
                    field="store",
                )
            raise StoreNotInitializedError(
                f"no reviewtrail store at {settings.store}; run 'reviewtrail init' first", field="store"
            )
        marker = read_marker(settings.store / _MARKER)
        if read_only is None:
            read_only = _looks_read_only(settings)
        # Missing layout files are verify's to report (exit 4), not a reason to refuse to open.
        cas = open_cas(
            settings.cas_url, store=settings.store, s3=settings.s3, read_only=read_only, require_layout=False
        )
        return cls._open_checked(settings, catalog, cas, marker, read_only=read_only, check_identity=check_identity)

    @classmethod
    def _open_checked(
        cls,
        settings: Settings,
        catalog: RecordCatalog,
        cas: CasStore,
        marker: StoreMarker,
        *,
        read_only: bool,
        check_identity: bool = True,
    ) -> Store:
        ledger = open_ledger(
            settings.database_url, catalog=catalog, create=False, read_only=read_only, signer=_signer(settings)
        )
        try:
            problems = _identity_check(ledger, marker) if check_identity else []
            if check_identity and not problems and marker.store_id is None and _emptied(ledger, cas):
                problems.append(_emptied_problem(ledger))
            if problems:
                raise LedgerMissingError(problems[0], field="ledger")
        except BaseException:
            ledger.close()
            raise
        return cls(cas, ledger, settings.store, marker)

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------------
    def append(self, records: Iterable[NewRecord]) -> list[Envelope]:
        """Append records after checking that every CAS reference they hold is present and intact."""
        from reviewtrail.cas import refs_in

        batch = list(records)
        for i, record in enumerate(batch):
            for ref in refs_in(record.payload):
                if not self.cas.has(ref):
                    raise InvalidInputError(
                        f"references {ref.digest} ({ref.size} bytes), which is not in the CAS or is corrupt",
                        field=f"records[{i}].payload",
                    )
        return self.ledger.append(batch)

    # --- what verify asks of a store (reviewtrail.verify.verify_store) --------------------
    def identity_problems(self) -> list[str]:
        """What is wrong with the identity record the marker names (or, under an older marker
        naming none, with an identity record the ledger holds anyway)."""
        return _identity_check(self.ledger, self.marker) if self.marker is not None else []

    def emptied_problem(self, objects: int) -> str:
        """An empty ledger beside a CAS holding ``objects`` objects, under a marker naming no identity."""
        return _emptied_problem(self.ledger, objects)

    def refuse_inside(self, path: Path, *, field: str) -> None:
        """:class:`InvalidInputError` naming ``field`` when ``path`` (a file or folder to write)
        is inside the store's folder or its CAS's: objects are copied out of the store, and a
        file put in place there could stand in for an object or a ledger."""
        target = path.resolve()
        for folder in (self.root, self.cas.local_folder()):
            if folder is not None and target.is_relative_to(folder.resolve()):
                raise InvalidInputError(
                    f"{str(path)!r} is inside the store ({folder}): objects are written out of it, never into it",
                    field=field,
                )

    def furniture_problems(self) -> list[str]:
        """The store's own folders and marker, the CAS's and the ledger's guards, as found."""
        problems: list[str] = []
        problems.extend(self.cas.furniture_problems())
        if self.root is not None:
            for name in _STORE_FOLDERS:
                path = self.root / name
                if path.is_symlink() or (path.exists() and not path.is_dir()):
                    problems.append(f"{name} is not a plain folder of the store (a file or a symlink in its place)")
            problem = special_file_problem(self.root / _MARKER)
            if problem is not None:
                problems.append(f"the store marker {_MARKER} {problem}")
        problems.extend(self.ledger.guard_problems())
        return problems


def _signer(settings: Settings) -> FileSigner | None:
    """What signs the records of this process: its signing key's file, read on the first append."""
    if settings.signing_key is None:
        return None
    from reviewtrail.ledger import FileSigner

    return FileSigner(settings.signing_key)


def _emptied(ledger: Ledger, cas: CasStore) -> bool:
    """An empty ledger beside a CAS that holds an object (asked only of a marker naming no
    identity: an older store, or a marker rewritten to look like one)."""
    return ledger.head_seq() == 0 and next(iter(cas.iter_objects()), None) is not None


def _emptied_problem(ledger: Ledger, objects: int | None = None) -> str:
    """An empty ledger beside a CAS that holds objects, under a marker that names no identity."""
    held = f"{objects} object(s)" if objects is not None else "objects"
    return (
        f"{ledger.describe()} is empty but the CAS holds {held}, and the store marker names no identity "
        "record: the ledger may have been emptied and the marker rewritten (an older store that never "
        "recorded anything gets an identity with 'reviewtrail init')"
    )


def _identity_check(ledger: Ledger, marker: StoreMarker) -> list[str]:
    if marker.identity_seq is None:
        # A marker without identity is an older store's only while its ledger holds no identity
        # record: rewriting the marker to {"format": 1} must not switch the checks off.
        found = next(iter(ledger.read(type=IDENTITY_TYPE, limit=1)), None)
        return unnamed_identity_problems(found, ledger.describe())
    record = ledger.records_at([marker.identity_seq]).get(marker.identity_seq)
    return identity_problems(marker, record, ledger.describe())


def _refuse_special(path: Path, what: str) -> None:
    """A store file replaced by a symlink (to a copy outside the store) or by anything but a
    regular file is refused: what the store holds must be the store's own."""
    problem = special_file_problem(path)
    if problem is not None:
        raise IntegrityError(f"{what} {path} {problem}", field="store")


def _adopt_or_create_identity(ledger: Ledger, settings: Settings) -> StoreMarker:
    """The ledger's identity record (a ledger shared by several store folders has one), or a new one."""
    kind, location = ledger_location(settings.database_url, settings.store)
    existing = next(iter(ledger.read(type=IDENTITY_TYPE, limit=1)), None)
    if existing is None:
        import uuid

        from reviewtrail.ledger import NewRecord

        store_id = str(uuid.uuid4())
        [existing] = ledger.append(
            [
                NewRecord(
                    type=IDENTITY_TYPE,
                    actor="reviewtrail",
                    privacy="private",
                    subject=f"store:{store_id}",
                    payload={"storeId": store_id, "ledgerKind": kind},
                )
            ]
        )
    payload = existing.payload_value
    store_id = str(payload["storeId"]) if isinstance(payload, dict) else ""
    return StoreMarker(
        format=MARKER_FORMAT,
        store_id=store_id,
        identity_seq=existing.seq,
        identity_id=existing.id,
        identity_hash=existing.hash,
        ledger_kind=kind,
        ledger_location=location,
    )


@contextlib.contextmanager
def _init_lock(root: Path) -> Iterator[None]:
    with open(root / ".init.lock", "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield


def _looks_read_only(settings: Settings) -> bool:
    if not os.access(settings.store, os.W_OK):
        return True
    path = sqlite_path(settings.database_url)
    if path is not None:
        return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
    return False
