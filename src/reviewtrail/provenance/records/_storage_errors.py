"""Operating-system failures of the store's disk, as documented reviewtrail errors.

A full disk (or quota) while writing a workspace or a CAS object is not a bug in
reviewtrail: it becomes :class:`StorageFullError` (a BackendUnavailableError, exit 5) with a message that
says what was being done and that nothing was recorded.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewtrail.errors import ReadOnlyStoreError, StorageFullError

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["DISK_FULL", "disk_full_errors", "refuse_read_only"]

DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


@contextlib.contextmanager
def disk_full_errors(
    doing: str, *, field: str = "store", after: str = "; nothing was recorded; free some space and try again"
) -> Iterator[None]:
    """Turn "no space left on device" (or "disk quota exceeded") raised inside into StorageFullError;
    ``after`` says what that left behind and what to do."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        raise StorageFullError(
            f"no space left on the device while {doing}{where}: {exc.strerror or exc}{after}",
            field=field,
        ) from exc


def refuse_read_only(store: Store, doing: str) -> None:
    """Raise :class:`ReadOnlyStoreError` (exit 5) before ``doing`` writes anything when ``store``
    was opened read-only (a read-only mount, or no write access to its folder or ledger)."""
    if store.read_only:
        raise ReadOnlyStoreError(
            f"the store is read-only (no write access to its ledger): {doing} writes nothing", field="store"
        )
