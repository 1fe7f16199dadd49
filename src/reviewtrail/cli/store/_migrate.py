"""``reviewtrail migrate``: the store copied to other backends (SQLite and files to PostgreSQL and S3, and back)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_report
from reviewtrail.cli._progress import PROGRESS_HELP

if TYPE_CHECKING:
    from reviewtrail.migrate import MigrateReport

__all__ = ["migrate"]


@handle_errors
def migrate(
    to: Annotated[
        str | None,
        typer.Option("--to", help="The target ledger: sqlite:///PATH or postgresql://USER@HOST:PORT/DB."),
    ] = None,
    cas_to: Annotated[
        str | None,
        typer.Option("--cas-to", help="The target CAS: file:///ABSOLUTE/PATH or s3://BUCKET/PREFIX."),
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Records per run written to the target ledger.")
    ] = 10_000,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help=PROGRESS_HELP, show_default=False)
    ] = None,
) -> None:
    """Copy the whole store to another ledger database and/or CAS, then check the copy.

    The records are copied in seq order, exactly as they are (same ids, payload bytes and hashes;
    each run checked against the chain) with their signatures, all in one transaction of the
    target, and the target's query tables are built from them.
    Every CAS object (both pools; the legacy layout's objects go to the data pool) is streamed
    through a verified read, beside the records; objects the target already holds intact are
    skipped. Omit --to or --cas-to to leave that part where it is. The source (the configured
    store) is only read.

    Interrupted (killed, connection lost) or failing, it leaves the target ledger as it was; run
    again, it completes the copy. A target that already holds records must hold the source's first
    records exactly, and the copy continues after them. A target holding another chain is refused
    (exit 4, naming the first seq that differs) and not written to; a source record or object that
    does not hash stops the copy (exit 4), and nothing of the records is written.

    At the end the target's head must be the source's (seq and hash), every object a record
    references must be in the target's CAS and hash right, and every record, signature and
    query-table row of the target must be the source's (also when run again over a finished copy);
    otherwise exit 4, listing what differs (the first seq, or the table and key).

    Then point the store at the target and check it: set REVIEWTRAIL_DATABASE_URL and
    REVIEWTRAIL_CAS_URL (or database_url and cas_url in reviewtrail.toml) to the --to and --cas-to
    URLs and run 'reviewtrail verify'. The store folder (its marker, workspaces) stays: the marker
    names the store's identity record, which the target holds too.

    Exit codes: 2 a malformed URL or a missing target folder, 5 a database that cannot be
    reached, 4 as above.

    Example: reviewtrail migrate --to postgresql://rt@db:5432/reviewtrail --cas-to s3://rt-objects/team --json
    """
    from reviewtrail.app import catalog
    from reviewtrail.cli._progress import phase_progress
    from reviewtrail.config import load_settings
    from reviewtrail.migrate import MigrateOptions
    from reviewtrail.migrate import migrate as copy_store

    options = MigrateOptions(database_url=to, cas_url=cas_to, batch_size=batch_size)
    settings = load_settings()
    with phase_progress("migrating", progress) as tick:
        report = copy_store(settings, catalog(), options, progress=tick)
    print_report(report, as_json, _print_report)


def _print_report(report: MigrateReport) -> None:
    print(f"from: ledger {report.source_database}, CAS {report.source_cas}")
    print(f"to:   ledger {report.target_database}, CAS {report.target_cas}")
    print(
        f"records: {report.records_copied} copied ({report.records_present} already there), "
        f"head seq {report.head_seq} {report.head_hash or '-'}"
    )
    print(
        f"objects: {report.objects_copied} copied ({report.bytes_copied} bytes), "
        f"{report.objects_skipped} already there intact; {report.refs_checked} references checked"
    )
    print(f"elapsed: {report.elapsed:.1f} s")
    for note in report.notes:
        print(f"note: {note}")
    if report.ok:
        print("the target holds the store: its head is the source's and every referenced object is intact")
        return
    more = f" (and {report.more_problems} more)" if report.more_problems else ""
    print(f"{len(report.problems)} problem(s) in the target{more}:")
    for problem in report.problems:
        print(f"  - {problem}")
