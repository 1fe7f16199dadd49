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

import typing

from reviewtrail import _face

# Every name is loaded on first use, from the module that defines it.
if typing.TYPE_CHECKING:
    from reviewtrail.web._app import create_app as create_app
    from reviewtrail.web._bind import bind_loopback as bind_loopback
    from reviewtrail.web._bind import loopback_host as loopback_host
    from reviewtrail.web._capability import CAPABILITY_FILE_ENV as CAPABILITY_FILE_ENV
    from reviewtrail.web._capability import new_capability as new_capability
    from reviewtrail.web._limits_server import server_limits as server_limits
    from reviewtrail.web._nonces import NONCE_FILE_ENV as NONCE_FILE_ENV
    from reviewtrail.web._proxy import create_proxy_app as create_proxy_app
    from reviewtrail.web._proxy_serve import ProxyListening as ProxyListening
    from reviewtrail.web._proxy_serve import serve_proxy as serve_proxy
    from reviewtrail.web._proxy_settings import ProxySettings as ProxySettings
    from reviewtrail.web._proxy_settings import proxy_settings as proxy_settings
    from reviewtrail.web._serve import Listening as Listening
    from reviewtrail.web._serve import serve as serve
else:
    __getattr__, __dir__ = _face.lazy(__name__)
