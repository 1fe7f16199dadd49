"""``reviewtrail trace export-otel``: trace runs as OpenTelemetry (OTLP/JSON) spans."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
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
            "--endpoint", help="POST to this OTLP/HTTP collector ('/v1/traces' is added when it has no path)."
        ),
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", "-H", help="HTTP header 'K=V' for --endpoint (repeatable).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds to wait for the endpoint.")] = 10.0,
    project_dir: Annotated[
        Path | None, typer.Option("--project-dir", help="Project root (default: the git top level, else cwd).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export trace runs as OpenTelemetry GenAI spans: one trace per run, one CLIENT span per finished call.

    Prompts and responses are never exported, only their SHA-256 and size. A call still
    being written (no meta file yet) gets no span; the run's root span lists it.

    Example: reviewtrail trace export-otel auto-review-loop/2026-04-15_run01 --endpoint http://localhost:4318
    """
    from reviewtrail.errors import InvalidInputError, NotFoundError
    from reviewtrail.tracing import existing_project_root
    from reviewtrail.tracing._layout import traces_root
    from reviewtrail.tracing._otel_export import export_to_endpoint, export_to_file

    if (output is None) == (endpoint is None):
        raise InvalidInputError("give exactly one of --output FILE or --endpoint URL", field="output")
    if header and endpoint is None:
        raise InvalidInputError("--header only applies to --endpoint", field="header")
    headers = _parse_headers(header or [])
    project = existing_project_root(project_dir)
    selected = _select_runs(project, runs or [], skill)
    if not selected:
        where = f"{traces_root(project)}" + (f" for skill {skill!r}" if skill else "")
        raise NotFoundError(f"no trace runs under {where}", field="run")
    result: OtlpExport
    if endpoint is not None:
        result = export_to_endpoint(selected, endpoint, headers=headers, timeout=timeout)
    elif output is not None:
        result = export_to_file(selected, output)
    if as_json:
        print_json(result.to_json())
    else:
        print(f"exported {result.spans} span(s) from {result.runs} run(s) to {result.destination}")
    if result.warning:
        import sys

        sys.stderr.write(f"warning: {result.warning}\n")


def _parse_headers(values: list[str]) -> dict[str, str]:
    import re

    from reviewtrail.errors import InvalidInputError

    token = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
    headers: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        key = key.strip()
        if not sep or token.fullmatch(key) is None:
            raise InvalidInputError(f"{key or value!r} is not a header 'NAME=VALUE'", field="header")
        if any(c in text for c in "\r\n\0"):
            raise InvalidInputError(f"the value of header {key!r} contains a line break", field="header")
        headers[key] = text.strip()
    return headers


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
