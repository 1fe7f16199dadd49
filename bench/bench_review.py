"""Claims and the Reviewer Specialist.

claims_extract
    ``extract_claims`` on a 1 MB assistant reply (256 KB with --quick) mixing English and
    Chinese sentences, citations, numbers, abbreviations and code blocks: claims per second,
    median of 3. Baseline: splitting the same text with ``str.split(". ")`` (the cheapest
    possible sentence cut). Reported, no fixed target.

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
from reviewtrail.evidence import extract_claims
from reviewtrail.provenance import create_session, declare_artifact, lineage, run_code
from reviewtrail.reviewer import review_artifact

_BLOCK = (
    "The model reached 91.5% accuracy [run:r-{i}] after 3 epochs, e.g. on the held-out set. "
    "Dr. Smith et al. reported 0.87 in Fig. 2 [doi:10.1000/x{i}]. 结果显示准确率为 92.1% [ev:e{i}]。"
    "No citation in this sentence at all. Version v2.1.0 was used.\n\n"
    "```python\nprint('not [run:x] a claim.')\n```\n\n"
)


def bench_extract(cfg: Config) -> Result:
    size = cfg.size(1 << 20, 1 << 18)
    parts = []
    i = 0
    while sum(len(p) for p in parts) < size:
        parts.append(_BLOCK.format(i=i))
        i += 1
    text = "".join(parts)
    ours: list[float] = []
    base: list[float] = []
    count = 0
    for _ in range(cfg.rep_count(3, 2)):
        t0 = time.perf_counter()
        count = len(extract_claims(text))
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        text.split(". ")
        base.append(time.perf_counter() - t0)
    o, b = statistics.median(ours), statistics.median(base)
    return Result(
        "claims_extract",
        "REPORT",
        ours=f"{count / o:,.0f} claims/s ({len(text) / o / 1e6:.2f} MB/s)",
        baseline=f"{len(text) / b / 1e6:,.0f} MB/s (str.split)",
        ratio=b / o,
        target="report",
        notes=[f"{len(text):,} characters, {count:,} claims, median of {len(ours)}"],
    )


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
