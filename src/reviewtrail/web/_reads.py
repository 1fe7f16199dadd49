"""What the inspector's pages show, read through the library calls the command line uses, on
stores opened read-only. Reads run side by side: each takes a store of its own from a
:class:`~._store_pool.StorePool` (its own connection to the ledger) and no lock is shared by
every read. A card is found by its position through the query tables' indexes
(:func:`~reviewtrail.human_review.session.queue_position`), at the cost of one card wherever it stands.

Besides the review pages' reads: campaign coverage (``campaign coverage``), the artifact catalog,
lineage and diff (``artifact ls|show|diff``, ``provenance``), a run's recorded environment (read
from the CAS as ``cas cat`` does), the Reviewer Specialist's review runs (``review show``), the
project's reviewer-call traces (``trace ls|show|divergence|verify``) and the ledger head.

Nothing here adds provenance to a card: a :class:`~reviewtrail.human_review.session.QueueCard` holds no
run, agent, model, provider or adapter, and the page is drawn from it alone. Who produced A and
B comes only from :func:`~reviewtrail.human_review.session.history`, which reveals it through the reveal
gate once the item has a decision.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import InvalidInputError, NotFoundError, ReviewtrailError

if TYPE_CHECKING:
    from reviewtrail.audit import VerifyStatus
    from reviewtrail.human_review.campaigns import CampaignSummary
    from reviewtrail.human_review.quality import Coverage
    from reviewtrail.human_review.session import History, OwnCounts, QueueCard, SessionProgress
    from reviewtrail.ledger import Envelope
    from reviewtrail.provenance.artifacts import LineageGraph, VersionDiff, VersionInfo
    from reviewtrail.reviewer import ReviewOutcome
    from reviewtrail.store import Store
    from reviewtrail.tracing.commands import Divergence, RunSummary, RunView, TraceCheck
    from reviewtrail.web._store_pool import StorePool

__all__ = ["CardView", "Environment", "Reads", "StoreHead"]

_INT64_MAX = 2**63 - 1  # the largest integer a ledger's query tables hold


@dataclass(frozen=True)
class CardView:
    """Card ``position`` (1-based) of a campaign version's queue, unresolved items first; ``more``
    whether a card follows it. Drawn for a signed-in ``reviewer`` (position 0): the next card of
    their queue, leased to them, and their ``own`` counts."""

    campaign_id: str
    version: int
    position: int
    card: QueueCard | None
    more: bool
    reviewer: str | None = None
    own: OwnCounts | None = None


class Reads:
    """The inspector's reads, each over a read-only store of ``stores`` that no other read uses
    meanwhile."""

    def __init__(self, stores: StorePool) -> None:
        self._stores = stores
        self._project_root: Path | None = None

    def _store(self) -> AbstractContextManager[Store]:
        return self._stores.store()

    def campaigns(self) -> list[CampaignSummary]:
        from reviewtrail.human_review.campaigns import list_campaigns

        with self._store() as store:
            return list_campaigns(store)

    def card(self, campaign_id: str, version: int, position: int) -> CardView:
        """Card ``position`` of the queue of ``campaign_id`` version ``version``: exit 3 (field
        ``campaign``) for a version with no prompt, exit 2 (field ``card``) for a position out of
        the queue's range, exit 3 (field ``card``) past its last card."""
        from reviewtrail.human_review.campaigns import require_campaign
        from reviewtrail.human_review.session import QUEUE_MAX, queue_position

        if not 1 <= position <= QUEUE_MAX:
            raise InvalidInputError(f"must be from 1 to {QUEUE_MAX}, got {position}", field="card")
        _check_version(version)
        with self._store() as store:
            found = queue_position(store, campaign_id, version, position)
            if found.cards == 0:  # no item: the campaign version may not exist (a card says it does)
                require_campaign(store.ledger, campaign_id, version)
        if found.card is None and found.cards:
            raise NotFoundError(f"the queue has {found.cards} card(s), there is no card {position}", field="card")
        return CardView(campaign_id, version, position, found.card, found.more)

    def check_version(self, version: int) -> None:
        """Exit 2 (field ``version``) for a campaign version no ledger could hold."""
        _check_version(version)

    def progress(self, campaign_id: str, version: int) -> SessionProgress:
        """The status line's counts (:func:`~reviewtrail.human_review.session.campaign_progress`): exit 3
        (field ``campaign``) for a version with no prompt."""
        from reviewtrail.human_review.session import campaign_progress

        _check_version(version)
        with self._store() as store:
            return campaign_progress(store, campaign_id, version)

    def history(self, item_id: str) -> History:
        from reviewtrail.human_review.session import history

        with self._store() as store:
            return history(store, item_id)

    def blinded_card(self, item_id: str) -> QueueCard:
        """The item's blinded card (prompt, evidence, criterion, candidates A and B in display
        order, no producer), for changing its decision judged blinded."""
        from reviewtrail.human_review.session import queue_card

        with self._store() as store, store.ledger.snapshot():
            return queue_card(store.ledger, item_id, decided=True)

    def coverage(self, campaign_id: str, version: int) -> Coverage:
        """``campaign coverage``: exit 3 (field ``campaign``) for a version with no prompt, exit 2
        (field ``version``) for a version no ledger could hold."""
        from reviewtrail.human_review.quality import campaign_coverage

        if not 1 <= version <= _INT64_MAX:
            raise InvalidInputError(f"must be from 1 to {_INT64_MAX}, got {version}", field="version")
        with self._store() as store:
            return campaign_coverage(store, campaign_id, version)

    def artifacts(self, project_id: str) -> list[VersionInfo]:
        """``artifact ls``: the latest version of each artifact of the project."""
        from reviewtrail.provenance.artifacts import list_artifacts

        with self._store() as store:
            return list_artifacts(store, project_id)

    def versions(self, name: str, project_id: str) -> list[VersionInfo]:
        """``artifact show``: every version of an artifact, oldest first; exit 3 (field ``name``) for none."""
        from reviewtrail.provenance.artifacts import versions_of

        with self._store() as store:
            found = versions_of(store, name, project_id)
        if not found:
            raise NotFoundError(f"no artifact {name!r} in project {project_id}", field="name")
        return found

    def lineage(self, name: str, version: int | None, project_id: str) -> LineageGraph:
        """``provenance NAME[@VERSION] --format json``: the version's lineage graph."""
        from reviewtrail.provenance.artifacts import lineage

        with self._store() as store:
            return lineage(store, name, version, project_id)

    def environment(self, ref: dict[str, Any] | None) -> Environment:
        """A run's recorded process environment (``envSnapshot``: canonical JSON in the CAS, read
        and verified as ``cas cat`` reads it); not recorded when ``ref`` is None. An object that
        cannot be read or is not a JSON object is reported in ``problem``, never raised."""
        from reviewtrail.canonical import loads_json

        if ref is None:
            return Environment(recorded=False)
        digest = str(ref.get("digest", ""))
        try:
            with self._store() as store:
                data = store.cas.read(digest)
            value = loads_json(data)
        except (ReviewtrailError, ValueError) as exc:
            return Environment(recorded=True, digest=digest, problem=str(exc))
        if not isinstance(value, dict):
            return Environment(recorded=True, digest=digest, problem="the snapshot is not a JSON object")
        variables = {str(k): v if isinstance(v, str) else str(v) for k, v in sorted(value.items())}
        return Environment(recorded=True, digest=digest, variables=variables)

    def diff(self, old: tuple[str, int | None], new: tuple[str, int | None], project_id: str) -> VersionDiff:
        """``artifact diff OLD NEW``: computed from the CAS, never stored."""
        from reviewtrail.provenance.export import diff_versions

        with self._store() as store:
            return diff_versions(store, old, new, project_id)

    def reviews(self, name: str, version: int | None, project_id: str) -> tuple[VersionInfo, list[ReviewOutcome]]:
        """The version (``version`` None: the latest; exit 3 when there is none) and its
        Reviewer Specialist runs (``review show NAME@VERSION``), oldest first; none reviewed: []."""
        from reviewtrail.reviewer import version_reviews

        with self._store() as store:
            return version_reviews(store, name, version, project_id)

    def traces(self) -> tuple[Path, list[RunSummary], TraceCheck | None]:
        """``trace ls`` and ``trace verify`` over the project's ``.aris/traces`` (the project: the
        git top level of the server's folder, else that folder, as the commands find it); the
        traces are compared with this store's records, read through this read-only store. The
        check is None when the project has no ``.aris/traces`` (nothing to check)."""
        from reviewtrail.tracing.commands import check_traces, list_runs

        project = self._project()
        runs = list_runs(project)  # the trace files alone
        with self._store() as store:
            try:
                check: TraceCheck | None = check_traces(project, _ThisStore(store))
            except NotFoundError:
                check = None
        return project, runs, check

    def trace_run(self, skill: str, run_id: str) -> tuple[RunView, Divergence]:
        """``trace show`` and ``trace divergence`` of ``SKILL/RUN_ID``: exit 2 for a name that is
        not a skill or run id, exit 3 (field ``run``) for a run that is not there."""
        from reviewtrail.tracing.commands import divergence, show_run
        from reviewtrail.tracing.files import check_name, find_run

        check_name(skill, "skill")
        run = find_run(self._project(), f"{skill}/{run_id}")  # the trace files alone, not the store
        return show_run(run), divergence(run)

    def head(self) -> StoreHead:
        """The store's identity and its ledger head (seq, hash, time), as ``init`` and ``verify`` report them."""
        from reviewtrail.audit import last_verify_status

        with self._store() as store:
            return StoreHead(store.store_id, store.created_at, store.ledger.head(), last_verify_status(store))

    def _project(self) -> Path:
        if self._project_root is None:
            from reviewtrail.tracing.files import existing_project_root

            self._project_root = existing_project_root(None)
        return self._project_root


