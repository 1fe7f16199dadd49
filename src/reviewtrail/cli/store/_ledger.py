"""``reviewtrail ledger``: read, append to and anchor the append-only log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._everyday_commands import everyday_command
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

__all__ = ["app", "append", "checkpoint", "show", "tail"]

app = typer.Typer(help="The append-only, hash-chained ledger.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


tail = app.command("tail")(
    everyday_command(
        "ledger",
        "tail",
        """Show the last records, oldest first.

    Example: reviewtrail ledger tail -n 5 --type cas.note --json
    """,
    )
)


@app.command("show")
@handle_errors
def show(record_id: Annotated[str, typer.Argument(help="Record id.")], as_json: JsonOpt = False) -> None:
    """Show one record with its payload, its signature (or null), and any records that supersede it.

    Example: reviewtrail ledger show 4706c9ae-a85b-49e3-a849-79e24e1bbcfd --json
    """
    import json

    from reviewtrail.app import open_store

    with open_store() as store:
        record = store.ledger.get(record_id)
        superseded_by = store.ledger.superseded_by(record_id)
        signature = store.ledger.signatures_at([record.seq]).get(record.seq)
    doc = record.to_json()
    doc["signature"] = signature.to_json() if signature is not None else None
    doc["supersededBy"] = superseded_by
    if as_json:
        print_json(doc)
    else:
        for key, value in doc.items():
            shown = json.dumps(value, ensure_ascii=False, indent=2) if isinstance(value, (dict, list)) else value
            print(f"{key}: {shown}")


@app.command("append")
@handle_errors
def append(
    type: Annotated[str, typer.Option("--type", help="Record type 'name@version', e.g. eval.result@1.")],
    actor: Annotated[str, typer.Option("--actor", help="Who makes this record.")],
    privacy: Annotated[str, typer.Option("--privacy", help="public-source, private or sensitive.")],
    payload: Annotated[
        str, typer.Option("--payload", help="JSON object, '@FILE' to read it from a file, or '-' for stdin.")
    ] = "{}",
    subject: Annotated[str | None, typer.Option("--subject", help="What the record is about.")] = None,
    supersedes: Annotated[str | None, typer.Option("--supersedes", help="Id of the record this corrects.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Append one record of your own type. CAS references in the payload must point at intact objects.

    Types in reviewtrail's own namespaces (provenance, trace, review, reviewer, evidence,
    stream.thought, store, checkpoint, human-review, reviewtrail) are refused: those records
    are written only by the commands that own them.

    Example: reviewtrail ledger append --type eval.result@1 --actor alice --privacy private
    --payload '{"file": {"hash": "<64 hex>", "size": 12}}'
    """
    from reviewtrail.app import open_store
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.ledger import NewRecord, is_reserved_type

    if is_reserved_type(type):
        raise InvalidInputError(
            f"{type!r} is reserved for reviewtrail's own records (written by the commands that own them); "
            "use a type of your own, e.g. eval.result@1",
            field="type",
        )
    record = NewRecord.make(
        type=type,
        actor=actor,
        privacy=privacy,
        payload=_read_payload(payload),
        subject=subject,
        supersedes=supersedes,
    )
    with open_store() as store:
        [env] = store.append([record])
    if as_json:
        print_json(env.to_json())
    else:
        print(f"seq {env.seq} id {env.id} hash {env.hash}")


def _read_payload(value: str) -> object:
    import json

    from reviewtrail.canonical import unique_members
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.inputs import read_input_text

    if value == "-" or value.startswith("@"):
        text = read_input_text(value if value == "-" else value[1:], "payload", field="payload", stdin=value == "-")
    else:
        text = value
    try:
        value = json.loads(text, object_pairs_hook=unique_members("payload"))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON: {exc}", field="payload") from exc
    except RecursionError as exc:
        raise InvalidInputError("nested too deeply", field="payload") from exc
    if not isinstance(value, dict):
        raise InvalidInputError(f"must be a JSON object, not {_json_kind(value)}", field="payload")
    return value


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


@app.command("checkpoint")
@handle_errors
def checkpoint(
    key: Annotated[
        Path | None,
        typer.Option("--key", help="Ed25519 private key (PEM, PKCS#8) to sign with; read, never stored."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the checkpoint to this new file (never replaced).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a statement of the ledger's head: store id, seq, head hash, record count, time.

    Keep checkpoints where the store's writers cannot change them (another machine, a
    write-once bucket, a signed commit); 'reviewtrail verify --checkpoint FILE' then shows
    the ledger still holds that head: not cut back, not replaced by an older copy, not
    rewritten. Without --out the statement is printed.

    Example: reviewtrail ledger checkpoint --key ~/keys/rt.pem --out ~/anchors/rt-2026-11-30.json
    """
    from reviewtrail.app import open_store
    from reviewtrail.inputs import read_input
    from reviewtrail.ledger import make_checkpoint, save_checkpoint

    key_pem = read_input(key, "key", field="key") if key is not None else None
    with open_store() as store:
        doc = make_checkpoint(store.ledger, store_id=getattr(store, "store_id", None), private_key_pem=key_pem)
    if out is not None:
        save_checkpoint(out, doc)
    if as_json or out is None:
        print_json(doc)
        return
    signed = f"signed, keyId {doc['signature']['keyId'][:16]}…" if "signature" in doc else "unsigned"
    print(f"checkpoint of seq {doc['seq']} (head {doc['headHash'][:12]}, {signed}) written to {out}")
