"""``reviewtrail run``: code under bubblewrap in a session's workspace, recorded as an ExecutionRun."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[str, typer.Option("--project", envvar="REVIEWTRAIL_PROJECT", help="Project id.")]


@handle_errors
def run(
    file: Annotated[Path | None, typer.Argument(help="File with the code to run.")] = None,
    code: Annotated[str | None, typer.Option("-c", "--code", help="Code to run.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Session id (default: a new session).")] = None,
    project: ProjectOpt = "default",
    lang: Annotated[str, typer.Option("--lang", help="python or bash.")] = "python",
    env: Annotated[list[str] | None, typer.Option("--env", help="K=V injected into the sandbox (repeatable).")] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds before the run is cancelled; also its CPU seconds per process.")
    ] = 60.0,
    network: Annotated[
        str, typer.Option("--network", help="none (default: no network) or allowlist (--allow hosts, via a proxy).")
    ] = "none",
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="host or host:port to allow (allowlist mode; repeatable; bare host: 80, 443)."),
    ] = None,
    allow_resolve: Annotated[
        list[str] | None,
        typer.Option("--allow-resolve", help="HOST=IP: connect to IP for the listed HOST, without DNS (repeatable)."),
    ] = None,
    max_memory: Annotated[str | None, typer.Option("--max-memory", help="Memory, e.g. 512M (default 2G).")] = None,
    max_procs: Annotated[int | None, typer.Option("--max-procs", help="Processes at once (default 256).")] = None,
    max_file_size: Annotated[
        str | None, typer.Option("--max-file-size", help="Largest file the code may write (default 1G).")
    ] = None,
    max_output: Annotated[
        str | None, typer.Option("--max-output", help="Bytes kept per output stream (default 10M).")
    ] = None,
    cwd: Annotated[str, typer.Option("--cwd", help="Working directory inside /workspace.")] = "/workspace",
    as_json: JsonOpt = False,
) -> None:
    """Run code under bubblewrap in a session's workspace and record the ExecutionRun.

    Exits 0 when the code succeeded, 7 when it failed, hit a limit (limitExceeded names it)
    or was cancelled (still recorded), 5 when bubblewrap is missing or the disk is full.
    Runs in one session wait for each other (a message on stderr says so).

    Example: reviewtrail run --session 01a2... --lang python -c "open('out.txt','w').write('hi')" --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.errors import EXIT_RUN_FAILED, InvalidInputError
    from reviewtrail.provenance import ResourceLimits, create_session, run_code
    from reviewtrail.provenance._sandbox import require_bwrap

    if (allow or allow_resolve) and network != "allowlist":
        raise InvalidInputError("--allow and --allow-resolve need --network allowlist", field="allow")
    resolve: dict[str, str] = {}
    for item in allow_resolve or []:
        host, sep, address = item.partition("=")
        if not sep or not host or not address:
            raise InvalidInputError(f"{item!r} is not HOST=IP", field="allow_resolve")
        resolve[host] = address
    limits = ResourceLimits.parse(
        max_memory=max_memory, max_procs=max_procs, max_file_size=max_file_size, max_output=max_output
    )

    if (file is None) == (code is None):
        raise InvalidInputError("give exactly one of FILE or -c CODE", field="code")
    if file is not None:
        try:
            code = file.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise InvalidInputError(f"{file} does not exist", field="file") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"cannot read {file}: {exc}", field="file") from exc
    injected: dict[str, str] = {}
    for item in env or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidInputError(f"{item!r} is not K=V", field="env")
        injected[key] = value
    assert code is not None
    import signal
    import sys
    import threading

    require_bwrap()  # before a session is created for the run
    cancel = threading.Event()  # Ctrl-C cancels the run, which is still recorded (as cancelled)
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        with open_store() as store:
            session_id = session or create_session(store, project).session_id
            outcome = run_code(
                store,
                session_id=session_id,
                code=code,
                lang=lang,
                env=injected,
                timeout=timeout,
                network=network,  # type: ignore[arg-type]  # checked by run_code
                allowlist=allow or [],
                resolve=resolve,
                limits=limits,
                cwd=cwd,
                cancel=cancel,
                on_wait=lambda message: print(message, file=sys.stderr, flush=True),
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    if as_json:
        print_json(outcome.to_json())
    else:
        r = outcome.run
        if outcome.result is not None:
            sys.stdout.buffer.write(outcome.result.stdout)
            sys.stderr.buffer.write(outcome.result.stderr)
        print(
            f"run {outcome.envelope.id} in session {session_id}: {r.status} (exit {r.exit_code}), "
            f"created {len(r.created_files)}, modified {len(r.modified_files)} file(s)"
            + (f"; limit exceeded: {r.limit_exceeded}" if r.limit_exceeded else "")
        )
    if outcome.run.status != "succeeded":
        raise typer.Exit(EXIT_RUN_FAILED)
