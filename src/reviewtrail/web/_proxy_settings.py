"""The public proxy's settings, read once from the environment at the edge (docs/human-review.md,
"The public proxy").

- ``REVIEWTRAIL_PROXY_OIDC_ISSUER``: the OIDC provider's issuer URL (https, or http on loopback);
- ``REVIEWTRAIL_PROXY_OIDC_CLIENT_ID``: the proxy's client id at the provider;
- ``REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET`` or ``REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET_FILE``: its
  client secret (optional: a public client);
- ``REVIEWTRAIL_PROXY_ALLOW``: comma-separated subjects or e-mail addresses that may write;
- ``REVIEWTRAIL_PROXY_BASIC_USERS_FILE``: ``name:$argon2id$...`` lines, read-only Basic users;
- ``REVIEWTRAIL_PROXY_SESSION_SECRET_FILE``: the secret that signs cookies and CSRF tokens
  (required; owner-only);
- ``REVIEWTRAIL_PROXY_PUBLIC_URL``: the URL browsers use (default: the address listened on);
  https makes the cookies ``Secure``;
- ``REVIEWTRAIL_PROXY_SESSION_MAX_AGE``: seconds a login lasts however busy (default 28800,
  eight hours);
- ``REVIEWTRAIL_PROXY_SESSION_IDLE``: seconds a login lasts unused (default 1800, half an hour;
  at most the maximum age);
- ``REVIEWTRAIL_PROXY_SESSION_FILE``: the session book, a SQLite file (default
  ``reviewtrail-proxy-sessions.sqlite`` beside the session secret file);
- ``REVIEWTRAIL_REVIEW_CAPABILITY_FILE``: the review capability key; without it the proxy is
  read-only;
- ``REVIEWTRAIL_PROXY_READ_RATE``, ``REVIEWTRAIL_PROXY_READ_BURST``: each session's read limit
  (:mod:`._rate_limit`; defaults 5 a second, 30 at once).

A missing or unreadable setting is a :class:`~reviewtrail.errors.ConfigError` (exit 5) naming
its variable; a malformed value is an :class:`~reviewtrail.errors.InvalidInputError` (exit 2)
naming it.
"""

from __future__ import annotations

import ipaddress
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from reviewtrail.errors import ConfigError, InvalidInputError
from reviewtrail.web._capability import CAPABILITY_FILE_ENV as CAPABILITY_FILE
from reviewtrail.web._proxy_rules import normalize_allow_entry
from reviewtrail.web._proxy_sessions import SESSION_FILE_ENV as SESSION_FILE
from reviewtrail.web._proxy_sessions import SESSION_FILE_NAME
from reviewtrail.web._rate_limit import ReadLimit, read_limit

__all__ = ["BasicUsers", "OidcSettings", "ProxySettings", "inspector_url", "proxy_settings"]

ISSUER = "REVIEWTRAIL_PROXY_OIDC_ISSUER"
CLIENT_ID = "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID"
CLIENT_SECRET = "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET"  # noqa: S105 (a variable name)
CLIENT_SECRET_FILE = "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET_FILE"  # noqa: S105 (a variable name)
ALLOW = "REVIEWTRAIL_PROXY_ALLOW"
BASIC_USERS_FILE = "REVIEWTRAIL_PROXY_BASIC_USERS_FILE"
SESSION_SECRET_FILE = "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE"  # noqa: S105 (a variable name)
PUBLIC_URL = "REVIEWTRAIL_PROXY_PUBLIC_URL"
SESSION_MAX_AGE = "REVIEWTRAIL_PROXY_SESSION_MAX_AGE"
SESSION_IDLE = "REVIEWTRAIL_PROXY_SESSION_IDLE"

DEFAULT_SESSION_MAX_AGE = 8 * 3600
DEFAULT_SESSION_IDLE = 30 * 60
_MAX_SECONDS = 30 * 24 * 3600
MIN_SECRET_BYTES = 32
_USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")

BasicUsers = Mapping[str, str]  # user name -> argon2 hash


