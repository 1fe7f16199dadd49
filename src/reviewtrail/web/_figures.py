"""Pure formatting for the inspector's pages: the disposition chart (server-side SVG, every text
escaped, no script), the blinded coverage figures, diff rows and the parts of a lineage graph a
page lists. Nothing here reads a store; every function takes and returns plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

__all__ = [
    "DISPOSITION_COLOURS",
    "coverage_figures",
    "diff_rows",
    "disposition_chart",
    "execution_logs",
    "lineage_rows",
]

# Each colour has a contrast of at least 4.5:1 against white (the chart's background and the
# legend's text stays the page's ink); the table beside the chart carries every number as text.
DISPOSITION_COLOURS: dict[str, str] = {
    "prefer": "#0a5bd3",
    "tie": "#6639ba",
    "correct": "#1a7f37",
    "underdetermined": "#8a5a00",
    "malformed": "#c21d2f",
    "skip": "#57606a",
}
_LABEL_WIDTH = 190
_BAR_WIDTH = 420
_ROW = 30
_LABEL_CHARS = 26

# What the coverage page and its JSON leave out of ``campaign coverage --json``: the owner-only
# quality section (position bias, agreement), per-reviewer tallies, training receipts (a checkpoint
# may name a model) and the exported count; an invalid item's problems (they name runs). The
# agreement with second judgments (counts and rates per reviewer, no preference) is shown.
_OWNER_ONLY = ("quality", "reviewers", "trainingReceipts", "exported")


def coverage_figures(coverage: Mapping[str, Any]) -> dict[str, Any]:
    """The blinded figures of ``campaign coverage --json`` (``coverage``: its document): per
    scenario family and overall, the prompts, runs, items and decisions, with each invalid item's
    id and prompt label only. Nothing here names a run, agent, model, provider or adapter, and no
    aggregate preference is given."""
    out = {k: v for k, v in coverage.items() if k not in _OWNER_ONLY}
    out["families"] = [_blinded(f) for f in coverage.get("families", [])]
    out["overall"] = _blinded(coverage.get("overall", {}))
    return out


def _blinded(figures: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(figures)
    items = dict(out.get("items", {}))
    items["invalidItems"] = [
        {"itemId": i.get("itemId"), "promptLabel": i.get("promptLabel", "")} for i in items.get("invalidItems", [])
    ]
    out["items"] = items
    return out


def _short(text: str, limit: int = _LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def disposition_chart(
    families: Sequence[tuple[str, Mapping[str, int]]], *, title: str, chart_id: str = "disposition-chart"
) -> Markup:
    """A horizontal stacked bar per family: its active decisions by disposition (in the order of
    :data:`DISPOSITION_COLOURS`), each bar the family's own total (a share, not a count across
    families). Accessible: ``role="img"`` named by its ``<title>`` and described by ``<desc>``;
    each segment has its own ``<title>``. Every text is escaped."""
    height = _ROW * len(families) + 56
    width = _LABEL_WIDTH + _BAR_WIDTH + 10
    cid = escape(chart_id)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{cid}" role="img" '
        f'aria-labelledby="{cid}-title {cid}-desc" viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f'<title id="{cid}-title">{escape(title)}</title>',
        f'<desc id="{cid}-desc">{escape(_description(families))}</desc>',
    ]
    for row, (family, counts) in enumerate(families):
        y = 8 + row * _ROW
        parts.append(f'<text x="0" y="{y + 16}" class="chart-label" fill="#1b1f24">{escape(_short(family))}</text>')
        total = sum(counts.get(d, 0) for d in DISPOSITION_COLOURS)
        if total == 0:
            parts.append(
                f'<rect x="{_LABEL_WIDTH}" y="{y + 2}" width="{_BAR_WIDTH}" height="20" fill="none" '
                f'stroke="#57606a"><title>{escape(family)}: no active decision</title></rect>'
            )
            parts.append(f'<text x="{_LABEL_WIDTH + 8}" y="{y + 16}" fill="#1b1f24">no active decision</text>')
            continue
        x = float(_LABEL_WIDTH)
        for disposition, colour in DISPOSITION_COLOURS.items():
            n = counts.get(disposition, 0)
            if not n:
                continue
            w = _BAR_WIDTH * n / total
            label = f"{family}: {disposition} {n} of {total}"
            parts.append(
                f'<rect x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="20" fill="{colour}">'
                f"<title>{escape(label)}</title></rect>"
            )
            x += w
    legend_y = 8 + len(families) * _ROW + 14
    x = 0
    for disposition, colour in DISPOSITION_COLOURS.items():
        parts.append(f'<rect x="{x}" y="{legend_y}" width="12" height="12" fill="{colour}"/>')
        parts.append(f'<text x="{x + 16}" y="{legend_y + 11}" fill="#1b1f24">{escape(disposition)}</text>')
        x += 16 + 8 * len(disposition) + 18
    parts.append("</svg>")
    return Markup("\n".join(parts))  # noqa: S704 - every text above is escaped


def _description(families: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    if not families:
        return "No scenario family yet."
    rows = []
    for family, counts in families:
        shown = ", ".join(f"{d} {counts[d]}" for d in DISPOSITION_COLOURS if counts.get(d))
        rows.append(f"{family}: {shown or 'no active decision'}")
    return "Active decisions by disposition per scenario family. " + "; ".join(rows) + "."


def diff_rows(diff: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a version diff (``artifact diff --json``'s document): the unchanged lines
    before and after the compared middle as one summary row each, then every line with its sign
    (``+`` added, ``-`` removed, blank for context) and its line numbers in each version."""
    signs = {"added": "+", "removed": "-", "context": ""}
    rows: list[dict[str, Any]] = []
    if diff.get("commonPrefixLines"):
        rows.append({"op": "skipped", "text": f"{diff['commonPrefixLines']} unchanged line(s)"})
    for line in diff.get("lines", []):
        text = line["text"] + (" (no newline at end)" if line.get("noNewlineAtEnd") else "")
        rows.append(
            {"op": line["op"], "sign": signs[line["op"]], "old": line["oldLine"], "new": line["newLine"], "text": text}
        )
    if diff.get("commonSuffixLines"):
        rows.append({"op": "skipped", "text": f"{diff['commonSuffixLines']} unchanged line(s)"})
    return rows


def execution_logs(graph: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The execution-run nodes of a lineage graph (``provenance --format json``'s document), in
    the graph's order, each with its record id, label and attributes."""
    return [n for n in graph.get("nodes", []) if n.get("kind") == "execution_run"]


def lineage_rows(graph: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Each edge of a lineage graph as (source label, relation, target label)."""
    labels = {n["id"]: f"{n['kind']} {n['label']}" for n in graph.get("nodes", [])}
    edges: Iterable[Mapping[str, str]] = graph.get("edges", [])
    return [(labels.get(e["source"], e["source"]), e["relation"], labels.get(e["target"], e["target"])) for e in edges]
