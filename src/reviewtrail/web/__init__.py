"""The inspector: server-rendered pages over a store, read-only, on loopback only
(docs/human-review.md, "The inspector").

It reads through the library calls the command line uses (``list_campaigns``, ``review_queue``,
``history``) on a store opened read-only, and never opens a path into the store of its own.
The public proxy in front of it (docs/human-review.md, "The public proxy"):
:func:`proxy_settings`, :func:`create_proxy_app`, :func:`serve_proxy`. Importing this package
loads nothing heavy; the web framework is loaded by :func:`create_app`, :func:`serve` and the
proxy's functions.

Public API::

    from reviewtrail.web import create_app, loopback_host, new_capability, serve, server_limits
    from reviewtrail.web import ProxyListening, ProxySettings, create_proxy_app, proxy_settings, serve_proxy
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from reviewtrail.web._app import create_app
    from reviewtrail.web._bind import bind_loopback, loopback_host
    from reviewtrail.web._capability import CAPABILITY_FILE_ENV, new_capability
    from reviewtrail.web._limits_server import server_limits
    from reviewtrail.web._nonces import NONCE_FILE_ENV
    from reviewtrail.web._proxy import create_proxy_app
    from reviewtrail.web._proxy_serve import ProxyListening, serve_proxy
    from reviewtrail.web._proxy_settings import ProxySettings, proxy_settings
    from reviewtrail.web._serve import Listening, serve

__all__ = [
    "CAPABILITY_FILE_ENV",
    "NONCE_FILE_ENV",
    "Listening",
    "ProxyListening",
    "ProxySettings",
    "bind_loopback",
    "create_app",
    "create_proxy_app",
    "loopback_host",
    "new_capability",
    "proxy_settings",
    "serve",
    "serve_proxy",
    "server_limits",
]

# Every name is loaded on first use, from the module that defines it.
_LAZY = {
    "create_app": "_app",
    "bind_loopback": "_bind",
    "loopback_host": "_bind",
    "new_capability": "_capability",
    "CAPABILITY_FILE_ENV": "_capability",
    "NONCE_FILE_ENV": "_nonces",
    "server_limits": "_limits_server",
    "create_proxy_app": "_proxy",
    "ProxyListening": "_proxy_serve",
    "serve_proxy": "_proxy_serve",
    "ProxySettings": "_proxy_settings",
    "proxy_settings": "_proxy_settings",
    "Listening": "_serve",
    "serve": "_serve",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reviewtrail.web' has no attribute {name!r}")
    return getattr(importlib.import_module(f"reviewtrail.web.{module}"), name)
