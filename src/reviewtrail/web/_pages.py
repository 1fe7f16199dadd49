"""The inspector's audit pages, each an HTML page with its JSON twin under ``/api/``, GET and HEAD
only (docs/human-review.md, "The inspector"):

- **Campaign coverage** (``/coverage``, ``/coverage/CAMPAIGN/VERSION``): the figures of
  ``campaign coverage`` per scenario family, evaluation-only against export-eligible, and the
  disposition mix per family as a server-side SVG chart with a table beside it. Blinded: no run,
  agent, model, provider or adapter, no owner-only section, no aggregate preference.
- **Artifacts** (``/artifacts``) and **Artifact provenance** (``/provenance/NAME@VERSION``): the
  lineage of a version (``provenance``); under each execution log its working directory, its
  Process environment collapsed, the Managed package environment apart, and "not recorded" for a
  run without an environment snapshot. **Diff** (``/diff?old=NAME@V&new=NAME@W``).
- **Reviewer Specialist** (``/specialist/NAME@VERSION``): the version's review runs with their
  checks, findings and context summary (``review show``).
- **Traces** (``/traces``, ``/traces/SKILL/RUN``): runs, calls with acceptance labels, the
  divergence between rounds, and the ``trace verify`` check.
- **Store health** (``/health``): the ledger head, and the last ``verify`` result, which no
  record holds (``verify`` prints its report and appends nothing).

Every read goes through :class:`~reviewtrail.web._reads.Reads`; every page through the app's
``page`` (its templates) and every route through its ``read`` (GET and HEAD).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from fastapi.responses import HTMLResponse

from reviewtrail.errors import InvalidInputError
from reviewtrail.web._figures import coverage_figures, diff_rows, disposition_chart, execution_logs, lineage_rows
from reviewtrail.web._reads import Reads

__all__ = ["NO_VERIFY_RECORDED", "add_pages"]

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


class Page(Protocol):
    """The app's page renderer: template ``name`` with ``context``, answered with ``code``."""

    def __call__(self, name: str, code: int = 200, **context: Any) -> HTMLResponse: ...


class Read(Protocol):
    """The app's route decorator: GET and HEAD at ``path``."""

    def __call__(self, path: str, summary: str, **options: Any) -> Callable[[Endpoint], Endpoint]: ...


DEFAULT_PROJECT = "default"
NO_VERIFY_RECORDED = (
    "no verify result recorded: 'reviewtrail verify' has not been run on this store's folder since it "
    "began keeping its status file"
)
VERIFY_STATUS_NOTE = (
    "as the last 'reviewtrail verify' on this store's folder left it in verify-status.json: a status "
    "file, not a ledger record (verify appends nothing), so it says what was found then, not now"
)


def _spec(spec: str, project: str) -> tuple[str, int | None]:
    """``NAME[@VERSION]`` checked as ``provenance`` checks it (exit 2 for a bad one)."""
    from reviewtrail.provenance.export import provenance_query

    query = provenance_query(spec, project, "json")
    return query.name, query.version


def add_pages(reads: Reads, page: Page, read: Read) -> None:
    """Register the pages above through ``read`` (the app's GET and HEAD routes)."""
    _coverage(reads, page, read)
    _artifacts(reads, page, read)
    _traces_and_health(reads, page, read)


def _coverage(reads: Reads, page: Page, read: Read) -> None:
    @read("/coverage", "Campaign coverage: the campaign versions", response_class=HTMLResponse)
    def coverage_index() -> HTMLResponse:
        return page("coverage_index.html", campaigns=reads.campaigns())

    def figures(campaign: str, version: int) -> dict[str, Any]:
        return coverage_figures(reads.coverage(campaign, version).to_json())

    @read("/coverage/{campaign}/{version}", "Campaign coverage", response_class=HTMLResponse)
    def coverage(campaign: str, version: int) -> HTMLResponse:
        doc = figures(campaign, version)
        mix = [(f["family"], f["decisions"]["byDisposition"]) for f in doc["families"]]
        title = f"Active decisions by disposition per scenario family, {campaign} v{version}"
        return page("coverage.html", doc=doc, chart=disposition_chart(mix, title=title))

    @read("/api/coverage/{campaign}/{version}", "Campaign coverage (blinded figures)")
    def api_coverage(campaign: str, version: int) -> dict[str, Any]:
        return figures(campaign, version)


def _provenance_doc(reads: Reads, spec: str, project: str) -> dict[str, Any]:
    name, version = _spec(spec, project)
    graph = reads.lineage(name, version, project).to_json()
    root = next(n for n in graph["nodes"] if n["id"] == graph["root"])
    logs = []
    for node in execution_logs(graph):
        attributes = node["attributes"]
        revision = attributes.get("environmentRevisionId")
        logs.append(
            {
                "id": node["id"],
                "recordId": node["recordId"],
                "label": node["label"],
                "workingDirectory": attributes.get("workingDirectory"),
                "processEnvironment": reads.environment(attributes.get("envSnapshot")).to_json(),
                "managedPackageEnvironment": {"recorded": revision is not None, "revisionId": revision},
            }
        )
    versions = [v.version.version for v in reads.versions(name, project)]
    return {
        "name": name,
        "version": root["attributes"]["version"],
        "project": project,
        "versions": versions,
        "executionLogs": logs,
        "graph": graph,
    }


