"""Keeping secrets out of messages: URLs lose their password and query string."""

from __future__ import annotations

__all__ = ["redact_text", "redact_url"]


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` and any query string replaced by ``?***``.

    Works on the raw text, so malformed URLs (the ones that end up in error messages) and
    passwords holding ``?``, ``/`` or ``@`` are covered: everything between ``://`` and the last
    ``@`` is credentials.
    """
    head, sep, rest = url.partition("://")
    if not sep:
        return url
    creds, at, location = rest.rpartition("@")
    if at:
        user, colon, _password = creds.partition(":")
        rest = f"{user}:***@{location}" if colon else f"{creds}@{location}"
    else:
        location = rest
    before_query, qmark, _query = rest.partition("?")
    return f"{head}://{before_query}{'?***' if qmark else ''}"


def redact_text(text: str, url: str) -> str:
    """``text`` with the URL (and its password, wherever it appears alone) redacted."""
    out = text.replace(url, redact_url(url))
    creds = url.partition("://")[2].rpartition("@")[0]
    password = creds.split(":", 1)[1] if ":" in creds else None
    if password:
        out = out.replace(password, "***")
    return out
