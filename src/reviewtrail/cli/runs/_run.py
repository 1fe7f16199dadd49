"""``reviewtrail run``: code under bubblewrap in a session's workspace, recorded as an ExecutionRun."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from threading import Event

    from reviewtrail.provenance.runs import RunOutcome, RunRequest
    from reviewtrail.store import Store

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

KernelOpt = Annotated[
    str | None,
    typer.Option(
        "--kernel",
        help="Run in the session's persistent kernel NAME (needs --session): state persists between runs; "
        "started, with this run's options, when it has no live host.",
    ),
]
IdleOpt = Annotated[
    float | None,
    typer.Option("--idle-minutes", help="With --kernel: a new kernel stops after this many idle minutes (default 30)."),
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
    kernel: KernelOpt = None,
    idle_minutes: IdleOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run code under bubblewrap in a session's workspace and record the ExecutionRun.

    Exits 0 when the code succeeded, 7 when it failed, hit a limit (limitExceeded names it)
    or was cancelled (still recorded), 5 when bubblewrap is missing, the disk is full, or the
    memory and process limits cannot be enforced by the kernel here (see --weak-limits).
    The run's enforcedBy says which mechanism held each limit.
    Runs in one session wait for each other (a message on stderr says so).

    With --kernel NAME the code runs in the session's persistent kernel NAME, kept by a host
    process between commands: variables, imports, the working directory persist, and the record
    has kernelMode persistent and the kernel's kernelId. The first such run starts the kernel with
    its options; a later run with other ones is refused naming the option (exit 6). --kernel
    without --session, or with --cwd, is exit 2. See 'reviewtrail kernel ls|stop'.

    Example: reviewtrail run --session 01a2... --lang python -c "open('out.txt','w').write('hi')" --json
    """
    import signal
    import sys
    import threading

    from reviewtrail.app import open_store
    from reviewtrail.errors import EXIT_RUN_FAILED, InvalidInputError
    from reviewtrail.provenance.runs import run_request, start_run
    from reviewtrail.provenance.sandbox import require_bwrap

    request = run_request(
        file=file, code=code, session=session, project=project, lang=lang, env=env or [], timeout=timeout,
        network=network, allow=allow or [], allow_resolve=allow_resolve or [], max_memory=max_memory,
        max_procs=max_procs, max_file_size=max_file_size, max_output=max_output, cwd=cwd, weak_limits=weak_limits,
    )  # fmt: skip
    if kernel is None and idle_minutes is not None:
        raise InvalidInputError("--idle-minutes is for a kernel: give --kernel NAME too", field="idle_minutes")
    require_bwrap()  # before a session is created for the run
    cancel = threading.Event()  # Ctrl-C cancels the run, which is still recorded (as cancelled)
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        with open_store() as store:
            if kernel is not None:
                status = _run_in_kernel(store, request, kernel, idle_minutes, cancel, as_json)
            else:
                outcome = start_run(
                    store, request, cancel=cancel, on_wait=lambda message: print(message, file=sys.stderr, flush=True)
                )
                status = _print_outcome(outcome, as_json)
    finally:
        signal.signal(signal.SIGINT, previous)
    if status != "succeeded":
        raise typer.Exit(EXIT_RUN_FAILED)


def _run_in_kernel(
    store: Store, request: RunRequest, kernel: str, idle_minutes: float | None, cancel: Event, as_json: bool
) -> str:
    """Run in the kernel's host (started when none is alive), print as a one-shot run prints; the status."""
    import sys

    from reviewtrail.cli.runs._kernel_host import host_command
    from reviewtrail.provenance.kernels import run_in_kernel

    answer = run_in_kernel(
        store, request, kernel, host_command=host_command(), idle_minutes=idle_minutes, cancel=cancel,
        on_start=lambda message: print(message, file=sys.stderr, flush=True),
    )  # fmt: skip
    _print_run(answer.record, answer.stdout, answer.stderr, as_json)
    return answer.status


def _print_outcome(outcome: RunOutcome, as_json: bool) -> str:
    result = outcome.result
    _print_run(outcome.to_json(), result.stdout if result else None, result.stderr if result else None, as_json)
    return outcome.run.status


def _print_run(record: dict[str, Any], stdout: bytes | None, stderr: bytes | None, as_json: bool) -> None:
    """A recorded run (``record``: as ``RunOutcome.to_json`` gives it): JSON, or what the code wrote and a summary."""
    import sys

    if as_json:
        print_json(record)
        return
    if stdout is not None and stderr is not None:
        sys.stdout.buffer.write(stdout)
        sys.stderr.buffer.write(stderr)
    limit = record.get("limitExceeded")
    print(
        f"run {record['recordId']} in session {record['sessionId']}: {record['status']} (exit {record['exitCode']}), "
        f"created {len(record['createdFiles'])}, modified {len(record['modifiedFiles'])} file(s)"
        + (f"; limit exceeded: {limit}" if limit else "")
    )
