"""``reviewtrail key``: writer keys, whose signatures tell a legitimate writer from anyone else
with access to the database (docs/architecture.md, "Signed records")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

__all__ = ["add", "app", "list_keys", "new", "require", "revoke", "rotate"]

app = typer.Typer(
    help="Writer keys: each record a process appends is signed with REVIEWTRAIL_SIGNING_KEY.",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ActorOpt = Annotated[str, typer.Option("--actor", help="Who makes this record.")]
PublicKeyArg = Annotated[Path, typer.Argument(help="The writer's Ed25519 public key (PEM, as 'key new' writes it).")]
NameOpt = Annotated[str, typer.Option("--name", help="The writer holding the key: a host, a service, a person.")]


@app.command("new")
@handle_errors
def new(
    file: Annotated[Path, typer.Argument(help="Where to write the private key (created, mode 0600).")],
    as_json: JsonOpt = False,
) -> None:
    """Make a new Ed25519 key pair: FILE (private, PEM PKCS#8, mode 0600) and FILE.pub (public).

    Never replaces a file (exit 6, nothing written). The private key stays with its writer: point
    REVIEWTRAIL_SIGNING_KEY at it; give FILE.pub to 'key add' and to readers ('--trusted-keys').

    Example: reviewtrail key new ~/.config/reviewtrail/ci-host.pem
    """
    from reviewtrail.ledger import new_signing_key

    key_id, public = new_signing_key(file)
    if as_json:
        print_json({"keyId": key_id, "privateKey": str(file), "publicKey": str(public)})
    else:
        print(f"key {key_id}: private key {file}, public key {public}")


def _print_record(seq: int, record_id: str, what: str, as_json: bool) -> None:
    if as_json:
        print_json({"seq": seq, "id": record_id})
    else:
        print(f"{what} (seq {seq}, {record_id})")


@app.command("add")
@handle_errors
def add(public_key: PublicKeyArg, name: NameOpt, actor: ActorOpt = "reviewtrail", as_json: JsonOpt = False) -> None:
    """Declare a writer's public key (store.key.declared@1): records after it may be signed with it.

    A key already declared, or ever revoked, is refused (exit 6). Once signatures are required,
    this record must itself be signed by a declared key (REVIEWTRAIL_SIGNING_KEY; exit 5 otherwise).

    Example: reviewtrail key add ci-host.pem.pub --name ci-host
    """
    from reviewtrail.app import open_store
    from reviewtrail.inputs import read_input
    from reviewtrail.ledger import declare_key

    pem = read_input(public_key, "key", field="public_key")
    with open_store() as store:
        env = declare_key(store.ledger, pem, name=name, actor=actor)
    _print_record(env.seq, env.id, f"key {env.payload_value['keyId']} of {name} declared", as_json)


@app.command("revoke")
@handle_errors
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (64 hex digits; see 'key list').")],
    reason: Annotated[str, typer.Option("--reason", help="Why the key is withdrawn (lost, leaked, retired).")],
    actor: ActorOpt = "reviewtrail",
    as_json: JsonOpt = False,
) -> None:
    """Revoke a writer key (store.key.revoked@1): a record it signs after this one is invalid.

    A revocation takes effect whoever wrote it, and for good. An unknown key is exit 3; the last
    declared key while signatures are required is refused (exit 6): rotate instead.

    Example: reviewtrail key revoke 3f2a…e9 --reason "laptop lost"
    """
    from reviewtrail.app import open_store
    from reviewtrail.ledger import revoke_key

    with open_store() as store:
        env = revoke_key(store.ledger, key_id, reason=reason, actor=actor)
    _print_record(env.seq, env.id, f"key {key_id} revoked", as_json)


@app.command("rotate")
@handle_errors
def rotate(
    public_key: PublicKeyArg,
    name: NameOpt,
    old: Annotated[str, typer.Option("--old", help="The key id to retire (64 hex digits).")],
    reason: Annotated[str, typer.Option("--reason", help="Why the old key is retired.")] = "rotated",
    actor: ActorOpt = "reviewtrail",
    as_json: JsonOpt = False,
) -> None:
    """Rotate: declare the new key, then revoke the old one, in one append (both or neither).

    Run it with the old (or another declared) key as REVIEWTRAIL_SIGNING_KEY, then point
    REVIEWTRAIL_SIGNING_KEY at the new key's private file.

    Example: reviewtrail key rotate ci-host-2027.pem.pub --name ci-host --old 3f2a…e9
    """
    from reviewtrail.app import open_store
    from reviewtrail.inputs import read_input
    from reviewtrail.ledger import rotate_key

    pem = read_input(public_key, "key", field="public_key")
    with open_store() as store:
        declared, revoked = rotate_key(store.ledger, pem, name=name, old_key_id=old, reason=reason, actor=actor)
    if as_json:
        print_json(
            {"declared": {"seq": declared.seq, "id": declared.id}, "revoked": {"seq": revoked.seq, "id": revoked.id}}
        )
    else:
        new_id = declared.payload_value["keyId"]
        print(f"key {new_id} of {name} declared (seq {declared.seq}); key {old} revoked (seq {revoked.seq})")


@app.command("require")
@handle_errors
def require(actor: ActorOpt = "reviewtrail", as_json: JsonOpt = False) -> None:
    """Require signatures from now on (store.signatures.required@1).

    From this record's own seq on, every record must be signed by a declared, unrevoked key, or
    'verify' reports it. The record is itself signed: run it with a declared key as
    REVIEWTRAIL_SIGNING_KEY (exit 5 otherwise). Only the earliest requirement counts (a second
    one is refused, exit 6).

    Example: REVIEWTRAIL_SIGNING_KEY=~/.config/reviewtrail/ci-host.pem reviewtrail key require
    """
    from reviewtrail.app import open_store
    from reviewtrail.ledger import require_signatures

    with open_store() as store:
        env = require_signatures(store.ledger, actor=actor)
    _print_record(env.seq, env.id, "signatures are required from here on", as_json)


@app.command("list")
@handle_errors
def list_keys(as_json: JsonOpt = False) -> None:
    """List the writer keys the ledger declares, their revocations, and where signatures are required.

    Example: reviewtrail key list --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.ledger import writer_keys

    with open_store() as store:
        found = writer_keys(store.ledger)
    if as_json:
        print_json(found.to_json())
        return
    for key in found.keys:
        revoked = f", revoked at seq {key['revokedAt']}" if key["revokedAt"] is not None else ""
        print(f"{key['keyId']}  {key['name']} (declared at seq {key['declaredAt']}{revoked})")
    required = found.required_from
    print(f"signatures required from seq {required}" if required is not None else "signatures are not required")
    if found.signer_key_id is not None:
        print(f"this process signs with {found.signer_key_id}")