@dataclass(frozen=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ProxySettings:
    """Everything the proxy needs, checked."""

    inspector: str  # the inspector's base URL, no path
    session_secret: bytes = field(repr=False)
    oidc: OidcSettings | None = None
    allow: tuple[str, ...] = ()
    basic_users: BasicUsers = field(default_factory=dict, repr=False)
    public_url: str | None = None  # None: the address listened on
    session_max_age: int = DEFAULT_SESSION_MAX_AGE
    capability_file: Path | None = None
    read_limit: ReadLimit = field(default_factory=ReadLimit)  # each session's reads (._rate_limit)
    session_idle: int = DEFAULT_SESSION_IDLE
    session_file: Path | None = None  # None: sessions kept in memory, for this process only


def _given(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name) or ""
    return value.strip() or None


def _http_url(value: str, name: str, *, https_unless_loopback: bool = False, keep_slash: bool = False) -> str:
    """``value`` as an http(s) URL with a host and no query or fragment, without a trailing slash
    (``keep_slash``: exactly as given, as an OIDC issuer is compared)."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.query or parts.fragment:
        raise InvalidInputError(f"{value!r} is not an http(s) URL with a host (and no query)", field=name)
    if https_unless_loopback and parts.scheme != "https" and not _loopback(parts.hostname):
        raise InvalidInputError(f"{value!r} must be https (plain http is accepted on loopback only)", field=name)
    return value if keep_slash else value.rstrip("/")


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def inspector_url(value: str) -> str:
    """The inspector's base URL from ``--inspector``: http(s), a host, no path beyond ``/``
    (exit 2, field ``inspector``)."""
    url = _http_url(value, "inspector")
    if urlsplit(url).path not in {"", "/"}:
        raise InvalidInputError(f"{value!r}: give the inspector's base URL, without a path", field="inspector")
    return url


def _public_url(value: str) -> str:
    url = _http_url(value, PUBLIC_URL)
    if urlsplit(url).path not in {"", "/"}:
        raise InvalidInputError(
            f"{value!r}: the proxy is served at the root of its URL, without a path", field=PUBLIC_URL
        )
    return url


def secret_file(path_text: str, name: str) -> bytes:
    """The bytes of a secret file, stripped: readable by its owner only (exit 5 naming the file
    and its mode otherwise)."""
    path = Path(path_text)
    try:
        info = path.stat()
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", field=name) from exc
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"{path} has mode {mode:04o}: a secret file must be readable by its owner only (chmod 600)", field=name
        )
    return data.strip()


def basic_users(path_text: str) -> dict[str, str]:
    """The users of a Basic users file: ``name:$argon2...`` lines, blank lines and ``#``
    comments skipped. A line of another shape is exit 2 naming the variable and the line."""
    from argon2 import extract_parameters
    from argon2.exceptions import InvalidHashError

    path = Path(path_text)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", field=BASIC_USERS_FILE) from exc
    users: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, hashed = line.partition(":")
        where = f"{path} line {number}"
        if not _USER_NAME.fullmatch(name) or not hashed.startswith("$argon2"):
            raise InvalidInputError(f"{where}: expected name:$argon2id$... (an argon2 hash)", field=BASIC_USERS_FILE)
        try:
            extract_parameters(hashed)
        except InvalidHashError as exc:
            raise InvalidInputError(f"{where}: not an argon2 hash", field=BASIC_USERS_FILE) from exc
        if name in users:
            raise InvalidInputError(f"{where}: user {name!r} is listed twice", field=BASIC_USERS_FILE)
        users[name] = hashed
    return users


def _oidc(env: Mapping[str, str]) -> OidcSettings | None:
    issuer, client_id = _given(env, ISSUER), _given(env, CLIENT_ID)
    if issuer is None and client_id is None:
        return None
    if issuer is None or client_id is None:
        missing = ISSUER if issuer is None else CLIENT_ID
        raise ConfigError(f"not set: OIDC login needs both {ISSUER} and {CLIENT_ID}", field=missing)
    secret, secret_path = _given(env, CLIENT_SECRET), _given(env, CLIENT_SECRET_FILE)
    if secret is not None and secret_path is not None:
        raise ConfigError(f"set {CLIENT_SECRET} or {CLIENT_SECRET_FILE}, not both", field=CLIENT_SECRET)
    if secret_path is not None:
        secret = secret_file(secret_path, CLIENT_SECRET_FILE).decode("utf-8", "replace") or None
    # The issuer is kept exactly as given: OpenID Connect compares it exactly (Auth0's ends in "/").
    return OidcSettings(_http_url(issuer, ISSUER, https_unless_loopback=True, keep_slash=True), client_id, secret)


def proxy_settings(inspector: str, env: Mapping[str, str]) -> ProxySettings:
    """The proxy's settings for ``--inspector`` ``inspector`` from environment-style ``env`` (the
    command line passes the process environment)."""
    base = inspector_url(inspector)
    secret_path = _given(env, SESSION_SECRET_FILE)
    if secret_path is None:
        raise ConfigError(
            f"not set: the proxy signs its cookies and CSRF tokens with a secret "
            f"of at least {MIN_SECRET_BYTES} bytes in an owner-only file (e.g. head -c 48 /dev/urandom | base64)",
            field=SESSION_SECRET_FILE,
        )
    secret = secret_file(secret_path, SESSION_SECRET_FILE)
    if len(secret) < MIN_SECRET_BYTES:
        raise InvalidInputError(
            f"{secret_path} holds {len(secret)} bytes; the session secret needs at least {MIN_SECRET_BYTES}",
            field=SESSION_SECRET_FILE,
        )
    oidc = _oidc(env)
    users_path = _given(env, BASIC_USERS_FILE)
    users = basic_users(users_path) if users_path is not None else {}
    if oidc is None and users_path is None:
        raise ConfigError(
            f"no login configured: set {ISSUER} and {CLIENT_ID} (OIDC), or {BASIC_USERS_FILE} (read-only Basic)",
            field=ISSUER,
        )
    allow = tuple(normalize_allow_entry(e) for e in (env.get(ALLOW) or "").split(",") if e.strip())
    public = _given(env, PUBLIC_URL)
    max_age = _seconds(env, SESSION_MAX_AGE, DEFAULT_SESSION_MAX_AGE, _MAX_SECONDS)
    idle = _seconds(env, SESSION_IDLE, min(DEFAULT_SESSION_IDLE, max_age), max_age)
    capability = _given(env, CAPABILITY_FILE)
    session_file = _given(env, SESSION_FILE)
    return ProxySettings(
        inspector=base,
        session_secret=secret,
        oidc=oidc,
        allow=allow,
        basic_users=users,
        public_url=_public_url(public) if public is not None else None,
        session_max_age=max_age,
        capability_file=Path(capability) if capability is not None else None,
        read_limit=read_limit(env),
        session_idle=idle,
        session_file=Path(session_file) if session_file is not None else Path(secret_path).parent / SESSION_FILE_NAME,
    )


def _seconds(env: Mapping[str, str], name: str, default: int, most: int) -> int:
    """The number of seconds ``name`` gives (60 to ``most``), or ``default`` (exit 2 naming it)."""
    text = _given(env, name)
    if text is None:
        return default
    if not text.isdigit() or not 60 <= int(text) <= most:
        raise InvalidInputError(f"{text!r} is not a number of seconds from 60 to {most}", field=name)
    return int(text)
