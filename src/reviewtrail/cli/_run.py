"""``reviewtrail run``: code under bubblewrap in a session's workspace, recorded as an ExecutionRun."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from reviewtrail.provenance import RunOutcome

__all__ = ["run"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[str, typer.Option("--project", envvar="REVIEWTRAIL_PROJECT", help="Project id.")]
FileArg = Annotated[Path | None, typer.Argument(help="File with the code to run.")]
CodeOpt = Annotated[str | None, typer.Option("-c", "--code", help="Code to run.")]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Session id (default: a new session).")]
LangOpt = Annotated[str, typer.Option("--lang", help="python or bash.")]
EnvOpt = Annotated[list[str] | None, typer.Option("--env", help="K=V injected into the sandbox (repeatable).")]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds before the run is cancelled; also its CPU seconds per process.")
]
NetworkOpt = Annotated[
    str, typer.Option("--network", help="none (default: no network) or allowlist (--allow hosts, via a proxy).")
]
AllowOpt = Annotated[
    list[str] | None,
    typer.Option("--allow", help="host or host:port to allow (allowlist mode; repeatable; bare host: 80, 443)."),
]
AllowResolveOpt = Annotated[
    list[str] | None,
    typer.Option("--allow-resolve", help="HOST=IP: connect to IP for the listed HOST, without DNS (repeatable)."),
]
MaxMemoryOpt = Annotated[str | None, typer.Option("--max-memory", help="Memory, e.g. 512M (default 2G).")]
MaxProcsOpt = Annotated[int | None, typer.Option("--max-procs", help="Processes at once (default 256).")]
MaxFileSizeOpt = Annotated[
    str | None, typer.Option("--max-file-size", help="Largest file the code may write (default 1G).")
]
MaxOutputOpt = Annotated[str | None, typer.Option("--max-output", help="Bytes kept per output stream (default 10M).")]
CwdOpt = Annotated[str, typer.Option("--cwd", help="Working directory inside /workspace.")]
WeakLimitsOpt = Annotated[
    bool,
    typer.Option(
        "--weak-limits",
        help="Where no control group can be made, accept the in-sandbox supervisor and rlimits for "
        "--max-memory and --max-procs (the code could switch them off); without it such a run exits 5.",
    ),
]


@handle_errors
def run(
    file: FileArg = None,
    code: CodeOpt = None,
    session: SessionOpt = None,
    project: ProjectOpt = "default",
    lang: LangOpt = "python",
    env: EnvOpt = None,
    timeout: TimeoutOpt = 60.0,
    network: NetworkOpt = "none",
    allow: AllowOpt = None,
    allow_resolve: AllowResolveOpt = None,
    max_memory: MaxMemoryOpt = None,
    max_procs: MaxProcsOpt = None,
    max_file_size: MaxFileSizeOpt = None,
    max_output: MaxOutputOpt = None,
    cwd: CwdOpt = "/workspace",
    weak_limits: WeakLimitsOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run code under bubblewrap in a session's workspace and record the ExecutionRun.

    Exits 0 when the code succeeded, 7 when it failed, hit a limit (limitExceeded names it)
    or was cancelled (still recorded), 5 when bubblewrap is missing, the disk is full, or the
    memory and process limits cannot be enforced by the kernel here (see --weak-limits).
    The run's enforcedBy says which mechanism held each limit.
    Runs in one session wait for each other (a message on stderr says so).

    Example: reviewtrail run --session 01a2... --lang python -c "open('out.txt','w').write('hi')" --json
    """
    import signal
    import sys
    import threading

    from reviewtrail.app import open_store
    from reviewtrail.errors import EXIT_RUN_FAILED
    from reviewtrail.provenance import require_bwrap, run_request, start_run

    request = run_request(
        file=file, code=code, session=session, project=project, lang=lang, env=env or [], timeout=timeout,
        network=network, allow=allow or [], allow_resolve=allow_resolve or [], max_memory=max_memory,
        max_procs=max_procs, max_file_size=max_file_size, max_output=max_output, cwd=cwd, weak_limits=weak_limits,
    )  # fmt: skip
    require_bwrap()  # before a session is created for the run
    cancel = threading.Event()  # Ctrl-C cancels the run, which is still recorded (as cancelled)
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        with open_store() as store:
            outcome = start_run(
                store, request, cancel=cancel, on_wait=lambda message: print(message, file=sys.stderr, flush=True)
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    _print_outcome(outcome, as_json)
    if outcome.run.status != "succeeded":
        raise typer.Exit(EXIT_RUN_FAILED)


def _print_outcome(outcome: RunOutcome, as_json: bool) -> None:
    import sys

    if as_json:
        print_json(outcome.to_json())
        return
    r = outcome.run
    if outcome.result is not None:
        sys.stdout.buffer.write(outcome.result.stdout)
        sys.stderr.buffer.write(outcome.result.stderr)
    print(
        f"run {outcome.envelope.id} in session {r.session_id}: {r.status} (exit {r.exit_code}), "
        f"created {len(r.created_files)}, modified {len(r.modified_files)} file(s)"
        + (f"; limit exceeded: {r.limit_exceeded}" if r.limit_exceeded else "")
    )
