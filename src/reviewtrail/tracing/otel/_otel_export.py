"""Sending trace exports: OTLP/JSON to a file (atomically), or OTLP/HTTP to a collector.

Over HTTP the body is protobuf (``application/x-protobuf``) unless the settings ask for
``http/json``, gzip-compressed unless they ask for none. Answers 429, 502, 503 and 504 are
retried (at most ``max_attempts`` POSTs), waiting what ``Retry-After`` says or an exponential
backoff, each wait capped at ``max_backoff``. Any other non-2xx answer, a connection failure
or a timeout fails at once.
"""

from __future__ import annotations

import errno
import gzip
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewtrail._durable import replace_file
from reviewtrail._redact import redact_url
from reviewtrail._retry_after import parse_retry_after
from reviewtrail.errors import BackendUnavailableError, InvalidInputError
from reviewtrail.ledger import LedgerHead
from reviewtrail.tracing.files._reader import TraceRun
from reviewtrail.tracing.otel._otel import FactsKey, encode, otlp_json, span_count, trace_id
from reviewtrail.tracing.otel._otel_attrs import CallFacts
from reviewtrail.tracing.otel._otlp_proto import partial_success, to_protobuf
from reviewtrail.tracing.otel._otlp_settings import RETRY_STATUSES, OtlpSettings

__all__ = ["OtlpExport", "export_to_endpoint", "export_to_file", "request_body", "retry_delay"]


@dataclass(frozen=True)
class OtlpExport:
    """What an export sent: where, how many runs and spans, and what the receiver rejected."""

    destination: str
    runs: int
    spans: int
    trace_ids: list[str] = field(default_factory=list)
    rejected_spans: int = 0
    warning: str | None = None
    protocol: str = "json-file"
    attempts: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "destination": self.destination,
            "runs": self.runs,
            "spans": self.spans,
            "trace_ids": list(self.trace_ids),
            "rejected_spans": self.rejected_spans,
            "warning": self.warning,
            "protocol": self.protocol,
            "attempts": self.attempts,
        }


def export_to_file(
    runs: Iterable[TraceRun],
    path: str | Path,
    *,
    facts: Mapping[FactsKey, CallFacts] | None = None,
    content: bool = False,
    ledger_head: LedgerHead | None = None,
) -> OtlpExport:
    """Write the OTLP/JSON document to ``path`` atomically (temp file in the same folder, then ``os.replace``)."""
    runs = list(runs)
    doc = otlp_json(runs, facts=facts, content=content, ledger_head=ledger_head)
    target = Path(path)
    data = encode(doc, indent=2)
    if target.is_dir():
        raise InvalidInputError(f"cannot write {target}: it is a folder", field="output")
    # A replaced file keeps its permissions; a new one is rw-r--r--.
    mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
    try:
        replace_file(target, data, mode=mode)
    except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}", field="output") from exc
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}", field="output") from exc
    return OtlpExport(str(target), len(runs), span_count(doc), [trace_id(r) for r in runs])


def request_body(doc: Mapping[str, Any], settings: OtlpSettings) -> tuple[bytes, dict[str, str]]:
    """The POST body for ``doc`` and its content headers, as ``settings`` ask (protocol, compression)."""
    if settings.protocol == "http/json":
        data, media = encode(doc), "application/json"
    else:
        data, media = to_protobuf(doc).SerializeToString(), "application/x-protobuf"
    headers = {"Content-Type": media}
    if settings.compression == "gzip":
        data = gzip.compress(data, mtime=0)
        headers["Content-Encoding"] = "gzip"
    return data, headers


def retry_delay(attempt: int, retry_after: str | None, settings: OtlpSettings, *, now: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): ``Retry-After`` (seconds or an
    HTTP date, relative to ``now``, a Unix time) when it is readable, else exponential backoff;
    never negative, never above ``settings.max_backoff``."""
    wait = None if retry_after is None else parse_retry_after(retry_after, now=datetime.fromtimestamp(now, UTC))
    if wait is None:
        wait = settings.initial_backoff * 2 ** (attempt - 1)
    return min(max(wait, 0.0), settings.max_backoff)


def export_to_endpoint(
    runs: Iterable[TraceRun],
    settings: OtlpSettings,
    *,
    facts: Mapping[FactsKey, CallFacts] | None = None,
    content: bool = False,
    ledger_head: LedgerHead | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> OtlpExport:
    """POST the runs' spans to the OTLP/HTTP collector of ``settings``.

    A connection failure, a timeout, a non-2xx answer, or a retryable answer on the last
    attempt raises :class:`BackendUnavailableError` (exit code 5). A 2xx answer with an OTLP
    ``partial_success`` is returned with ``rejected_spans`` and ``warning`` set.
    """
    import httpx

    shown = redact_url(settings.url)
    runs = list(runs)
    doc = otlp_json(runs, facts=facts, content=content, ledger_head=ledger_head)
    body, content_headers = request_body(doc, settings)
    reserved = {k.lower() for k in content_headers} | {"content-length"}
    # Values go as UTF-8 bytes: a percent-decoded value may hold any character.
    sent = {k.encode("ascii"): v.encode("utf-8") for k, v in settings.headers.items() if k.lower() not in reserved}
    sent.update((k.encode("ascii"), v.encode("ascii")) for k, v in content_headers.items())
    attempt = 0
    while True:
        attempt += 1
        try:
            response = httpx.post(settings.url, content=body, headers=sent, timeout=settings.timeout)
        except httpx.HTTPError as exc:
            raise BackendUnavailableError(
                f"cannot reach the OTLP endpoint {shown}: {type(exc).__name__}: {exc}", field="endpoint"
            ) from exc
        except ValueError as exc:  # malformed header names or values
            raise InvalidInputError(f"cannot send to {shown}: {exc}", field="header") from exc
        if response.status_code in RETRY_STATUSES and attempt < settings.max_attempts:
            sleep(retry_delay(attempt, response.headers.get("Retry-After"), settings, now=time.time()))
            continue
        break
    if not 200 <= response.status_code < 300:
        detail = response.text.strip().replace("\n", " ")[:200]
        tries = f" (after {attempt} attempts)" if attempt > 1 else ""
        raise BackendUnavailableError(
            f"the OTLP endpoint {shown} answered HTTP {response.status_code}{tries}"
            + (f": {detail}" if detail else ""),
            field="endpoint",
        )
    rejected, message = partial_success(response.content, response.headers.get("Content-Type", ""))
    warning = None
    if rejected or message:
        warning = f"the endpoint rejected {rejected} span(s)" + (f": {message}" if message else "")
    return OtlpExport(
        shown,
        len(runs),
        span_count(doc),
        [trace_id(r) for r in runs],
        rejected,
        warning,
        protocol=settings.protocol,
        attempts=attempt,
    )
