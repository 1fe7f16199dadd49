"""Store-wide commands: init, verify."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@handle_errors
def init(as_json: JsonOpt = False) -> None:
    """Create the store (CAS pools and ledger) at REVIEWTRAIL_STORE, default ./.reviewtrail.

    Safe to run again: an existing store is left as it is.

    Example: REVIEWTRAIL_STORE=/data/rt reviewtrail init --json
    """
    from reviewtrail._redact import redact_url
    from reviewtrail.config import load_settings
    from reviewtrail.store import Store

    settings = load_settings()
    with Store.init(settings) as store:
        head = store.ledger.head()
        store_id = store.store_id
    info = {
        "store": str(settings.store),
        "storeId": store_id,
        "databaseUrl": redact_url(settings.database_url),
        "records": head.seq if head else 0,
    }
    if as_json:
        print_json(info)
    else:
        print(f"store {store_id} ready at {info['store']} (ledger: {info['databaseUrl']}, {info['records']} records)")


@handle_errors
def verify(as_json: JsonOpt = False) -> None:
    """Re-hash every CAS object, check every ledger link and every CAS reference in every record.

    Exits 0 when the store is intact; otherwise exits 4 and lists every problem.

    Example: reviewtrail verify --json
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    from reviewtrail.errors import EXIT_INTEGRITY
    from reviewtrail.store import Store

    with Store.open() as store:
        console = Console(stderr=True)
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console, transient=True
        ) as bar:
            tasks: dict[str, TaskID] = {}

            def tick(phase: str, advance: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(f"verifying {phase}", total=total)
                bar.update(tasks[phase], advance=advance)

            report = store.verify(progress=tick)
    if as_json:
        print_json(report.to_json())
    else:
        summary = (
            f"{report.objects_checked} objects, {report.records_checked} records, "
            f"{report.refs_checked} CAS references checked"
        )
        for note in report.notes:
            print(f"note: {note}")
        if report.ok:
            print(f"intact: {summary}")
        else:
            print(f"{len(report.problems)} problem(s) found ({summary}):")
            for p in report.problems:
                print(f"  - {p}")
    if not report.ok:
        sys.stdout.flush()
        raise typer.Exit(EXIT_INTEGRITY)
