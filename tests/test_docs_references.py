"""Comments and docstrings cite the project's own documentation, and every section they cite exists."""

from __future__ import annotations

import re
from pathlib import Path

import reviewtrail

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(reviewtrail.__file__).parent
# docs/architecture.md, "Content-addressed store" / README, "Using it" (a line break may split a title)
CITATION = re.compile(r"""(README|docs/[\w.-]+\.md),\s+"([^"]+)\"""")


def headings(doc: Path) -> set[str]:
    """Each heading's title, also without a trailing parenthesis (``Provenance (`reviewtrail.provenance`)``)."""
    titles = {line.lstrip("#").strip() for line in doc.read_text(encoding="utf-8").splitlines() if line.startswith("#")}
    return titles | {re.sub(r"\s*\(.*\)$", "", t) for t in titles}


def cited_sections() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in CITATION.finditer(text):
            doc = "README.md" if match.group(1) == "README" else match.group(1)
            title = " ".join(match.group(2).split()).rstrip(".,")
            found.append((str(path.relative_to(SRC)), doc, title))
    return found


def test_cited_sections_exist() -> None:
    cited = cited_sections()
    assert len(cited) >= 10
    missing = [(where, doc, title) for where, doc, title in cited if title not in headings(ROOT / doc)]
    assert missing == []


def test_the_section_pattern_finds_a_citation_split_across_lines() -> None:
    text = 'see (docs/architecture.md, "Reviewer-call\ntracing") and (README, "Exit codes")'
    assert [(m.group(1), " ".join(m.group(2).split())) for m in CITATION.finditer(text)] == [
        ("docs/architecture.md", "Reviewer-call tracing"),
        ("README", "Exit codes"),
    ]
