"""The inspector: server-rendered pages over a store, read-only, on loopback only
(docs/human-review.md, "The inspector").

It reads through the library calls the command line uses (``list_campaigns``, ``review_queue``,
``history``) on a store opened read-only, and never opens a path into the store of its own.
Importing this package loads nothing heavy; the web framework is loaded by :func:`create_app`
and :func:`serve`.

Public API::

    from reviewtrail.web import create_app, loopback_host, new_capability, serve
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from reviewtrail.web._app import create_app
    from reviewtrail.web._bind import bind_loopback, loopback_host
    from reviewtrail.web._capability import new_capability
    from reviewtrail.web._serve import Listening, serve

__all__ = ["Listening", "bind_loopback", "create_app", "loopback_host", "new_capability", "serve"]

# Every name is loaded on first use, from the module that defines it.
_LAZY = {
    "create_app": "_app",
    "bind_loopback": "_bind",
    "loopback_host": "_bind",
    "new_capability": "_capability",
    "Listening": "_serve",
    "serve": "_serve",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reviewtrail.web' has no attribute {name!r}")
    return getattr(importlib.import_module(f"reviewtrail.web.{module}"), name)
