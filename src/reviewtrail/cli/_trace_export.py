"""``reviewtrail trace export-otel``: trace runs as OpenTelemetry spans (OTLP/HTTP or an OTLP/JSON file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from reviewtrail.tracing._otel import CallFacts, FactsKey
    from reviewtrail.tracing._otel_export import OtlpExport
    from reviewtrail.tracing._reader import TraceRun

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


def register(app: typer.Typer) -> None:
    """Add the ``export-otel`` command to ``app`` (the ``trace`` group)."""
    app.command("export-otel")(export_otel)


@handle_errors
def export_otel(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Runs to export: '<skill>/<run id>', a run id, or a run folder. None: every run.",
            show_default=False,
        ),
    ] = None,
    skill: Annotated[str | None, typer.Option("--skill", help="Only runs of this skill.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the OTLP/JSON document to this file.")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="POST to this OTLP/HTTP collector ('/v1/traces' is added when it has no path). Default: "
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + '/v1/traces'.",
            show_default=False,
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            "-H",
            help="HTTP header 'K=V' for the endpoint (repeatable; over OTEL_EXPORTER_OTLP_[TRACES_]HEADERS).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds to wait for each POST. Default: OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT (ms), else 10.",
            show_default=False,
        ),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol",
            help="'http/protobuf' or 'http/json'. Default: OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, else http/protobuf.",
            show_default=False,
        ),
    ] = None,
    compression: Annotated[
        str | None,
        typer.Option(
            "--compression",
            help="'gzip' or 'none'. Default: OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION, else gzip.",
            show_default=False,
        ),
    ] = None,
    capture_content: Annotated[
        bool,
        typer.Option(
            "--capture-content",
            help="Also export the prompt and response text (gen_ai.input.messages / gen_ai.output.messages).",
        ),
    ] = False,
    ledger: Annotated[
        bool,
        typer.Option(
            "--ledger/--no-ledger",
            help="Take reviewer-specialist call times, endpoint host and usage from the store's prompt manifests.",
        ),
    ] = True,
    project_dir: Annotated[
        Path | None, typer.Option("--project-dir", help="Project root (default: the git top level, else cwd).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export trace runs as OpenTelemetry GenAI spans: one trace per run, one CLIENT span per finished call.

    Sent as OTLP/HTTP protobuf, gzip-compressed, with retries on 429/502/503/504; or written
    as an OTLP/JSON file. Prompts and responses are not exported, only their SHA-256 and
    size, unless --capture-content. A call still being written (no meta file yet) gets no
    span; the run's root span lists it. A failed call, and its run's root span, have
    status ERROR.

    Example: reviewtrail trace export-otel auto-review-loop/2026-04-15_run01 --endpoint http://localhost:4318
    """
    import os

    from reviewtrail.errors import InvalidInputError, NotFoundError
    from reviewtrail.tracing import existing_project_root
    from reviewtrail.tracing._layout import traces_root
    from reviewtrail.tracing._otel_export import export_to_endpoint, export_to_file
    from reviewtrail.tracing._otlp_settings import load_settings

    if output is not None and endpoint is not None:
        raise InvalidInputError("give exactly one of --output FILE or --endpoint URL", field="output")
    if output is not None:
        for name, given in (
            ("header", header),
            ("timeout", timeout),
            ("protocol", protocol),
            ("compression", compression),
        ):
            if given:
                raise InvalidInputError(f"--{name} only applies to an endpoint, not to --output", field=name)
        settings = None
    else:
        settings = load_settings(
            os.environ,
            endpoint=endpoint,
            headers=header or [],
            timeout=timeout,
            protocol=protocol,
            compression=compression,
        )
        if settings is None:
            raise InvalidInputError(
                "give exactly one of --output FILE or --endpoint URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)",
                field="output",
            )
    project = existing_project_root(project_dir)
    selected = _select_runs(project, runs or [], skill)
    if not selected:
        where = f"{traces_root(project)}" + (f" for skill {skill!r}" if skill else "")
        raise NotFoundError(f"no trace runs under {where}", field="run")
    facts, note = _ledger_facts(selected) if ledger else ({}, None)
    result: OtlpExport
    if settings is not None:
        result = export_to_endpoint(selected, settings, facts=facts, content=capture_content)
    elif output is not None:
        result = export_to_file(selected, output, facts=facts, content=capture_content)
    if as_json:
        print_json(result.to_json())
    else:
        print(f"exported {result.spans} span(s) from {result.runs} run(s) to {result.destination}")
    import sys

    for warning in (note, result.warning):
        if warning:
            sys.stderr.write(f"warning: {warning}\n")


def _ledger_facts(runs: list[TraceRun]) -> tuple[dict[FactsKey, CallFacts], str | None]:
    """Ledger facts for the reviewer-specialist runs among ``runs``, from the configured store.

    No such run: nothing is opened. A store that cannot be opened is a warning, not an error:
    the spans then keep the trace files' times.
    """
    from reviewtrail.errors import ReviewtrailError
    from reviewtrail.tracing._otel_records import SPECIALIST_SKILL, ledger_facts

    if not any(run.skill == SPECIALIST_SKILL for run in runs):
        return {}, None
    from reviewtrail.app import open_store

    try:
        with open_store(read_only=True) as store:
            return ledger_facts(store.ledger, runs), None
    except ReviewtrailError as exc:
        return {}, f"reviewer-specialist calls keep their trace times: the store cannot be read ({exc})"


def _select_runs(project: Path, refs: list[str], skill: str | None) -> list[TraceRun]:
    """Every run (of ``skill``) without refs; else each ref once, in the order given."""
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.tracing._reader import find_run, iter_runs

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
