"""The artifact catalog: a version chain per (projectId, name) with a stable artifact id.

A version is created only by an upload, a download (MCP), a remote job's pulled-back
output, or ``declare_artifact`` from an agent; an ordinary run's file changes never
create one by themselves. Version numbers are claimed through a unique projection key,
so two writers can never both create version N; the next number is also above every
version recorded in the chain, so a lost or deleted projection row never lets a number be
used twice. Names, projects and sessions are checked before any byte is stored.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from reviewtrail.cas import CasRef
from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError
from reviewtrail.ledger import Recorded, format_time, new_record
from reviewtrail.media import media_type_for
from reviewtrail.provenance.catalog import ARTIFACT_VERSION
from reviewtrail.provenance.records._records import ArtifactVersion, Origin, artifact_id_for
from reviewtrail.provenance.records._storage_errors import disk_full_errors
from reviewtrail.provenance.runs._declare_guards import no_lineage_warning, no_pending_runs
from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT, check_project, get_session, require_live_session
from reviewtrail.provenance.runs._snapshot import open_beneath
from reviewtrail.store import Store

__all__ = [
    "VersionInfo",
    "declare_artifact",
    "get_version",
    "list_artifacts",
    "parse_spec",
    "record_version",
    "upload_artifact",
    "versions_of",
]

_RETRIES = 64  # with jittered backoff: enough for dozens of concurrent writers


@dataclass(frozen=True)
class VersionInfo(Recorded[ArtifactVersion]):
    """A recorded artifact version."""

    # What the caller should know about the version just created (e.g. bytes with no recorded lineage).
    warnings: list[str] = field(default_factory=list)

    @property
    def version(self) -> ArtifactVersion:
        return self.record

    def to_json(self) -> dict[str, Any]:
        doc = super().to_json()
        doc["seq"] = self.envelope.seq
        doc["warnings"] = list(self.warnings)
        return doc


def _check_name(name: str) -> str:
    if not name or len(name) > 256 or any(ord(c) < 32 or ord(c) == 127 for c in name) or "@" in name:
        raise InvalidInputError(f"{name!r} is not an artifact name (1-256 printable characters, no '@')", field="name")
    return name


def parse_spec(spec: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION``."""
    name, sep, version = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if not sep:
        return _check_name(spec), None
    if not version.isdigit() or int(version) < 1:
        raise InvalidInputError(f"{version!r} is not a version number", field="version")
    return _check_name(name), int(version)


def versions_of(store: Store, name: str, project_id: str = DEFAULT_PROJECT) -> list[VersionInfo]:
    """Every version of an artifact, oldest first, read from its records (each checked), so a
    deleted query-table row never hides a version."""
    return _recorded_versions(store, artifact_id_for(project_id, _check_name(name)))


def get_version(store: Store, name: str, version: int | None = None, project_id: str = DEFAULT_PROJECT) -> VersionInfo:
    """One version of an artifact (the latest when ``version`` is None), from its records."""
    check_project(project_id)
    versions = _recorded_versions(store, artifact_id_for(project_id, _check_name(name)))
    if not versions:
        raise NotFoundError(f"no artifact {name!r} in project {project_id}{_elsewhere(store, name)}", field="name")
    if version is None:
        return versions[-1]
    for info in versions:
        if info.record.version == version:
            return info
    raise NotFoundError(f"artifact {name!r} has no version {version} (latest: {len(versions)})", field="version")


def _elsewhere(store: Store, name: str) -> str:
    """A hint naming the projects that do hold an artifact ``name`` (a hint only, from the query
    table: the answer a user then asks for is read from the records)."""
    projects = sorted({str(row["project_id"]) for row in store.ledger.rows("prov_artifact_versions", name=name)})
    if not projects:
        return ""
    shown = ", ".join(projects[:10]) + (f" and {len(projects) - 10} more" if len(projects) > 10 else "")
    return f"; projects holding {name!r}: {shown}; pass --project ID (or set REVIEWTRAIL_PROJECT)"


def _recorded_versions(store: Store, artifact_id: str) -> list[VersionInfo]:
    """The version records of ``artifact_id`` in the chain, by version number: the records about
    the artifact, read and checked, never its query table."""
    found = []
    for env in store.ledger.records_about([f"artifact:{artifact_id}"], type=ARTIFACT_VERSION):
        info = VersionInfo.of(ArtifactVersion, env)
        if info.record.artifact_id == artifact_id:
            found.append(info)
    return sorted(found, key=lambda info: info.record.version)


def list_artifacts(store: Store, project_id: str = DEFAULT_PROJECT) -> list[VersionInfo]:
    """The latest version of every artifact in the project, by name."""
    rows = store.ledger.rows("prov_artifact_versions", project_id=check_project(project_id))
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["name"] not in latest or row["version"] > latest[row["name"]]["version"]:
            latest[row["name"]] = row
    out = []
    for name in sorted(latest):
        env = store.ledger.get(latest[name]["record_id"])
        out.append(VersionInfo.of(ArtifactVersion, env))
    return out


def _highest_recorded(store: Store, artifact_id: str) -> int:
    """The highest version number of the artifact in the chain itself (not its query table)."""
    highest = 0
    for env in store.ledger.read(type=ARTIFACT_VERSION, subject=f"artifact:{artifact_id}"):
        p = env.payload_value
        if p.get("artifactId") == artifact_id and isinstance(p.get("version"), int):
            highest = max(highest, p["version"])
    return highest


