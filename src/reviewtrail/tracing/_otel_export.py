"""Sending OTLP/JSON trace exports: to a file (atomically) or to an OTLP/HTTP endpoint."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from reviewtrail._redact import redact_url
from reviewtrail.errors import BackendUnavailableError, InvalidInputError
from reviewtrail.tracing._otel import encode, otlp_json, span_count, trace_id
from reviewtrail.tracing._reader import TraceRun

__all__ = ["OtlpExport", "export_to_endpoint", "export_to_file", "traces_url"]


@dataclass(frozen=True)
class OtlpExport:
    """What an export sent: where, how many runs and spans, and what the receiver rejected."""

    destination: str
    runs: int
    spans: int
    trace_ids: list[str] = field(default_factory=list)
    rejected_spans: int = 0
    warning: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "destination": self.destination,
            "runs": self.runs,
            "spans": self.spans,
            "trace_ids": list(self.trace_ids),
            "rejected_spans": self.rejected_spans,
            "warning": self.warning,
        }


def export_to_file(runs: Iterable[TraceRun], path: str | Path) -> OtlpExport:
    """Write the OTLP/JSON document to ``path`` atomically (temp file in the same folder, then ``os.replace``)."""
    runs = list(runs)
    doc = otlp_json(runs)
    target = Path(path)
    data = encode(doc, indent=2)
    if target.is_dir():
        raise InvalidInputError(f"cannot write {target}: it is a folder", field="output")
    # A replaced file keeps its permissions; a new one is rw-r--r--.
    mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}", field="output") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return OtlpExport(str(target), len(runs), span_count(doc), [trace_id(r) for r in runs])


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL: ``<endpoint>/v1/traces`` when ``endpoint`` has no path, else ``endpoint`` as is."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"{redact_url(endpoint)!r} is not an http(s):// URL", field="endpoint")
    path = parts.path if parts.path not in ("", "/") else "/v1/traces"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _partial_success(body: bytes) -> tuple[int, str | None]:
    try:
        doc = json.loads(body) if body.strip() else {}
    except ValueError:
        return 0, None
    partial = doc.get("partialSuccess") if isinstance(doc, dict) else None
    if not isinstance(partial, dict):
        return 0, None
    try:
        rejected = int(partial.get("rejectedSpans") or 0)
    except (TypeError, ValueError):
        rejected = 0
    raw = partial.get("errorMessage")
    message = raw.strip() or None if isinstance(raw, str) else None
    return rejected, message


def export_to_endpoint(
    runs: Iterable[TraceRun],
    endpoint: str,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10,
) -> OtlpExport:
    """POST the OTLP/JSON document to an OTLP/HTTP collector.

    ``endpoint`` without a path gets ``/v1/traces``. A connection failure, a timeout or a
    non-2xx answer raises :class:`BackendUnavailableError` (exit code 5). A 2xx answer with
    an OTLP ``partialSuccess`` is returned with ``rejected_spans`` and ``warning`` set.
    """
    import httpx

    url = traces_url(endpoint)
    shown = redact_url(url)
    runs = list(runs)
    doc = otlp_json(runs)
    sent = dict(headers or {})
    sent = {k: v for k, v in sent.items() if k.lower() != "content-type"}
    sent["Content-Type"] = "application/json"
    try:
        response = httpx.post(url, content=encode(doc), headers=sent, timeout=timeout)
    except httpx.HTTPError as exc:
        raise BackendUnavailableError(
            f"cannot reach the OTLP endpoint {shown}: {type(exc).__name__}: {exc}", field="endpoint"
        ) from exc
    except ValueError as exc:  # malformed header names or values
        raise InvalidInputError(f"cannot send to {shown}: {exc}", field="header") from exc
    if not 200 <= response.status_code < 300:
        detail = response.text.strip().replace("\n", " ")[:200]
        raise BackendUnavailableError(
            f"the OTLP endpoint {shown} answered HTTP {response.status_code}" + (f": {detail}" if detail else ""),
            field="endpoint",
        )
    rejected, message = _partial_success(response.content)
    warning = None
    if rejected or message:
        warning = f"the endpoint rejected {rejected} span(s)" + (f": {message}" if message else "")
    return OtlpExport(shown, len(runs), span_count(doc), [trace_id(r) for r in runs], rejected, warning)
