"""The read-only stores the inspector's reads use, side by side: a read takes a store no other
read holds (an idle one, or a new one opened read-only), and gives it back when it is done. Each
store is its own connection to the ledger (SQLite in WAL mode, where readers never wait for each
other or for the writer; or PostgreSQL), so no lock is shared by every read. At most ``size``
stores are open; a read beyond that waits for one to be given back.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["READERS", "StorePool"]

#: The most stores (ledger connections) one inspector process opens for its reads.
READERS = 16


class StorePool:
    """Stores opened by ``open_store`` (the inspector opens them read-only), at most ``size`` of
    them, lent one to a read at a time; :meth:`close` closes them."""

    def __init__(self, open_store: Callable[[], Store], size: int = READERS) -> None:
        self._open = open_store
        self._idle: list[Store] = []
        self._slots = threading.BoundedSemaphore(size)
        self._guard = threading.Lock()
        self._closed = False

    @contextlib.contextmanager
    def store(self) -> Iterator[Store]:
        """A store this read alone uses until the block ends."""
        with self._slots:
            with self._guard:
                store = self._idle.pop() if self._idle else None
            if store is None:
                store = self._open()
            try:
                yield store
            finally:
                with self._guard:
                    keep = not self._closed
                    if keep:
                        self._idle.append(store)
                if not keep:
                    store.close()

    def close(self) -> None:
        """Close the idle stores; a store lent out is closed when it is given back."""
        with self._guard:
            self._closed = True
            idle, self._idle = self._idle, []
        for store in idle:
            store.close()
