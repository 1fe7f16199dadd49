"""Store-wide commands: init, verify."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, print_report
from reviewtrail.cli._progress import PROGRESS_HELP

if TYPE_CHECKING:
    from reviewtrail.verify import VerifyReport

__all__ = ["init", "verify"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@handle_errors
def init(as_json: JsonOpt = False) -> None:
    """Create the store (CAS pools and ledger) at REVIEWTRAIL_STORE, default ./.reviewtrail.

    Safe to run again: an existing store is left as it is.

    Example: REVIEWTRAIL_STORE=/data/rt reviewtrail init --json
    """
    from reviewtrail.app import init_store
    from reviewtrail.config import load_settings

    settings = load_settings()
    with init_store(settings) as store:
        head = store.ledger.head()
        store_id = store.store_id
    info = {
        "store": str(settings.store),
        "storeId": store_id,
        "databaseUrl": settings.database_url_redacted,
        "records": head.seq if head else 0,
    }
    if as_json:
        print_json(info)
    else:
        print(f"store {store_id} ready at {info['store']} (ledger: {info['databaseUrl']}, {info['records']} records)")


# verify's options
RepairOpt = Annotated[
    bool, typer.Option("--repair", help="After reporting, complete what the chain supports (see below).")
]
ReadDataOpt = Annotated[
    bool,
    typer.Option(
        "--read-data/--no-read-data",
        help="Re-hash every object (default); --no-read-data only lists them (presence and size).",
    ),
]
CheckpointOpt = Annotated[
    list[Path] | None,
    typer.Option("--checkpoint", help="A checkpoint from 'ledger checkpoint' the chain must extend (repeatable)."),
]
PublicKeyOpt = Annotated[
    list[Path] | None,
    typer.Option("--public-key", help="Ed25519 public key (PEM) that signed the checkpoints (repeatable)."),
]
SinceOpt = Annotated[
    Path | None,
    typer.Option(
        "--since", help="A checkpoint to start from: check it as --checkpoint does, then only what follows its seq."
    ),
]
TrustedKeysOpt = Annotated[
    Path | None,
    typer.Option("--trusted-keys", help="PEM public keys of trusted writers: each record signed by one."),
]
ProjectDirOpt = Annotated[
    str | None, typer.Option("--project-dir", help="Project whose .aris/traces are compared (default: git top).")
]
ProgressOpt = Annotated[bool | None, typer.Option("--progress/--no-progress", help=PROGRESS_HELP, show_default=False)]


@handle_errors
def verify(
    repair: RepairOpt = False,
    read_data: ReadDataOpt = True,
    checkpoint: CheckpointOpt = None,
    public_key: PublicKeyOpt = None,
    since: SinceOpt = None,
    trusted_keys: TrustedKeysOpt = None,
    project_dir: ProjectDirOpt = None,
    as_json: JsonOpt = False,
    progress: ProgressOpt = None,
) -> None:
    """Check everything commands read against the chain.

    Re-hashes every CAS object; checks every ledger link, hash and CAS reference, the store's
    identity record, its layout files and append-only guards; recomputes every query table from
    the records; compares every .aris/traces file and events.jsonl line with its record; reports
    runs and session removals a crash interrupted; checks each --checkpoint is still contained in
    the chain. Reads one consistent snapshot, so others may keep writing.

    --repair then rebuilds query tables from the chain, records interrupted runs and trace saves
    and finishes session removals (never when the chain itself is damaged).

    --since CHECKPOINT checks the checkpoint (signature with --public-key, store, the record at its
    seq still has its hash), then only the records after that seq (links from its hash on, hashes,
    their CAS references), the objects they name and the query rows they give. Records before it
    are not checked: a full verify (the default) checks everything.

    --trusted-keys FILE (PEM public keys) reports each record no trusted key signed ('reviewtrail key').

    --no-read-data lists the objects instead of reading them: each must be there with the size its
    references say, but a flipped byte is not seen. For a large bucket it costs a listing, not a
    download of every object; run the default (--read-data) on a schedule as well.

    Exits 0 when the store is intact; otherwise exits 4 and lists every problem (also after a
    repair: run verify again to confirm). --json always prints the head it verified.

    Example: reviewtrail verify --json --checkpoint ~/anchors/rt-2026-11-30.json --public-key ~/anchors/rt.pub
    --trusted-keys ~/anchors/writers.pem
    """
    from reviewtrail.app import catalog, open_store
    from reviewtrail.audit import AuditOptions, audit
    from reviewtrail.cli._progress import phase_progress
    from reviewtrail.tracing.files import existing_project_root

    options = AuditOptions(
        project_dir=existing_project_root(project_dir),
        checkpoints=tuple(checkpoint or ()),
        public_keys=tuple(public_key or ()),
        trusted_keys=trusted_keys,
        repair=repair,
        since=since,
        keep_status=True,
        read_data=read_data,
    )
    catalog().load_all()  # every package, checked against its declaration, before any table is checked or rebuilt
    with open_store(check_identity=False) as store, phase_progress("verifying", progress) as tick:
        report = audit(store, options, progress=tick)
    print_report(report, as_json, _print_report)


def _print_report(report: VerifyReport) -> None:
    summary = (
        f"{report.objects_checked} objects, {report.records_checked} records, "
        f"{report.refs_checked} CAS references, {report.rows_checked} query-table rows checked; "
        f"head seq {report.head_seq} {report.head_hash or '-'}"
    )
    for note in report.notes:
        print(f"note: {note}")
    if report.since is not None:
        print(f"checked: {report.since['checked']}")
    if report.ok:
        print(f"intact: {summary}")
    else:
        print(f"{len(report.problems)} problem(s) found ({summary}):")
        for p in report.problems:
            print(f"  - {p}")
    for r in report.repairs:
        print(f"repaired: {r}")
