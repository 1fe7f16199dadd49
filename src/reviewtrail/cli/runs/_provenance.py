"""``reviewtrail run | session | artifact | provenance``: sandboxed runs and the lineage of artifacts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, table

__all__ = ["artifact_app", "provenance", "session_app"]

session_app = typer.Typer(help="Sessions: each owns a sandbox workspace.", no_args_is_help=True)
artifact_app = typer.Typer(help="The artifact catalog: versions per (project, name).", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[str, typer.Option("--project", envvar="REVIEWTRAIL_PROJECT", help="Project id.")]


@session_app.command("new")
@handle_errors
def session_new(project: ProjectOpt = "default", as_json: JsonOpt = False) -> None:
    """Start a session with an empty workspace.

    Example: reviewtrail session new --project paper-42 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.runs import create_session

    with open_store() as store:
        info = create_session(store, project)
    print_json(info.to_json()) if as_json else print(info.session_id)


@session_app.command("ls")
@handle_errors
def session_ls(
    project: Annotated[str | None, typer.Option("--project", help="Only this project.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List sessions.

    Example: reviewtrail session ls --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.runs import list_sessions

    with open_store() as store:
        sessions = list_sessions(store, project)
    if as_json:
        print_json([s.to_json() for s in sessions])
        return
    table(
        "sessions",
        ["session", "project", "created", "state"],
        [[s.session_id, s.project_id, s.created_at, "deleted" if s.deleted else "live"] for s in sessions],
    )


@session_app.command("rm")
@handle_errors
def session_rm(session_id: Annotated[str, typer.Argument(help="Session id.")], as_json: JsonOpt = False) -> None:
    """Delete a session's workspace; its runs, artifacts and CAS objects stay.

    The deletion is recorded first, then the workspace is removed; if that was interrupted,
    running the same command again removes the rest (without recording it twice).

    Example: reviewtrail session rm 01a2b3c4-...
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.runs import delete_session

    with open_store() as store:
        info = delete_session(store, session_id)
    if as_json:
        print_json(info.to_json())
    elif info.resumed:
        print(f"finished removing the workspace of session {info.session_id} (its deletion was already recorded)")
    else:
        print(f"deleted workspace of session {info.session_id}")


@artifact_app.command("declare")
@handle_errors
def artifact_declare(
    name: Annotated[str, typer.Argument(help="Artifact name.")],
    session: Annotated[str, typer.Option("--session", help="Session whose workspace holds the file.")],
    path: Annotated[str, typer.Option("--path", help="File path inside the workspace.")],
    media_type: Annotated[str | None, typer.Option("--media-type", help="Media type (default: by suffix).")] = None,
    prompt_manifest: Annotated[
        str | None, typer.Option("--prompt-manifest", help="Record id of the model turn that declared it.")
    ] = None,
    actor: Annotated[str, typer.Option("--actor", help="Who declares it.")] = "agent",
    as_json: JsonOpt = False,
) -> None:
    """declare_artifact: make a workspace file the next version of NAME (origin llm_declared).

    Refused (exit 6) while a run of the session is pending; bytes that no recorded run wrote
    are declared with a warning (on stderr, and in "warnings" with --json).

    Example: reviewtrail artifact declare results.csv --session 01a2... --path results.csv
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.artifacts import declare_artifact

    with open_store() as store:
        info = declare_artifact(
            store,
            session_id=session,
            name=name,
            path=path,
            media_type=media_type,
            actor=actor,
            prompt_manifest_id=prompt_manifest,
        )
    _print_version(info.to_json(), as_json)


@artifact_app.command("upload")
@handle_errors
def artifact_upload(
    name: Annotated[str, typer.Argument(help="Artifact name.")],
    file: Annotated[Path, typer.Argument(help="File to upload.")],
    project: ProjectOpt = "default",
    media_type: Annotated[str | None, typer.Option("--media-type", help="Media type (default: by suffix).")] = None,
    actor: Annotated[str, typer.Option("--actor", help="Who uploads it.")] = "user",
    origin: Annotated[str, typer.Option("--origin", help="user_upload, or mcp_download for fetched records.")] = (
        "user_upload"
    ),
    external_ref: Annotated[str | None, typer.Option("--external-ref", help="Where a download came from.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Upload a file as the next version of NAME (origin user_upload or mcp_download).

    Example: reviewtrail artifact upload dataset.csv ./data/dataset.csv --project paper-42
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.artifacts import upload_artifact

    with open_store() as store:
        info = upload_artifact(
            store, name=name, file=file, project_id=project, media_type=media_type, actor=actor,
            origin=origin, external_ref=external_ref,  # type: ignore[arg-type]  # checked by upload_artifact
        )  # fmt: skip
    _print_version(info.to_json(), as_json)


def _print_version(doc: dict[str, object], as_json: bool) -> None:
    warnings = doc.get("warnings")
    for warning in warnings if isinstance(warnings, list) else []:
        sys.stderr.write(f"warning: {warning}\n")
    if as_json:
        print_json(doc)
    else:
        content = doc["content"]
        assert isinstance(content, dict)
        print(f"{doc['name']}@{doc['version']} {content['digest']} ({content['size']} bytes, {doc['origin']})")


@artifact_app.command("ls")
@handle_errors
def artifact_ls(project: ProjectOpt = "default", as_json: JsonOpt = False) -> None:
    """List artifacts (latest version of each).

    Example: reviewtrail artifact ls --project paper-42 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.artifacts import list_artifacts

    with open_store() as store:
        items = list_artifacts(store, project)
    if as_json:
        print_json([i.to_json() for i in items])
        return
    table(
        "artifacts",
        ["name", "latest", "origin", "digest", "size", "created"],
        [
            [
                i.version.name,
                str(i.version.version),
                i.version.origin,
                str(i.version.content["digest"])[:19],
                str(i.version.content["size"]),
                i.version.created_at,
            ]
            for i in items
        ],
    )


@artifact_app.command("show")
@handle_errors
def artifact_show(
    name: Annotated[str, typer.Argument(help="Artifact name.")],
    project: ProjectOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Show every version of an artifact.

    Example: reviewtrail artifact show results.csv --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.artifacts import versions_of

    with open_store() as store:
        versions = versions_of(store, name, project)
    if not versions:
        from reviewtrail.errors import NotFoundError

        raise NotFoundError(f"no artifact {name!r} in project {project}", field="name")
    if as_json:
        print_json([v.to_json() for v in versions])
        return
    table(
        f"{name} ({versions[0].version.artifact_id})",
        ["version", "origin", "digest", "size", "session", "created"],
        [
            [
                str(v.version.version),
                v.version.origin,
                str(v.version.content["digest"])[:19],
                str(v.version.content["size"]),
                str((v.version.session_snapshot or {}).get("sessionId", "")),
                v.version.created_at,
            ]
            for v in versions
        ],
    )


@artifact_app.command("diff")
@handle_errors
def artifact_diff(
    old: Annotated[str, typer.Argument(help="NAME@VERSION")],
    new: Annotated[str, typer.Argument(help="NAME@VERSION")],
    project: ProjectOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Diff two versions of a text artifact, computed from the CAS (never stored).

    Example: reviewtrail artifact diff results.csv@1 results.csv@2
    """
    from reviewtrail.app import open_store
    from reviewtrail.provenance.artifacts import parse_spec
    from reviewtrail.provenance.export import diff_versions

    versions = parse_spec(old), parse_spec(new)
    with open_store() as store:
        diff = diff_versions(store, *versions, project)
    print_json(diff.to_json()) if as_json else print(diff.unified(), end="")


@artifact_app.command("verify-envelope")
@handle_errors
def artifact_verify_envelope(
    file: Annotated[Path, typer.Argument(help="A DSSE envelope from 'provenance --format in-toto --sign-key'.")],
    public_key: Annotated[
        list[Path],
        typer.Option("--public-key", help="Ed25519 public key (PEM or OpenSSH) that may have signed it (repeatable)."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Check a signed in-toto export: a signature by one of the keys over its DSSE PAE, then its statement.

    Exit 4 when no signature verifies (altered, or signed by another key) or the payload is not an
    in-toto statement; exit 2 for an envelope or key that cannot be read.

    Example: reviewtrail artifact verify-envelope results.intoto.json --public-key ~/keys/rt.pub
    """
    from reviewtrail.inputs import read_input
    from reviewtrail.provenance.export import verify_envelope

    keys = [read_input(path, "key", field="public_key") for path in public_key]
    verified = verify_envelope(read_input(file, "envelope", field="envelope"), keys)
    if as_json:
        print_json(verified.to_json())
        return
    print("\n".join(verified.summary()))


@handle_errors
def provenance(
    spec: Annotated[str, typer.Argument(help="NAME or NAME@VERSION.")],
    project: ProjectOpt = "default",
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="tree, json, prov (W3C PROV-JSON) or in-toto (SLSA v1 provenance). "
            "prov and in-toto also carry the earlier versions' lineage.",
        ),
    ] = "tree",
    sign_key: Annotated[
        Path | None,
        typer.Option(
            "--sign-key",
            help="With --format in-toto: sign the statement with this Ed25519 private key (PEM, PKCS#8; the "
            "key of 'ledger checkpoint --key') and print a DSSE envelope. Read, never stored.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Trace an artifact version back to its derivations, runs, sessions and model turns.

    prov and in-toto name the ledger head they were read at. With --sign-key the in-toto
    statement is printed as a signed DSSE envelope (payloadType application/vnd.in-toto+json);
    a key that is missing or not Ed25519 is refused (exit 2) before anything is read or printed.

    Example: reviewtrail provenance results.csv@2 --format in-toto --sign-key ~/keys/rt.pem > results.intoto.json
    """
    from reviewtrail.app import open_store
    from reviewtrail.inputs import read_input
    from reviewtrail.provenance.export import provenance_query, provenance_view

    pem = read_input(sign_key, "key", field="sign-key") if sign_key is not None else None
    query = provenance_query(spec, project, format, as_json=as_json, sign_key_pem=pem)
    with open_store() as store:
        view = provenance_view(store, query)
    if view.document is not None:
        print_json(view.document)
    else:
        print(view.text)
