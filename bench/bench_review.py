"""Claims and the Reviewer Specialist.

quick_review
    ``review_artifact`` (Quick tier) of an artifact holding 1,000 numeric claims (200 with
    --quick), each citing the run that wrote the artifact: citation check, lineage walk and
    one backing check per claim, plus the ArtifactReviewRun append. Median of 3; baseline:
    ``lineage()`` of the same version. Reported, no fixed target.
"""

from __future__ import annotations

import statistics
import time

from _util import Config, Result, work_dir
from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.provenance.artifacts import declare_artifact, lineage
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.reviewer import review_artifact


def bench_quick_review(cfg: Config) -> Result:
    n = cfg.size(1000, 200)
    with work_dir("review-") as work:
        root = work / "store"
        store = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
        session = create_session(store)
        sid = session.session_id
        first = run_code(store, session_id=sid, code="open('r.md','w').write('draft')", lang="python")
        lines = "".join(f"Metric {k} is {k / 10:.1f} [run:{first.envelope.id}].\\n\\n" for k in range(n))
        run_code(store, session_id=sid, code=f"open('r.md','w').write('{lines}')", lang="python")
        declare_artifact(store, session_id=sid, name="r.md", path="r.md")
        ours: list[float] = []
        base: list[float] = []
        decision = ""
        for _ in range(cfg.rep_count(3, 2)):
            t0 = time.perf_counter()
            outcome = review_artifact(store, "r.md", tier="quick", settings=ReviewerSettings(tier="quick"))
            ours.append(time.perf_counter() - t0)
            decision = outcome.run.decision
            t0 = time.perf_counter()
            lineage(store, "r.md")
            base.append(time.perf_counter() - t0)
        store.close()
    if decision != "ACCEPT_AND_PROCEED":
        raise AssertionError(f"the review of {n} backed claims decided {decision}")
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "quick_review",
        "REPORT",
        ours=f"{o:.0f} ms ({n:,} claims)",
        baseline=f"{b:.2f} ms (lineage only)",
        ratio=b / o,
        target="report",
        notes=[f"median of {len(ours)}; decision {decision}"],
    )