def record_version(
    store: Store,
    *,
    project_id: str,
    name: str,
    origin: Origin,
    content: CasRef,
    actor: str,
    session_id: str | None = None,
    source_path: str | None = None,
    derivation_ids: list[str] | None = None,
    prompt_manifest_id: str | None = None,
    external_ref: str | None = None,
) -> VersionInfo:
    """Append the next version of ``(project_id, name)``; retried when another writer claimed the number."""
    check_project(project_id)
    _check_name(name)
    artifact_id = artifact_id_for(project_id, name)
    snapshot = None
    if session_id is not None:
        s = get_session(store, session_id)
        snapshot = {
            "sessionId": s.session_id,
            "projectId": s.project_id,
            "createdAt": s.created_at,
            "recordId": s.record_id,
        }
    in_chain = _highest_recorded(store, artifact_id)
    for _attempt in range(_RETRIES):
        rows = store.ledger.rows("prov_artifact_versions", artifact_id=artifact_id)
        number = max([in_chain, *(r["version"] for r in rows)]) + 1
        payload = ArtifactVersion(
            artifact_id=artifact_id,
            project_id=project_id,
            name=name,
            version=number,
            origin=origin,
            content=content.to_json(),
            session_snapshot=snapshot,
            source_path=source_path,
            derivation_ids=derivation_ids or [],
            prompt_manifest_id=prompt_manifest_id,
            external_ref=external_ref,
            created_at=format_time(datetime.now(UTC)),
        )
        record = new_record(payload, actor=actor, privacy="private", subject=f"artifact:{artifact_id}")
        try:
            [env] = store.append([record])
        except ConflictError:
            time.sleep(random.uniform(0.001, 0.002 * (_attempt + 1)))  # noqa: S311 - jitter, not security
            continue
        return VersionInfo(payload, env)
    raise ConflictError(f"could not claim a version number for {name!r} after {_RETRIES} tries", field="name")


def _workspace_path(workspace: Path, path: str) -> tuple[Path, str]:
    rel = PurePosixPath(path[len("/workspace/") :] if path.startswith("/workspace/") else path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise InvalidInputError(f"{path!r} is not a path inside the workspace", field="path")
    full = workspace / Path(*rel.parts)
    real = Path(os.path.realpath(full))
    if not real.is_relative_to(Path(os.path.realpath(workspace))):
        raise InvalidInputError(f"{path!r} leads outside the workspace", field="path")
    if not real.is_file():
        raise InvalidInputError(f"{path!r} is not a file in the workspace", field="path")
    return real, rel.as_posix()


def declare_artifact(
    store: Store,
    *,
    session_id: str,
    name: str,
    path: str,
    project_id: str | None = None,
    media_type: str | None = None,
    actor: str = "agent",
    prompt_manifest_id: str | None = None,
) -> VersionInfo:
    """``declare_artifact`` from an agent: the workspace file becomes the next version (origin llm_declared),
    linked to the derivations that produced exactly these bytes at this path in this session.

    Refused (ConflictError) while a run of the session is pending (running, or killed before it
    was recorded). Bytes no recorded run wrote are declared with a warning in ``warnings``.
    """
    session = require_live_session(store, session_id)
    _check_name(name)
    project = check_project(project_id or session.project_id)
    if prompt_manifest_id is not None and store.ledger.get(prompt_manifest_id).type != "provenance.prompt-manifest@1":
        raise InvalidInputError(f"record {prompt_manifest_id} is not a prompt manifest", field="prompt_manifest_id")
    with no_pending_runs(store, session_id, then="declare again", shared=True):
        _real, rel = _workspace_path(session.workspace, path)
        fd = open_beneath(session.workspace, rel)  # the check above, then a read that cannot follow a swapped symlink
        if fd is None:
            raise InvalidInputError(f"{path!r} is not a regular file inside the workspace", field="path")
        with os.fdopen(fd, "rb", buffering=0) as stream, disk_full_errors(f"storing {rel} in the CAS", field="path"):
            content = store.cas.put_stream(stream, pool="data", media_type=media_type or media_type_for(rel))
        derivations = [
            r
            for r in store.ledger.rows("prov_derivations", session_id=session_id, path=rel)
            if r["digest"] == content.digest
        ]
        info = record_version(
            store,
            project_id=project,
            name=name,
            origin="llm_declared",
            content=content,
            actor=actor,
            session_id=session_id,
            source_path=rel,
            derivation_ids=[r["record_id"] for r in sorted(derivations, key=lambda r: r["seq"])],
            prompt_manifest_id=prompt_manifest_id,
        )
    return info if derivations else replace(info, warnings=[no_lineage_warning(rel, session_id)])


def upload_artifact(
    store: Store,
    *,
    name: str,
    file: str | Path,
    project_id: str = DEFAULT_PROJECT,
    media_type: str | None = None,
    actor: str = "user",
    session_id: str | None = None,
    origin: Origin = "user_upload",
    external_ref: str | None = None,
) -> VersionInfo:
    """A user upload (or, with ``origin="mcp_download"`` and ``external_ref``, an MCP download)."""
    if origin not in ("user_upload", "mcp_download"):
        raise InvalidInputError("uploads are user_upload or mcp_download", field="origin")
    check_project(project_id)
    _check_name(name)
    if session_id is not None:
        get_session(store, session_id)
    with disk_full_errors(f"storing {Path(file).name} in the CAS", field="file"):
        content = store.cas.put_file(file, pool="data", media_type=media_type or media_type_for(str(file)))
    return record_version(
        store,
        project_id=project_id,
        name=name,
        origin=origin,
        content=content,
        actor=actor,
        session_id=session_id,
        source_path=Path(file).name,
        external_ref=external_ref,
    )
