"""``trace export-otel`` as a request: destination and OTLP options checked, runs chosen, exported.

:func:`otel_export_request` checks the options (exactly one of a file and an endpoint; HTTP
options only with an endpoint; the ``OTEL_EXPORTER_OTLP_*`` variables of ``env`` under the
options) before anything is read. :func:`select_runs` picks the runs named, and
:func:`export_trace_runs` exports them, with the facts of the calls that have a prompt manifest
(reviewer-specialist calls, calls recorded by an instrumented SDK client) from the store the
caller's ``open_store`` opens (a store that cannot be read is a warning, not an error), read in
one snapshot of its ledger together with the head, which the export then names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewtrail.errors import InvalidInputError, NotFoundError, ReviewtrailError
from reviewtrail.ledger import LedgerHead, ledger_head
from reviewtrail.store import Store
from reviewtrail.tracing.files._layout import existing_project_root, traces_root
from reviewtrail.tracing.files._reader import TraceRun, find_run, iter_runs
from reviewtrail.tracing.otel._otel import FactsKey
from reviewtrail.tracing.otel._otel_attrs import CallFacts
from reviewtrail.tracing.otel._otel_export import OtlpExport, export_to_endpoint, export_to_file
from reviewtrail.tracing.otel._otel_records import ledger_facts, wants_ledger
from reviewtrail.tracing.otel._otlp_settings import OtlpSettings, load_settings

__all__ = ["OtelExportOutcome", "OtelExportRequest", "export_trace_runs", "otel_export_request", "select_runs"]

_NO_DESTINATION = "give exactly one of --output FILE or --endpoint URL"


@dataclass(frozen=True)
class OtelExportRequest:
    """Which runs (``refs``, of ``skill``; none: every run), where to (``output`` file or the
    endpoint of ``settings``) and what (prompt and response text with ``capture_content``;
    call facts from the store with ``ledger``)."""

    refs: tuple[str, ...] = ()
    skill: str | None = None
    output: Path | None = None
    settings: OtlpSettings | None = None
    capture_content: bool = False
    ledger: bool = True
    project_dir: Path | None = None


def otel_export_request(
    env: Mapping[str, str],
    *,
    runs: Sequence[str] = (),
    skill: str | None = None,
    output: Path | None = None,
    endpoint: str | None = None,
    headers: Sequence[str] = (),
    timeout: float | None = None,
    protocol: str | None = None,
    compression: str | None = None,
    capture_content: bool = False,
    ledger: bool = True,
    project_dir: Path | None = None,
) -> OtelExportRequest:
    """The checked request; each problem names its option (``InvalidInputError``)."""
    if output is not None and endpoint is not None:
        raise InvalidInputError(_NO_DESTINATION, field="output")
    settings = None
    if output is not None:
        given = {"header": headers, "timeout": timeout, "protocol": protocol, "compression": compression}
        for name, value in given.items():
            if value:
                raise InvalidInputError(f"--{name} only applies to an endpoint, not to --output", field=name)
    else:
        settings = load_settings(
            env, endpoint=endpoint, headers=headers, timeout=timeout, protocol=protocol, compression=compression
        )
        if settings is None:
            raise InvalidInputError(f"{_NO_DESTINATION} (or set OTEL_EXPORTER_OTLP_ENDPOINT)", field="output")
    return OtelExportRequest(tuple(runs), skill, output, settings, capture_content, ledger, project_dir)


def select_runs(project: Path, refs: Sequence[str], skill: str | None) -> list[TraceRun]:
    """Every run (of ``skill``) without refs; else each ref once, in the order given. A bare run
    id is looked up under ``skill`` when one is given; a run of another skill is refused."""
    if not refs:
        return list(iter_runs(project, skill))
    chosen: dict[Path, TraceRun] = {}
    for ref in refs:
        qualified = f"{skill}/{ref}" if skill and "/" not in ref and not Path(ref).is_dir() else ref
        run = find_run(project, qualified)
        if skill and run.skill != skill:
            raise InvalidInputError(f"run {run.key} is not a run of skill {skill!r}", field="run")
        chosen.setdefault(run.path.resolve(), run)
    return list(chosen.values())


@dataclass(frozen=True)
class OtelExportOutcome:
    """What was exported, and the warnings to show (store unreadable, spans rejected)."""

    export: OtlpExport
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _LedgerRead:
    """What the export read from the ledger: call facts, the head they were read at (None: the
    ledger was not read), and why not when it could not be."""

    facts: dict[FactsKey, CallFacts] = field(default_factory=dict)
    head: LedgerHead | None = None
    note: str | None = None


def _ledger_facts(runs: list[TraceRun], open_store: Callable[[], Store]) -> _LedgerRead:
    """Facts for the calls of ``runs`` that have a prompt manifest (reviewer-specialist calls, and
    calls that name theirs), and the ledger head, read in one snapshot (the head first); no such
    call: nothing is opened."""
    if not wants_ledger(runs):
        return _LedgerRead()
    try:
        with open_store() as store, store.ledger.snapshot():
            head = ledger_head(store.ledger)
            return _LedgerRead(ledger_facts(store.ledger, runs), head)
    except ReviewtrailError as exc:
        return _LedgerRead(
            note=f"reviewer-specialist and recorded SDK calls keep their trace times: the store cannot be read ({exc})"
        )


def export_trace_runs(request: OtelExportRequest, *, open_store: Callable[[], Store]) -> OtelExportOutcome:
    """Export the request's runs of the project (an explicit project folder must exist);
    ``NotFoundError`` when there are none."""
    project = existing_project_root(request.project_dir)
    selected = select_runs(project, request.refs, request.skill)
    if not selected:
        where = f"{traces_root(project)}" + (f" for skill {request.skill!r}" if request.skill else "")
        raise NotFoundError(f"no trace runs under {where}", field="run")
    read = _ledger_facts(selected, open_store) if request.ledger else _LedgerRead()
    content = request.capture_content
    if request.settings is not None:
        result = export_to_endpoint(
            selected, request.settings, facts=read.facts, content=content, ledger_head=read.head
        )
    else:
        assert request.output is not None
        result = export_to_file(selected, request.output, facts=read.facts, content=content, ledger_head=read.head)
    return OtelExportOutcome(result, [w for w in (read.note, result.warning) if w])