def _artifacts(reads: Reads, page: Page, read: Read) -> None:
    @read("/artifacts", "Artifacts: the latest version of each", response_class=HTMLResponse)
    def artifacts(project: str = DEFAULT_PROJECT) -> HTMLResponse:
        return page("artifacts.html", project=project, artifacts=reads.artifacts(project))

    @read("/api/artifacts", "Artifacts: the latest version of each")
    def api_artifacts(project: str = DEFAULT_PROJECT) -> list[dict[str, Any]]:
        return [v.to_json() for v in reads.artifacts(project)]

    @read("/provenance/{spec:path}", "Artifact provenance", response_class=HTMLResponse)
    def provenance(spec: str, project: str = DEFAULT_PROJECT) -> HTMLResponse:
        doc = _provenance_doc(reads, spec, project)
        return page("provenance.html", doc=doc, relations=lineage_rows(doc["graph"]))

    @read("/api/provenance/{spec:path}", "Artifact provenance: lineage and execution logs")
    def api_provenance(spec: str, project: str = DEFAULT_PROJECT) -> dict[str, Any]:
        return _provenance_doc(reads, spec, project)

    def version_diff(old: str | None, new: str | None, project: str) -> dict[str, Any]:
        for field, value in (("old", old), ("new", new)):
            if not value:
                raise InvalidInputError("give two versions: ?old=NAME@VERSION&new=NAME@VERSION", field=field)
        return reads.diff(_spec(old or "", project), _spec(new or "", project), project).to_json()

    @read("/diff", "Text diff between two artifact versions", response_class=HTMLResponse)
    def diff(old: str | None = None, new: str | None = None, project: str = DEFAULT_PROJECT) -> HTMLResponse:
        doc = version_diff(old, new, project)
        return page("diff.html", doc=doc, rows=diff_rows(doc), project=project)

    @read("/api/diff", "Text diff between two artifact versions")
    def api_diff(old: str | None = None, new: str | None = None, project: str = DEFAULT_PROJECT) -> dict[str, Any]:
        return version_diff(old, new, project)

    def specialist_doc(spec: str, project: str) -> dict[str, Any]:
        name, version = _spec(spec, project)
        info, outcomes = reads.reviews(name, version, project)
        return {
            "name": name,
            "version": info.version.version,
            "project": project,
            "versionRecordId": info.envelope.id,
            "reviews": [o.to_json() for o in outcomes],
        }

    @read("/specialist/{spec:path}", "Reviewer Specialist card", response_class=HTMLResponse)
    def specialist(spec: str, project: str = DEFAULT_PROJECT) -> HTMLResponse:
        return page("specialist.html", doc=specialist_doc(spec, project))

    @read("/api/specialist/{spec:path}", "Reviewer Specialist: an artifact version's review runs")
    def api_specialist(spec: str, project: str = DEFAULT_PROJECT) -> dict[str, Any]:
        return specialist_doc(spec, project)


def _traces_and_health(reads: Reads, page: Page, read: Read) -> None:
    def traces_doc() -> dict[str, Any]:
        project, runs, check = reads.traces()
        shown = None if check is None else check.to_json()
        return {"project": str(project), "runs": [r.to_json() for r in runs], "check": shown}

    @read("/traces", "Reviewer-call traces", response_class=HTMLResponse)
    def traces() -> HTMLResponse:
        return page("traces.html", doc=traces_doc())

    @read("/api/traces", "Reviewer-call traces: runs and the trace check")
    def api_traces() -> dict[str, Any]:
        return traces_doc()

    def run_doc(skill: str, run_id: str) -> dict[str, Any]:
        view, divergence = reads.trace_run(skill, run_id)
        return {"run": view.to_json(), "divergence": divergence.to_json()}

    @read("/traces/{skill}/{run_id}", "A trace run: calls and divergence", response_class=HTMLResponse)
    def trace_run(skill: str, run_id: str) -> HTMLResponse:
        return page("trace_run.html", doc=run_doc(skill, run_id))

    @read("/api/traces/{skill}/{run_id}", "A trace run: calls and divergence")
    def api_trace_run(skill: str, run_id: str) -> dict[str, Any]:
        return run_doc(skill, run_id)

    def health_doc() -> dict[str, Any]:
        state = reads.head()
        head = state.head
        shown = None if head is None else {"seq": head.seq, "hash": head.hash, "time": head.time, "type": head.type}
        status = state.last_verify
        last = None
        if status is not None:
            since = (head.seq - status.head_seq) if head is not None else None
            last = status.to_json() | {"recordsSince": since}
        return {
            "storeId": state.store_id,
            "createdAt": state.created_at,
            "head": shown,
            "lastVerify": last,
            "lastVerifyNote": NO_VERIFY_RECORDED if status is None else VERIFY_STATUS_NOTE,
        }

    @read("/health", "Store health", response_class=HTMLResponse)
    def health() -> HTMLResponse:
        return page("health.html", doc=health_doc())

    @read("/api/health", "Store health: the ledger head and the last verify result")
    def api_health() -> dict[str, Any]:
        return health_doc()
