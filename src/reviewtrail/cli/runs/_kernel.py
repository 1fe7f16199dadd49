"""``reviewtrail kernel``: the persistent kernels ``reviewtrail run --kernel NAME`` keeps alive
between commands, one host process each (docs/architecture.md, "Kernel hosts")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, table

if TYPE_CHECKING:
    from reviewtrail.provenance.kernels import KernelEntry

__all__ = ["app", "list_kernels", "stop"]

app = typer.Typer(
    help="Persistent kernels of sessions, started by 'reviewtrail run --session S --kernel NAME'.",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Only the kernels of this session.")]


def _rows(entries: list[KernelEntry]) -> list[list[str]]:
    return [
        [
            e.name,
            e.session_id,
            e.kernel_id or "",
            e.lang or "",
            "" if e.pid is None else str(e.pid),
            e.state if e.detail is None else f"{e.state}: {e.detail}",
            e.started_at or "",
            e.last_used_at or "",
        ]
        for e in entries
    ]


_COLUMNS = ["name", "session", "kernel id", "lang", "pid", "state", "started", "last used"]


@app.command("ls")
@handle_errors
def list_kernels(session: SessionOpt = None, as_json: JsonOpt = False) -> None:
    """List the store's kernels: name, session, kernel id, language, host pid, state, started and
    last used. A kernel is alive when its host answers; stale when its host is gone (killed) or
    does not answer: the next 'run --kernel' of that name replaces it, 'kernel stop' removes it.

    Example: reviewtrail kernel ls --session 01a2... --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.kernels import list_kernels as listed

    with open_store() as store:
        entries = listed(store, session)
    if as_json:
        print_json([e.to_json() for e in entries])
    elif not entries:
        print("no kernels")
    else:
        table("kernels", _COLUMNS, _rows(entries), no_wrap=("kernel id", "session"))


@app.command("stop")
@handle_errors
def stop(
    name: Annotated[str | None, typer.Argument(help="The kernel's name (as given to run --kernel).")] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="The kernel's session (needed when several have NAME).")
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Stop every kernel (of --session when given) instead of NAME.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Stop a kernel: its host cancels a run in progress (recorded as cancelled), shuts the kernel
    down, removes its socket and metadata and exits; the command waits for it. A stale entry is
    removed. The kernel's state is lost: the next 'run --kernel NAME' starts a new kernel (a new
    kernel id). No such kernel is exit 3; a NAME in several sessions without --session is exit 2.

    Example: reviewtrail kernel stop analysis --session 01a2...
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.kernels import stop_kernels

    with open_store() as store:
        stopped = stop_kernels(store, name, session_id=session, every=every)
    if as_json:
        print_json([e.to_json() for e in stopped])
        return
    for e in stopped:
        what = "stopped" if e.state == "alive" else "removed stale entry of"
        print(f"{what} kernel {e.name} ({e.kernel_id or 'unknown id'}) of session {e.session_id}")
    if not stopped:
        print("no kernels")
