"""Line diff between two versions of a text artifact, computed on demand and never stored.

``artifactVersionDiff`` (docs/architecture.md, "Provenance"): both versions are read from the
CAS by the caller and diffed on the fly; only text media types are diffed; at most ``max_lines`` (default
5000) lines per version are considered.

Algorithm: the common leading and trailing lines are stripped first and only counted
(``commonPrefixLines``, ``commonSuffixLines``); the middle is diffed line by line with
:class:`difflib.SequenceMatcher`. ``lines`` holds every line of that middle, in order,
as ``removed`` (only in the old version), ``added`` (only in the new version) or
``context`` (in both), with 1-based line numbers in each version. Applying the diff is
therefore: old prefix + the ``context`` and ``added`` lines + old suffix == new text.

Lines end at ``\\n`` only (a ``\\r`` before it stays in ``text``, so CRLF files diff
faithfully); ``text`` never holds the ``\\n``. A last line without a final newline is
flagged ``noNewlineAtEnd: true`` (the key is present only then), which keeps ``"a"``
and ``"a\\n"`` distinct.

When either version has more than ``max_lines`` lines, both are cut to their first
``max_lines`` lines, ``truncated`` is true and ``oldLines``/``newLines`` still report
the full line counts, so a truncated diff is never mistaken for a complete one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal

from reviewtrail.errors import InvalidInputError
from reviewtrail.media import is_text_media_type

__all__ = [
    "DEFAULT_MAX_LINES",
    "DiffLine",
    "DiffOp",
    "VersionDiff",
    "artifact_version_diff",
]

DEFAULT_MAX_LINES = 5000

DiffOp = Literal["added", "removed", "context"]


@dataclass(frozen=True)
class DiffLine:
    """One line of the diffed middle region; line numbers are 1-based and absolute."""

    op: DiffOp
    old_line: int | None  # None for ``added``
    new_line: int | None  # None for ``removed``
    text: str  # without the terminating ``\n``
    no_newline_at_end: bool = False  # the version's last line, and it has no final newline

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "oldLine": self.old_line, "newLine": self.new_line, "text": self.text}
        if self.no_newline_at_end:
            out["noNewlineAtEnd"] = True
        return out


@dataclass(frozen=True)
class VersionDiff:
    """The diff of two text versions; see the module docstring for the exact semantics."""

    old_label: str
    new_label: str
    old_media_type: str
    new_media_type: str
    old_lines: int  # full line count of the old version (before any truncation)
    new_lines: int
    common_prefix_lines: int
    common_suffix_lines: int
    truncated: bool
    max_lines: int
    lines: tuple[DiffLine, ...]
    # Up to 3 unchanged lines just before / after ``lines`` (the end of the common prefix,
    # the start of the common suffix): context for :meth:`unified` only.
    leading_context: tuple[DiffLine, ...] = field(default=(), repr=False, compare=False)
    trailing_context: tuple[DiffLine, ...] = field(default=(), repr=False, compare=False)

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.op == "added")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.op == "removed")

    @property
    def changed(self) -> bool:
        """True when the compared lines differ (within the truncation window, if truncated)."""
        return any(line.op != "context" for line in self.lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "oldLabel": self.old_label,
            "newLabel": self.new_label,
            "oldMediaType": self.old_media_type,
            "newMediaType": self.new_media_type,
            "oldLines": self.old_lines,
            "newLines": self.new_lines,
            "commonPrefixLines": self.common_prefix_lines,
            "commonSuffixLines": self.common_suffix_lines,
            "truncated": self.truncated,
            "maxLines": self.max_lines,
            "lines": [line.to_json() for line in self.lines],
            "stats": {"added": self.added, "removed": self.removed},
        }

    def unified(self, context: int = 3) -> str:
        """A unified diff for humans (``---``/``+++`` carry the labels); ``""`` when nothing changed.

        At most 3 lines of the common prefix and suffix are shown as context (``context``
        larger than 3 widens context only inside the middle region). A truncated diff
        starts with a ``#`` comment line saying so (patch tools skip lines before ``---``).
        """
        if context < 0:
            raise InvalidInputError(f"{context} must be >= 0", field="context")
        out: list[str] = []
        if self.truncated:
            out.append(
                f"# truncated: only the first {self.max_lines} lines of each version were compared "
                f"(old has {self.old_lines} lines, new has {self.new_lines})"
            )
        if not self.changed:
            return "\n".join(out) + "\n" if out else ""
        out += [f"--- {_one_line(self.old_label)}", f"+++ {_one_line(self.new_label)}"]
        lead = self.leading_context[len(self.leading_context) - min(context, len(self.leading_context)) :]
        rows = [*lead, *self.lines, *self.trailing_context[:context]]
        base = self.common_prefix_lines - len(lead)  # line number before rows[0], same in both versions
        for start, stop in _hunks(rows, context):
            out.append(_hunk_header(rows, start, stop, base))
            for row in rows[start:stop]:
                out.append({"added": "+", "removed": "-", "context": " "}[row.op] + row.text)
                if row.no_newline_at_end:
                    out.append("\\ No newline at end of file")
        return "\n".join(out) + "\n"


def artifact_version_diff(
    old: bytes,
    new: bytes,
    *,
    old_media_type: str,
    new_media_type: str,
    old_label: str,
    new_label: str,
    max_lines: int = DEFAULT_MAX_LINES,
) -> VersionDiff:
    """Diff two versions' bytes; pure (the caller reads them from the CAS).

    Raises :class:`InvalidInputError` (field ``mediaType``) when either media type is not
    a text type (:func:`is_text_media_type`), (field ``content``) when either version is
    not valid UTF-8, and (field ``maxLines``) when ``max_lines`` is not a positive int.
    """
    if isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines < 1:
        raise InvalidInputError(f"{max_lines!r} must be a positive integer", field="maxLines")
    for which, media_type in (("old", old_media_type), ("new", new_media_type)):
        if not is_text_media_type(media_type):
            raise InvalidInputError(
                f"the {which} version has media type {media_type!r}; only text media types can be diffed",
                field="mediaType",
            )
    a_all = _split_lines(_decode(old, "old", old_label))
    b_all = _split_lines(_decode(new, "new", new_label))
    truncated = len(a_all) > max_lines or len(b_all) > max_lines
    a, b = a_all[:max_lines], b_all[:max_lines]

    prefix = 0
    limit = min(len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    a_mid, b_mid = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]

    lines: list[DiffLine] = []
    # autojunk off: with it, lines that recur often (blank lines, braces) in long files are
    # ignored as anchors and the diff degrades into large remove/add blocks.
    matcher = SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                lines.append(_line("context", a_mid[i1 + k], prefix + i1 + k + 1, prefix + j1 + k + 1))
            continue
        for i in range(i1, i2):
            lines.append(_line("removed", a_mid[i], prefix + i + 1, None))
        for j in range(j1, j2):
            lines.append(_line("added", b_mid[j], None, prefix + j + 1))

    leading = tuple(_line("context", a[i], i + 1, i + 1) for i in range(max(0, prefix - 3), prefix))
    shift = len(b) - len(a)
    trailing = tuple(
        _line("context", a[i], i + 1, i + 1 + shift) for i in range(len(a) - suffix, min(len(a), len(a) - suffix + 3))
    )
    return VersionDiff(
        old_label=old_label,
        new_label=new_label,
        old_media_type=old_media_type,
        new_media_type=new_media_type,
        old_lines=len(a_all),
        new_lines=len(b_all),
        common_prefix_lines=prefix,
        common_suffix_lines=suffix,
        truncated=truncated,
        max_lines=max_lines,
        lines=tuple(lines),
        leading_context=leading,
        trailing_context=trailing,
    )


def _decode(data: bytes, which: str, label: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"the {which} version {label!r} is not valid UTF-8 text (bad byte at offset {exc.start})", field="content"
        ) from exc


def _split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept, so ``"".join(result) == text``; ``""`` has no lines."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _line(op: DiffOp, raw: str, old_line: int | None, new_line: int | None) -> DiffLine:
    if raw.endswith("\n"):
        return DiffLine(op, old_line, new_line, raw[:-1])
    return DiffLine(op, old_line, new_line, raw, no_newline_at_end=True)


def _one_line(label: str) -> str:
    return label.replace("\r", "\\r").replace("\n", "\\n")


def _hunks(rows: list[DiffLine], context: int) -> list[tuple[int, int]]:
    """[start, stop) row ranges: each change with ``context`` rows around it, close ones merged."""
    changes = [i for i, row in enumerate(rows) if row.op != "context"]
    ranges: list[tuple[int, int]] = []
    for i in changes:
        start, stop = max(0, i - context), min(len(rows), i + context + 1)
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], stop)
        else:
            ranges.append((start, stop))
    return ranges


def _hunk_header(rows: list[DiffLine], start: int, stop: int, base: int) -> str:
    def span(numbers: list[int], before: int) -> str:
        if not numbers:
            return f"{before},0"  # an empty range names the line it follows
        return str(numbers[0]) if len(numbers) == 1 else f"{numbers[0]},{len(numbers)}"

    def before(old: bool) -> int:
        for row in reversed(rows[:start]):
            number = row.old_line if old else row.new_line
            if number is not None:
                return number
        return base

    olds = [r.old_line for r in rows[start:stop] if r.old_line is not None]
    news = [r.new_line for r in rows[start:stop] if r.new_line is not None]
    return f"@@ -{span(olds, before(True))} +{span(news, before(False))} @@"
