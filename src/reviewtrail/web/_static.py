"""The inspector's static files (its style sheet and its one script), answered from memory.

The files are read once, when the app is made, with their content type, length and an ETag
(a digest of the bytes) worked out then; a request for one is answered on the event loop, with
no thread and no file read, so a static file never waits for a worker thread that pages hold
(docs/human-review.md, "The inspector"). ``If-None-Match`` with the file's ETag is answered 304.
Anything else goes on to the app.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.web._guard import ASGIApp, Receive, Scope, Send

__all__ = ["StaticFiles"]

_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@dataclass(frozen=True)
class _File:
    body: bytes
    etag: bytes
    headers: list[tuple[bytes, bytes]]


def _load(path: Path) -> _File:
    body = path.read_bytes()
    etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'.encode()
    kind = _TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), (b"etag", etag)]
    return _File(body, etag, headers)


def _matches(scope: Scope, etag: bytes) -> bool:
    """Whether the request's ``If-None-Match`` names ``etag`` (or is ``*``)."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"if-none-match":
            tags = {tag.strip().removeprefix(b"W/") for tag in value.split(b",")}
            return etag in tags or b"*" in tags
    return False


class StaticFiles:
    """ASGI middleware: GET and HEAD of ``PREFIX/NAME`` for each file directly in ``directory``
    answered from memory; every other request passed to ``app``."""

    def __init__(self, app: ASGIApp, directory: Path, prefix: str = "/static/") -> None:
        self.app = app
        self.files = {prefix + p.name: _load(p) for p in sorted(directory.iterdir()) if p.is_file()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self.files.get(scope["path"]) if scope["type"] == "http" else None
        if found is None or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if _matches(scope, found.etag):
            await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", found.etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": found.headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else found.body})
