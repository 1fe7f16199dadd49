"""``reviewtrail cas``: put, cat and verify objects."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

app = typer.Typer(help="Content-addressed store: put, cat and verify objects.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@app.command("put")
@handle_errors
def put(
    file: Annotated[Path, typer.Argument(help="File to store.", dir_okay=False)],
    pool: Annotated[
        str, typer.Option(help="Pool: 'data' (workspace files) or 'agent-state' (agent run data).")
    ] = "data",
    media_type: Annotated[str, typer.Option("--media-type", help="Media type recorded in the typed ref.")] = (
        "application/octet-stream"
    ),
    as_json: JsonOpt = False,
) -> None:
    """Store a file's bytes; print its address (sha256:<hex>) and size.

    Example: reviewtrail cas put results.csv --media-type text/csv --json
    """
    from reviewtrail.store import Store

    with Store.open() as store:
        ref = store.cas.put_file(file, pool=pool, media_type=media_type)  # type: ignore[arg-type]
    if as_json:
        print_json(ref.to_json())
    else:
        print(f"{ref.digest} {ref.size} {ref.pool} {ref.media_type}")


@app.command("cat")
@handle_errors
def cat(hash: Annotated[str, typer.Argument(help="Address: 64 hex digits or sha256:<hex>.")]) -> None:
    """Write an object's verified bytes to stdout.

    Bytes are only written after the whole object has been verified; any
    integrity failure writes nothing and exits 4.

    Example: reviewtrail cas cat sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 > out
    """
    from reviewtrail.cas import CHUNK_SIZE
    from reviewtrail.errors import CorruptObjectError
    from reviewtrail.store import Store

    with Store.open() as store:
        if not store.cas.verify(hash):
            store.cas.read(hash)  # raises the precise not-found or integrity error
            raise CorruptObjectError(f"object {hash} changed while being verified")
        out = sys.stdout.buffer
        with store.cas.open(hash) as reader:
            while chunk := reader.read(CHUNK_SIZE):
                out.write(chunk)
        out.flush()


@app.command("verify")
@handle_errors
def verify(
    hash: Annotated[str, typer.Argument(help="Address: 64 hex digits or sha256:<hex>.")],
    as_json: JsonOpt = False,
) -> None:
    """Re-hash one object; exit 0 when intact, 3 when missing, 4 when corrupt.

    Example: reviewtrail cas verify 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
    """
    from reviewtrail.cas import parse_address
    from reviewtrail.errors import EXIT_INTEGRITY, EXIT_NOT_FOUND
    from reviewtrail.store import Store

    hexdigest = parse_address(hash, field="hash")
    with Store.open() as store:
        location = store.cas.locate(hexdigest)
        intact = location is not None and store.cas.verify(hexdigest)
    state = "missing" if location is None else ("intact" if intact else "corrupt")
    if as_json:
        print_json({"digest": f"sha256:{hexdigest}", "location": location, "state": state, "ok": intact})
    else:
        print(f"sha256:{hexdigest} {state}" + (f" ({location})" if location else ""))
    if state == "missing":
        raise typer.Exit(EXIT_NOT_FOUND)
    if state == "corrupt":
        raise typer.Exit(EXIT_INTEGRITY)


@app.command("clean-ingest")
@handle_errors
def clean_ingest(
    older_than: Annotated[
        float, typer.Option("--older-than", min=0, help="Only files older than this many seconds.")
    ] = 3600.0,
    as_json: JsonOpt = False,
) -> None:
    """Remove temporary files that interrupted writes left in the pools' ingest/ folders.

    Stored objects are never touched; a write in progress is younger than the threshold.

    Example: reviewtrail cas clean-ingest --older-than 86400
    """
    from reviewtrail.cas import FilesystemCas
    from reviewtrail.store import Store

    with Store.open() as store:
        removed = store.cas.clean_ingest(older_than) if isinstance(store.cas, FilesystemCas) else []
    if as_json:
        print_json({"removed": [str(p) for p in removed]})
    else:
        print(f"removed {len(removed)} temporary file(s)")
