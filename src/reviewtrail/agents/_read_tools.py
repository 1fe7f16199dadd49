"""Read tools: ``provenance`` (an artifact version's lineage) and ``verify`` (the whole store
against its chain), exactly as ``reviewtrail provenance --json`` and ``reviewtrail verify --json``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from reviewtrail.agents._outcome import failed_outcome
from reviewtrail.agents._signature import fields_of, with_parameters
from reviewtrail.agents._toolbox import Toolbox

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

__all__ = ["register_read_tools"]

Json = dict[str, Any]


def register_read_tools(server: MCPServer[Any], box: Toolbox) -> None:
    """Add ``provenance`` and ``verify`` to ``server``."""

    @box.tool(server, idempotent=True)
    def provenance(
        spec: Annotated[str, Field(description="NAME or NAME@VERSION of an artifact.")],
        project: Annotated[str | None, Field(description="Project (default: the server's).")] = None,
        format: Annotated[
            str,
            Field(
                description="tree or json (the version's lineage graph), prov (W3C PROV-JSON) or in-toto (SLSA v1 "
                "provenance); prov and in-toto also carry the earlier versions' lineage and the ledger head."
            ),
        ] = "tree",
        sign_key: Annotated[
            str | None,
            Field(
                description="With format in-toto: an Ed25519 private key file (PEM, PKCS#8) in the project folder "
                "or a folder given with --allow-path (never the store's signing key) to sign the statement with; a "
                "DSSE envelope is returned. Read, never stored."
            ),
        ] = None,
    ) -> Json:
        """provenance: trace an artifact version back to its derivations, runs, sessions and model
        turns, as 'reviewtrail provenance SPEC --json' (tree is given as its JSON graph). A key
        that is missing or not Ed25519 is refused (exit 2, field sign-key) before anything is read."""
        from reviewtrail.provenance.export import provenance_query, provenance_view

        pem = box.paths.read(sign_key, "key", field="sign-key") if sign_key is not None else None
        query = provenance_query(spec, project or box.project, format, as_json=True, sign_key_pem=pem)
        view = provenance_view(box.store, query)
        return view.document if view.document is not None else {"text": view.text}

    def verify(**arguments: Any) -> Json | CallToolResult:
        """verify: check everything commands read against the chain, as 'reviewtrail verify --json':
        every CAS object re-hashed, every ledger link, hash and reference, the store's identity and
        layout, its append-only guards, every query table recomputed, every .aris/traces file of
        project_dir (default: the git top level where the server runs) against its record, the
        given checkpoints (signed with public_keys) and trusted_keys; since: only what follows a
        checkpoint; read_data false: objects listed, not re-hashed. Every path is in the project
        folder or a folder given with --allow-path. A store with problems is a tool error (exit code
        4) listing each. repair (which writes: it needs --allow-writes) then completes what the chain
        supports. A server started with --allow-writes keeps the outcome in the store's status file,
        as the command does; a read-only server writes nothing."""
        from reviewtrail.app import catalog
        from reviewtrail.audit import AuditOptions, audit
        from reviewtrail.errors import EXIT_INTEGRITY
        from reviewtrail.tracing.files import existing_project_root

        paths = box.paths
        with contextlib.ExitStack() as held:

            def one(name: str) -> Path | None:
                given = arguments.pop(name)
                return held.enter_context(paths.opened(given, field=name)) if given is not None else None

            def each(name: str) -> tuple[Path, ...]:
                return tuple(held.enter_context(paths.opened(given, field=name)) for given in arguments.pop(name))

            given_dir = arguments.pop("project_dir")
            project_dir = paths.resolve(given_dir, field="project_dir") if given_dir is not None else paths.roots[0]
            options = AuditOptions(
                project_dir=existing_project_root(project_dir),
                checkpoints=each("checkpoints"),
                public_keys=each("public_keys"),
                trusted_keys=one("trusted_keys"),
                since=one("since"),
                keep_status=box.options.allow_writes,  # a read-only server writes nothing, the status file included
                **arguments,  # repair, read_data
            )
            catalog().load_all()  # every package, checked against its declaration, before any table is checked
            report = audit(box.store, options)  # the files are read through the descriptors checked
        doc = report.to_json()
        if report.ok:
            return doc
        return failed_outcome(doc, EXIT_INTEGRITY, f"{len(report.problems)} problem(s) found")

    from reviewtrail.audit import AuditOptions

    parameters = fields_of(AuditOptions, exclude=("keep_status",))
    box.tool(server, writes=lambda arguments: bool(arguments.get("repair")), idempotent=True)(
        with_parameters(verify, parameters, returns=Json)
    )
