"""Read-only resources: artifacts and their versions, reviewer-call traces, the review queue.

Each is the JSON its command prints with ``--json``, read under the same lock as the tools:

- ``reviewtrail://artifacts`` (``artifact ls``), ``reviewtrail://artifacts/{name}`` (``artifact
  show``: every version), ``reviewtrail://artifacts/{name}/{version}`` (one version);
- ``reviewtrail://traces`` (``trace ls``), ``reviewtrail://traces/{skill}/{run}`` (``trace show``);
- ``reviewtrail://review-queue`` (``review queue``: blinded cards, those not public-source withheld
  as the ``review_queue`` tool withholds them, :mod:`._privacy`), and
  ``reviewtrail://review-queue/{campaign}`` and ``.../{campaign}/{version}``.

Artifacts are those of the server's project. A name, version or run that does not exist is a
resource-not-found error; any other reviewtrail error is a resource error with its message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.agents._privacy import served_cards
from reviewtrail.agents._toolbox import Toolbox
from reviewtrail.errors import InvalidInputError, NotFoundError, ReviewtrailError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["register_resources"]

JSON = "application/json"


def register_resources(server: MCPServer[Any], box: Toolbox) -> None:
    """Add the resources to ``server``."""
    read = _reader(box)
    project_dir = box.options.project_dir
    private = box.options.serve_private

    @server.resource("reviewtrail://artifacts", name="artifacts", mime_type=JSON)
    def artifacts() -> str:
        """The latest version of every artifact of the server's project (reviewtrail artifact ls)."""
        from reviewtrail.provenance.artifacts import list_artifacts

        return read(lambda: [v.to_json() for v in list_artifacts(box.store, box.project)])

    @server.resource("reviewtrail://artifacts/{name}", name="artifact-versions", mime_type=JSON)
    def artifact_versions(name: str) -> str:
        """Every version of one artifact, oldest first (reviewtrail artifact show NAME)."""
        from reviewtrail.provenance.artifacts import versions_of

        def versions() -> list[dict[str, Any]]:
            found = versions_of(box.store, name, box.project)
            if not found:
                raise NotFoundError(f"no artifact {name!r} in project {box.project}", field="name")
            return [v.to_json() for v in found]

        return read(versions)

    @server.resource("reviewtrail://artifacts/{name}/{version}", name="artifact-version", mime_type=JSON)
    def artifact_version(name: str, version: str) -> str:
        """One version of an artifact: its content reference, origin, session and derivations."""
        from reviewtrail.provenance.artifacts import get_version

        if not version.isdigit():
            raise _resource_error(InvalidInputError(f"{version!r} is not a version number", field="version"))
        return read(lambda: get_version(box.store, name, int(version), box.project).to_json())

    @server.resource("reviewtrail://traces", name="traces", mime_type=JSON)
    def traces() -> str:
        """Reviewer-call trace runs under .aris/traces (reviewtrail trace ls): calls, completion,
        last status, acceptance and verdicts."""
        from reviewtrail.tracing.commands import list_runs

        return read(lambda: [r.to_json() for r in list_runs(_project(project_dir))])

    @server.resource("reviewtrail://traces/{skill}/{run}", name="trace-run", mime_type=JSON)
    def trace_run(skill: str, run: str) -> str:
        """One trace run's metadata and a row per reviewer call (reviewtrail trace show SKILL/RUN)."""
        from reviewtrail.tracing.commands import show_run
        from reviewtrail.tracing.files import find_run

        return read(lambda: show_run(find_run(_project(project_dir), f"{skill}/{run}")).to_json())

    def cards(campaign: str | None, version: int | None) -> str:
        from reviewtrail.human_review.session import review_queue

        return read(lambda: served_cards(review_queue(box.store, campaign, version), serve_private=private))

    @server.resource("reviewtrail://review-queue", name="review-queue", mime_type=JSON)
    def queue() -> str:
        """Blinded human review cards, open items first (reviewtrail review queue)."""
        return cards(None, None)

    @server.resource("reviewtrail://review-queue/{campaign}", name="campaign-queue", mime_type=JSON)
    def campaign_queue(campaign: str) -> str:
        """Blinded cards of one campaign."""
        return cards(campaign, None)

    @server.resource("reviewtrail://review-queue/{campaign}/{version}", name="campaign-version-queue", mime_type=JSON)
    def campaign_version_queue(campaign: str, version: str) -> str:
        """Blinded cards of one campaign version."""
        if not version.isdigit():
            raise _resource_error(InvalidInputError(f"{version!r} is not a version number", field="version"))
        return cards(campaign, int(version))


def _project(project_dir: Path | None) -> Path:
    from reviewtrail.tracing.files import existing_project_root

    return existing_project_root(project_dir)


def _reader(box: Toolbox) -> Callable[[Callable[[], Any]], str]:
    """Run a read alone on the store; its value as JSON, a reviewtrail error as a resource error."""

    def read(fn: Callable[[], Any]) -> str:
        try:
            with box.held("the resource"):
                value = fn()
        except ReviewtrailError as exc:
            raise _resource_error(exc) from exc
        return json.dumps(value, indent=2, ensure_ascii=False)

    return read


def _resource_error(exc: ReviewtrailError) -> Exception:
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    kind = ResourceNotFoundError if isinstance(exc, NotFoundError) else ResourceError
    return kind(f"{exc} ({type(exc).__name__}, exit code {exc.exit_code})")
