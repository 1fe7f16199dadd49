"""``reviewtrail cas``: put, cat and verify objects."""

from __future__ import annotations

from typing import Annotated

import typer

from reviewtrail.cli._everyday_commands import everyday_command
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json
from reviewtrail.cli._progress import PROGRESS_HELP, byte_progress

__all__ = ["app", "cat", "clean_ingest", "put", "retain", "verify"]

app = typer.Typer(help="Content-addressed store: put, cat, verify and retain objects.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProgressOpt = Annotated[bool | None, typer.Option("--progress/--no-progress", help=PROGRESS_HELP, show_default=False)]


put = app.command("put")(
    everyday_command(
        "cas",
        "put",
        """Store files' bytes; print each one's address (sha256:<hex>) and size, a line per file.

    Several files are stored in one process and published together; with --json, one file prints
    an object and several a list of them.

    Example: reviewtrail cas put results.csv --media-type text/csv --json
    """,
    )
)
cat = app.command("cat")(
    everyday_command(
        "cas",
        "cat",
        """Write an object's verified bytes to stdout, or objects to files.

    Bytes are only written after the whole object has been verified; any
    integrity failure writes nothing and exits 4. To stdout, a progress bar (stderr) counts both
    passes. With --out or --out-dir each object is downloaded once, hashed into a temporary file
    beside its destination and renamed into place when it hashed right; a line per file is printed.
    Several addresses need --out-dir.

    Example: reviewtrail cas cat sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 > out
    """,
    )
)


@app.command("verify")
@handle_errors
def verify(
    hash: Annotated[str, typer.Argument(help="Address: 64 hex digits or sha256:<hex>.")],
    as_json: JsonOpt = False,
    progress: ProgressOpt = None,
) -> None:
    """Re-hash one object; exit 0 when intact, 3 when missing, 4 when corrupt.

    Example: reviewtrail cas verify 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
    """
    from reviewtrail.app import open_store
    from reviewtrail.cas import locate_object, object_state, parse_address
    from reviewtrail.errors import EXIT_INTEGRITY, EXIT_NOT_FOUND

    hexdigest = parse_address(hash, field="hash")
    with open_store() as store:
        found = locate_object(store.cas, hexdigest)
        with byte_progress("verifying", found.size, progress) as on_bytes:
            state = object_state(store.cas, found, on_bytes=on_bytes)
    if as_json:
        print_json({"digest": found.digest, "location": found.location, "state": state, "ok": state == "intact"})
    else:
        print(f"{found.digest} {state}" + (f" ({found.location})" if found.location else ""))
    if state == "missing":
        raise typer.Exit(EXIT_NOT_FOUND)
    if state == "corrupt":
        raise typer.Exit(EXIT_INTEGRITY)


@app.command("retain")
@handle_errors
def retain(
    hash: Annotated[str, typer.Argument(help="Bare address of the object: 64 hex digits or sha256:<hex>.")],
    size: Annotated[int, typer.Option("--size", min=0, help="Its size in bytes, as the old reference records it.")],
    pool: Annotated[str, typer.Option(help="Typed pool to promote it into: 'data' or 'agent-state'.")] = "data",
    media_type: Annotated[str, typer.Option("--media-type", help="Media type recorded in the typed ref.")] = (
        "application/octet-stream"
    ),
    as_json: JsonOpt = False,
    progress: ProgressOpt = None,
) -> None:
    """Promote an object known by a bare {hash, size} reference (for example one in the old
    cas/sha256/<2>/<hex> layout) into a typed pool, checking its size and hash first.

    A missing object exits 3; a corrupt one, or one whose size differs, exits 4 and copies nothing.
    Prints the typed reference (pool, digest, size, media type).

    Example: reviewtrail cas retain 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 --size 5
    """
    from reviewtrail.app import open_store
    from reviewtrail.cas import CasObjectRef, parse_address

    ref = CasObjectRef(hash=parse_address(hash, field="hash"), size=size)
    with open_store() as store, byte_progress(f"retaining {ref.hash[:12]}", size, progress) as on_bytes:
        typed = store.cas.retain(ref, pool=pool, media_type=media_type, on_bytes=on_bytes)  # type: ignore[arg-type]
    if as_json:
        print_json(typed.to_json())
    else:
        print(f"{typed.digest} {typed.size} {typed.pool} {typed.media_type}")


@app.command("clean-ingest")
@handle_errors
def clean_ingest(
    older_than: Annotated[
        float, typer.Option("--older-than", min=0, help="Only files older than this many seconds.")
    ] = 3600.0,
    as_json: JsonOpt = False,
) -> None:
    """Remove what interrupted writes left: temporary files in the pools' ingest/ folders, or
    unfinished multipart uploads in an S3 bucket (aborted, their parts freed).

    Stored objects are never touched; a write in progress is younger than the threshold.

    Example: reviewtrail cas clean-ingest --older-than 86400
    """
    from reviewtrail.app import open_store

    with open_store() as store:
        removed = store.cas.clean_staging(older_than)
    if as_json:
        print_json({"removed": removed})
    else:
        print(f"removed {len(removed)} leftover(s) of interrupted writes")
