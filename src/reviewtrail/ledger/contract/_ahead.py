"""Items of an iterator made by a thread of their own, a few ahead of the loop that reads them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TypeVar

__all__ = ["read_ahead"]

_T = TypeVar("_T")
_END = object()


def read_ahead(items: Iterator[_T], depth: int = 2) -> Iterator[_T]:
    """The items of ``items`` in order, made by a thread of their own at most ``depth`` ahead of
    the reader: what makes them (reading a source, checking it) runs while the reader waits on
    what it does with them (a database's answer). What the maker raises is raised to the reader;
    a reader that stops (or fails) stops the maker before this generator ends."""
    import queue  # what reads ahead (verify, migrate) pays for it; a command reading a few records does not

    made: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(ok: bool, item: object) -> bool:
        while not stop.is_set():
            try:
                made.put((ok, item), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def make() -> None:
        try:
            for item in items:
                if not put(True, item):
                    return
            put(True, _END)
        except BaseException as exc:  # handed to the reader, which raises it
            put(False, exc)

    maker = threading.Thread(target=make, name="read-ahead", daemon=True)
    maker.start()
    try:
        while True:
            ok, item = made.get()
            if not ok:
                assert isinstance(item, BaseException)
                raise item
            if item is _END:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        maker.join()
