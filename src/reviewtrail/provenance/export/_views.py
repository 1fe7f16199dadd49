"""What ``reviewtrail artifact diff`` and ``reviewtrail provenance`` show, read from a store.

:func:`diff_versions` reads two versions' bytes from the CAS and diffs them (never stored);
:func:`provenance_query` checks a request before any store is opened and
:func:`provenance_view` gives the document or text of the chosen format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.artifacts._catalog import get_version, parse_spec
from reviewtrail.provenance.artifacts._diff import VersionDiff, artifact_version_diff
from reviewtrail.provenance.artifacts._lineage import lineage, render_tree
from reviewtrail.provenance.export._graph import export_source
from reviewtrail.provenance.export._intoto import to_in_toto
from reviewtrail.provenance.export._prov import to_prov_json
from reviewtrail.provenance.export._signed import sign_statement
from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT
from reviewtrail.store import Store

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "PROVENANCE_FORMATS",
    "ProvenanceFormat",
    "ProvenanceQuery",
    "ProvenanceView",
    "diff_versions",
    "provenance_query",
    "provenance_view",
]

ProvenanceFormat = Literal["tree", "json", "prov", "in-toto"]
PROVENANCE_FORMATS: tuple[ProvenanceFormat, ...] = ("tree", "json", "prov", "in-toto")


def diff_versions(
    store: Store, old: tuple[str, int | None], new: tuple[str, int | None], project_id: str = DEFAULT_PROJECT
) -> VersionDiff:
    """Diff version ``old`` against ``new`` (each ``(name, version)`` as :func:`parse_spec` gives it;
    version None: the latest), their bytes read (and verified) from the CAS."""
    (a_name, a_ver), (b_name, b_ver) = old, new
    a, b = get_version(store, a_name, a_ver, project_id), get_version(store, b_name, b_ver, project_id)
    return artifact_version_diff(
        store.cas.read(a.version.content["digest"]),
        store.cas.read(b.version.content["digest"]),
        old_media_type=a.version.content["mediaType"],
        new_media_type=b.version.content["mediaType"],
        old_label=f"{a_name}@{a.version.version}",
        new_label=f"{b_name}@{b.version.version}",
    )


@dataclass(frozen=True)
class ProvenanceQuery:
    """One artifact version (``version`` None: the latest) and the format to show its lineage in;
    an in-toto statement is signed (a DSSE envelope) when ``sign_key`` is given."""

    name: str
    version: int | None
    project_id: str
    format: ProvenanceFormat
    sign_key: Ed25519PrivateKey | None = None


def provenance_query(
    spec: str, project_id: str, format: str, *, as_json: bool = False, sign_key_pem: bytes | None = None
) -> ProvenanceQuery:
    """Check ``NAME[@VERSION]`` and the format (tree, json, prov, in-toto); ``as_json`` turns the
    tree into its JSON document. ``sign_key_pem``: an Ed25519 private key (PEM, PKCS#8) to sign
    the in-toto statement with, checked by the ledger checkpoints' rules (refused naming
    ``sign-key`` for another format or another kind of key). Pure: nothing is read."""
    name, version = parse_spec(spec)
    if format not in PROVENANCE_FORMATS:
        raise InvalidInputError(f"{format!r} is not tree, json, prov or in-toto", field="format")
    chosen: ProvenanceFormat = "json" if format == "tree" and as_json else format
    key = None
    if sign_key_pem is not None:
        if chosen != "in-toto":
            raise InvalidInputError(f"signs in-toto statements only, not the {chosen} format", field="sign-key")
        key = _signing_key(sign_key_pem)
    return ProvenanceQuery(name, version, project_id, chosen, key)


def _signing_key(pem: bytes) -> Ed25519PrivateKey:
    from reviewtrail.ledger import load_private_key

    try:
        return load_private_key(pem)
    except InvalidInputError as exc:
        message = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise InvalidInputError(message, field="sign-key") from exc


@dataclass(frozen=True)
class ProvenanceView:
    """A JSON document (json, prov, in-toto) or the rendered tree (tree)."""

    document: dict[str, Any] | None = None
    text: str | None = None


def provenance_view(store: Store, query: ProvenanceQuery) -> ProvenanceView:
    """The lineage of the queried version in its format: prov and in-toto also carry the
    earlier versions' lineage and the ledger head they were read at (in-toto: signed when the
    query has a key); tree and json are the version's own lineage graph."""
    if query.format == "prov":
        return ProvenanceView(document=to_prov_json(*export_source(store, query.name, query.version, query.project_id)))
    if query.format == "in-toto":
        statement = to_in_toto(*export_source(store, query.name, query.version, query.project_id))
        signed = sign_statement(statement, query.sign_key) if query.sign_key is not None else statement
        return ProvenanceView(document=signed)
    graph = lineage(store, query.name, query.version, query.project_id)
    if query.format == "json":
        return ProvenanceView(document=graph.to_json())
    return ProvenanceView(text=render_tree(graph))