def _check_version(version: int) -> None:
    """A campaign version no ledger could hold is exit 2 (field ``version``), not a failed query."""
    if not -_INT64_MAX - 1 <= version <= _INT64_MAX:
        raise InvalidInputError(f"must be a whole number a ledger can hold (at most {_INT64_MAX})", field="version")


@dataclass(frozen=True)
class Environment:
    """A run's process environment: ``recorded`` False when the run has no snapshot."""

    recorded: bool
    digest: str | None = None
    variables: dict[str, str] | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "digest": self.digest, "variables": self.variables, "problem": self.problem}


@dataclass(frozen=True)
class StoreHead:
    store_id: str | None
    created_at: str | None
    head: Envelope | None
    last_verify: VerifyStatus | None = None  # the status file of the last ``reviewtrail verify``


class _ThisStore:
    """The open read-only store as :func:`~reviewtrail.tracing.commands.check_traces` asks for one: found
    for any project, and never closed by the check (the server keeps using it)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def exists(self, project: Path) -> bool:
        return True

    def open(self, project: Path) -> Store:
        return _Borrowed(self._store)  # type: ignore[return-value]


class _Borrowed:
    """A store whose ``with`` block leaves it open."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __enter__(self) -> Store:
        return self._store

    def __exit__(self, *exc: object) -> None:
        return None
