"""Starting a server: its store opened in the mode its options allow, then the server built.

A server started without ``allow_writes`` opens the store read-only (the second lock behind the
writes gate of :mod:`._toolbox`): even a tool that slipped past the gate could not append.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewtrail.agents._options import ServerOptions
from reviewtrail.config import Settings

if TYPE_CHECKING:
    from reviewtrail.agents._server import Built
    from reviewtrail.store import Store

__all__ = ["open_server_store", "serving"]


def open_server_store(settings: Settings, options: ServerOptions) -> Store:
    """The store a server with ``options`` works on: read-only unless writes are allowed (then
    as configured)."""
    from reviewtrail.app import open_store

    return open_store(settings, read_only=True if not options.allow_writes else None)


@contextlib.contextmanager
def serving(settings: Settings, options: ServerOptions) -> Iterator[Built]:
    """The server over its store, both closed on exit (the server's kernels first)."""
    from reviewtrail.agents._server import build_server

    with open_server_store(settings, options) as store:
        built = build_server(store, settings, options)
        try:
            yield built
        finally:
            built.close()
