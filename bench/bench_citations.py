"""The citation check on a large document.

check_citations
    ``check_citations`` of a 1 MB document (256 KB with --quick) built from the citation
    corpus (tests/corpus/citations): numbered, author-year, footnote and full-width markers,
    code spans and a reference list that resolves them, so that every marker is checked
    against it. Median of 3 (2 with --quick), alternating with the baseline: one regular
    expression pass that finds every bracketed marker, the cheapest possible scan of the same
    text. Reported, no fixed target. Run alone: ``python bench/run.py --only check_citations``
    (or ``python bench/bench_citations.py``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from _util import Config, Result, clock, measure
from reviewtrail.reviewer import check_citations

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "citations"
_MARKER = re.compile(r"\[[^\]\n]*\]")


def _read(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def build_document(size: int) -> str:
    """About ``size`` characters of body text, then one reference list for all of it."""
    chunk = (
        _read("en_mixed_reply.md").split("## References")[0]
        + _read("en_author_year_ok.md").split("## Bibliography")[0]
        + "Footnoted[^n] and superscripted.¹ 全角【2】。 Data [0.5, 0.9] and `code [9]`.\n\n"
    )
    parts: list[str] = []
    total = 0
    while total < size:
        parts.append(chunk)
        total += len(chunk)
    bibliography = _read("en_author_year_ok.md").split("## Bibliography")[1].strip().splitlines()
    references = (
        "\n## References\n\n[1] Rao P. Slopes. 2019. https://doi.org/10.2134/agronj2018.01.0001\n"
        "[2] Chen L, et al. Meta-analysis. 2021. PMID: 33445566\n"
        + "".join(f"- {line}\n" for line in bibliography)
        + "\n[^n]: A note.\n"
    )
    return "".join(parts) + references


def bench_check_citations(cfg: Config) -> Result:
    text = build_document(cfg.size(1_000_000, 250_000))
    decisions: list[str] = []
    found: list[int] = []

    def ours(_: int) -> float:
        seconds, report = clock(lambda: check_citations(text))
        decisions.append(report.decision)
        return seconds

    def baseline(_: int) -> float:
        seconds, markers = clock(lambda: _MARKER.findall(text))
        found.append(len(markers))
        return seconds

    timings = measure(cfg.rep_count(3, 2), ours, baseline)
    if set(decisions) != {"ACCEPT_AND_PROCEED"}:
        raise AssertionError(f"the citation check of the benchmark document decided {sorted(set(decisions))}")
    megabytes = len(text.encode()) / 1e6
    return Result(
        "check_citations",
        "REPORT",
        ours=f"{megabytes / timings.ours_median:.2f} MB/s ({timings.ours_median:.3f} s)",
        baseline=f"{megabytes / timings.baseline_median:,.1f} MB/s (one regex pass)",
        ratio=timings.ratio,
        target="report",
        notes=[
            f"{megabytes:.2f} MB, {len(text.splitlines()):,} lines, {found[0]:,} bracketed markers",
            f"the check takes {timings.ours_median / timings.baseline_median:,.0f}x the time of the regex pass",
            timings.spread(),
        ],
    )


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    print(bench_check_citations(Config(quick=quick)).line())
