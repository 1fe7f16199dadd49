"""``reviewtrail trace export-otel``: trace runs as OpenTelemetry spans (OTLP/HTTP or an OTLP/JSON file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

__all__ = ["export_otel", "register"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
RunsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Runs to export: '<skill>/<run id>', a run id, or a run folder. None: every run.", show_default=False
    ),
]
SkillOpt = Annotated[str | None, typer.Option("--skill", help="Only runs of this skill.")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Write the OTLP/JSON document to this file.")]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="POST to this OTLP/HTTP collector ('/v1/traces' is added when it has no path). Default: "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + '/v1/traces'.",
        show_default=False,
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        help="HTTP header 'K=V' for the endpoint (repeatable; over OTEL_EXPORTER_OTLP_[TRACES_]HEADERS).",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds to wait for each POST. Default: OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT (ms), else 10.",
        show_default=False,
    ),
]
ProtocolOpt = Annotated[
    str | None,
    typer.Option(
        "--protocol",
        help="'http/protobuf' or 'http/json'. Default: OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, else http/protobuf.",
        show_default=False,
    ),
]
CompressionOpt = Annotated[
    str | None,
    typer.Option(
        "--compression",
        help="'gzip' or 'none'. Default: OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION, else gzip.",
        show_default=False,
    ),
]
CaptureContentOpt = Annotated[
    bool,
    typer.Option(
        "--capture-content",
        help="Also export the prompt and response text (gen_ai.input.messages / gen_ai.output.messages).",
    ),
]
LedgerOpt = Annotated[
    bool,
    typer.Option(
        "--ledger/--no-ledger",
        help="Take reviewer-specialist call times, endpoint host and usage from the store's prompt manifests.",
    ),
]
ProjectDirOpt = Annotated[
    Path | None, typer.Option("--project-dir", help="Project root (default: the git top level, else cwd).")
]


def register(app: typer.Typer) -> None:
    """Add the ``export-otel`` command to ``app`` (the ``trace`` group)."""
    app.command("export-otel")(export_otel)


@handle_errors
def export_otel(
    runs: RunsArg = None,
    skill: SkillOpt = None,
    output: OutputOpt = None,
    endpoint: EndpointOpt = None,
    header: HeaderOpt = None,
    timeout: TimeoutOpt = None,
    protocol: ProtocolOpt = None,
    compression: CompressionOpt = None,
    capture_content: CaptureContentOpt = False,
    ledger: LedgerOpt = True,
    project_dir: ProjectDirOpt = None,
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
    import sys

    from reviewtrail.app import open_store
    from reviewtrail.tracing.otel import export_trace_runs, otel_export_request

    request = otel_export_request(
        os.environ, runs=runs or [], skill=skill, output=output, endpoint=endpoint, headers=header or [],
        timeout=timeout, protocol=protocol, compression=compression, capture_content=capture_content,
        ledger=ledger, project_dir=project_dir,
    )  # fmt: skip
    outcome = export_trace_runs(request, open_store=lambda: open_store(read_only=True))
    result = outcome.export
    if as_json:
        print_json(result.to_json())
    else:
        print(f"exported {result.spans} span(s) from {result.runs} run(s) to {result.destination}")
    for warning in outcome.warnings:
        sys.stderr.write(f"warning: {warning}\n")
