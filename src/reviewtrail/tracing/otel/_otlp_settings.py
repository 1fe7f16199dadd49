"""Where and how to send OTLP/HTTP trace exports: the settings object and its loader. Pure.

The loader takes the environment as a mapping (the CLI passes ``os.environ``; nothing here
reads it), so precedence is testable without touching the process environment.

Precedence, highest first (the OpenTelemetry exporter specification's rules):

- endpoint: the ``--endpoint`` option (``/v1/traces`` added when it has no path),
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (used as is), ``OTEL_EXPORTER_OTLP_ENDPOINT``
  (a base URL: ``/v1/traces`` is appended to its path);
- headers: ``--header`` options, over ``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` if set, else
  ``OTEL_EXPORTER_OTLP_HEADERS``; both are W3C-baggage-style lists ``k=v,k2=v2`` whose keys
  and values are percent-decoded;
- timeout: ``--timeout`` (seconds), ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``,
  ``OTEL_EXPORTER_OTLP_TIMEOUT`` (both milliseconds), else 10 s;
- protocol: ``--protocol``, ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, ``OTEL_EXPORTER_OTLP_PROTOCOL``,
  else ``http/protobuf`` (``http/json`` is the JSON encoding; ``grpc`` is not supported);
- compression: ``--compression``, ``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION``,
  ``OTEL_EXPORTER_OTLP_COMPRESSION``, else ``gzip``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast
from urllib.parse import unquote, urlsplit, urlunsplit

from reviewtrail._redact import redact_url
from reviewtrail.errors import ConfigError, InvalidInputError

__all__ = [
    "COMPRESSIONS",
    "PROTOCOLS",
    "RETRY_STATUSES",
    "Compression",
    "OtlpSettings",
    "Protocol",
    "load_settings",
    "parse_header_list",
    "parse_header_options",
    "traces_url",
]

Protocol = Literal["http/protobuf", "http/json"]
Compression = Literal["gzip", "none"]
PathRule = Literal["option", "base", "as-is"]
PROTOCOLS: tuple[Protocol, ...] = ("http/protobuf", "http/json")
COMPRESSIONS: tuple[Compression, ...] = ("gzip", "none")
# Answers worth another attempt: throttled, or a gateway / server briefly unavailable.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class OtlpSettings:
    """One OTLP/HTTP destination. ``url`` is the full traces URL; times are seconds.

    Retries: at most ``max_attempts`` POSTs; the wait before attempt ``n + 1`` is the
    answer's ``Retry-After`` when it gives one, else ``initial_backoff * 2**(n - 1)``, and
    never more than ``max_backoff``.
    """

    url: str
    protocol: Protocol = "http/protobuf"
    compression: Compression = "gzip"
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = _DEFAULT_TIMEOUT
    max_attempts: int = 5
    initial_backoff: float = 1.0
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise InvalidInputError(f"{self.protocol!r} is not one of {', '.join(PROTOCOLS)}", field="protocol")
        if self.compression not in COMPRESSIONS:
            raise InvalidInputError(
                f"{self.compression!r} is not one of {', '.join(COMPRESSIONS)}", field="compression"
            )
        if not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise InvalidInputError(f"{self.timeout!r} is not a positive number of seconds", field="timeout")
        if self.max_attempts < 1:
            raise InvalidInputError("must be at least 1", field="max_attempts")


def traces_url(endpoint: str, *, rule: PathRule = "option", field: str = "endpoint") -> str:
    """The OTLP/HTTP traces URL for ``endpoint``.

    ``rule="option"`` (an ``--endpoint`` option): ``/v1/traces`` when it has no path, else the
    URL as is. ``"base"`` (``OTEL_EXPORTER_OTLP_ENDPOINT``): ``/v1/traces`` is appended to
    whatever path it has. ``"as-is"`` (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``): unchanged.
    """
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"{redact_url(endpoint)!r} is not an http(s):// URL", field=field)
    path = parts.path
    if rule == "base":
        path = path.rstrip("/") + "/v1/traces"
    elif rule == "option" and path in ("", "/"):
        path = "/v1/traces"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _check_header(key: str, value: str, field: str) -> None:
    if _TOKEN.fullmatch(key) is None:
        raise InvalidInputError(f"{key!r} is not an HTTP header name", field=field)
    if any((ord(c) < 32 and c != "\t") or 127 <= ord(c) < 160 for c in value):
        raise InvalidInputError(
            f"the value of header {key!r} contains a line break or another control character", field=field
        )


def parse_header_list(text: str, *, field: str) -> dict[str, str]:
    """``k=v,k2=v2`` (W3C baggage style, as ``OTEL_EXPORTER_OTLP_HEADERS``): keys and values are
    trimmed and percent-decoded; empty members are ignored; a member without ``=`` or with an
    invalid name is an error naming ``field``."""
    headers: dict[str, str] = {}
    for member in text.split(","):
        if not member.strip():
            continue
        raw_key, sep, raw_value = member.partition("=")
        key = unquote(raw_key.strip(), errors="strict")
        value = unquote(raw_value.strip(), errors="strict")
        if not sep:
            raise InvalidInputError(f"{member.strip()!r} is not 'name=value'", field=field)
        _check_header(key, value, field)
        headers[key] = value
    return headers


def parse_header_options(values: Sequence[str]) -> dict[str, str]:
    """``--header NAME=VALUE`` options (taken literally: no percent-decoding)."""
    headers: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        key = key.strip()
        if not sep or _TOKEN.fullmatch(key) is None:
            raise InvalidInputError(f"{key or value!r} is not a header 'NAME=VALUE'", field="header")
        _check_header(key, text, "header")
        headers[key] = text.strip()
    return headers


def _env(env: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    """The first of ``names`` set to a non-blank value in ``env``: (name, value)."""
    for name in names:
        value = env.get(name)
        if value is not None and value.strip():
            return name, value.strip()
    return None


def _timeout(env: Mapping[str, str]) -> float:
    found = _env(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
    if found is None:
        return _DEFAULT_TIMEOUT
    name, value = found
    try:
        ms = float(value)
    except ValueError:
        ms = math.nan
    if not (ms > 0 and math.isfinite(ms)):
        raise ConfigError(f"{value!r} is not a positive number of milliseconds", field=name)
    return ms / 1000


def _choice(env: Mapping[str, str], given: str | None, allowed: Sequence[str], *names: str) -> str:
    if given is not None:
        if given not in allowed:
            raise InvalidInputError(f"{given!r} is not one of {', '.join(allowed)}", field=names[0].lower())
        return given
    found = _env(env, *names)
    if found is None:
        return allowed[0]
    name, value = found
    if value.lower() == "grpc":
        raise ConfigError("OTLP over gRPC is not supported: use http/protobuf or http/json", field=name)
    if value.lower() not in allowed:
        raise ConfigError(f"{value!r} is not one of {', '.join(allowed)}", field=name)
    return value.lower()


def load_settings(
    env: Mapping[str, str],
    *,
    endpoint: str | None = None,
    headers: Sequence[str] = (),
    timeout: float | None = None,
    protocol: str | None = None,
    compression: str | None = None,
) -> OtlpSettings | None:
    """The settings from options (given) over ``env``; ``None`` when neither names an endpoint."""
    if endpoint is not None:
        url = traces_url(endpoint)
    elif (found := _env(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) is not None:
        url = _env_url(found, rule="as-is")
    elif (found := _env(env, "OTEL_EXPORTER_OTLP_ENDPOINT")) is not None:
        url = _env_url(found, rule="base")
    else:
        return None
    sent: dict[str, str] = {}
    found = _env(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
    if found is not None:
        try:
            sent.update(parse_header_list(found[1], field=found[0]))
        except InvalidInputError as exc:
            raise ConfigError(_problem(exc), field=found[0]) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError("a percent-encoded name or value is not UTF-8", field=found[0]) from exc
    sent.update(parse_header_options(headers))
    return OtlpSettings(
        url=url,
        protocol=cast(
            Protocol,
            _choice(env, protocol, PROTOCOLS, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"),
        ),
        compression=cast(
            Compression,
            _choice(
                env,
                compression,
                COMPRESSIONS,
                "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                "OTEL_EXPORTER_OTLP_COMPRESSION",
            ),
        ),
        headers=sent,
        timeout=timeout if timeout is not None else _timeout(env),
    )


def _env_url(found: tuple[str, str], *, rule: PathRule) -> str:
    name, value = found
    try:
        return traces_url(value, rule=rule, field=name)
    except InvalidInputError as exc:
        raise ConfigError(_problem(exc), field=name) from exc


def _problem(exc: InvalidInputError) -> str:
    """The error's message without its ``field: `` prefix."""
    text = str(exc)
    return text[len(exc.field) + 2 :] if exc.field and text.startswith(f"{exc.field}: ") else text
