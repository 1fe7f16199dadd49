"""artifact_version_diff: text-only, common prefix/suffix + line diff, explicit truncation."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import EXIT_INVALID, InvalidInputError
from reviewtrail.media import is_text_media_type
from reviewtrail.provenance.artifacts._diff import artifact_version_diff


def diff(old: str | bytes, new: str | bytes, **kw: Any) -> Any:
    kw.setdefault("old_media_type", "text/plain")
    kw.setdefault("new_media_type", "text/plain")
    kw.setdefault("old_label", "notes.md@1")
    kw.setdefault("new_label", "notes.md@2")
    as_bytes = [x.encode() if isinstance(x, str) else x for x in (old, new)]
    return artifact_version_diff(as_bytes[0], as_bytes[1], **kw)


def split(text: str) -> list[str]:
    """Lines ending at \\n only, terminators kept (independent of the implementation)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def raw(line: dict[str, Any]) -> str:
    return str(line["text"]) + ("" if line.get("noNewlineAtEnd") else "\n")


def apply_json(old: str, result: dict[str, Any]) -> str:
    """Apply a diff's JSON to the old text: prefix + context/added lines + suffix."""
    lines = split(old)
    prefix, suffix = result["commonPrefixLines"], result["commonSuffixLines"]
    middle = [raw(line) for line in result["lines"] if line["op"] in ("context", "added")]
    return "".join(lines[:prefix] + middle + lines[len(lines) - suffix :])


def unapply_json(new: str, result: dict[str, Any]) -> str:
    lines = split(new)
    prefix, suffix = result["commonPrefixLines"], result["commonSuffixLines"]
    middle = [raw(line) for line in result["lines"] if line["op"] in ("context", "removed")]
    return "".join(lines[:prefix] + middle + lines[len(lines) - suffix :])


def apply_unified(old: str, patch: str) -> str:
    """A small unified-diff applier that checks every context and removed line."""
    src = split(old)
    out: list[str] = []
    pos = 0
    rows = patch.split("\n")[:-1]
    i = 0
    while i < len(rows) and not rows[i].startswith("@@"):
        i += 1
    while i < len(rows):
        m = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", rows[i])
        assert m is not None, rows[i]
        i += 1
        old_start, old_len = int(m[1]), int(m[2]) if m[2] is not None else 1
        first = old_start - 1 if old_len else old_start
        assert first >= pos
        out.extend(src[pos:first])
        pos = first
        while i < len(rows) and not rows[i].startswith("@@"):
            tag, body = rows[i][0], rows[i][1:]
            i += 1
            end = "\n"
            if i < len(rows) and rows[i] == "\\ No newline at end of file":
                end = ""
                i += 1
            assert tag in " -+", rows[i - 1]
            if tag in " -":
                assert src[pos] == body + end
                pos += 1
            if tag in " +":
                out.append(body + end)
    out.extend(src[pos:])
    return "".join(out)


# -- examples -------------------------------------------------------------------------


def test_one_changed_line_with_prefix_and_suffix() -> None:
    old = "a\nb\nc\nd\ne\n"
    new = "a\nb\nC\nd\ne\n"
    result = diff(old, new).to_json()
    assert result == {
        "oldLabel": "notes.md@1",
        "newLabel": "notes.md@2",
        "oldMediaType": "text/plain",
        "newMediaType": "text/plain",
        "oldLines": 5,
        "newLines": 5,
        "commonPrefixLines": 2,
        "commonSuffixLines": 2,
        "truncated": False,
        "maxLines": 5000,
        "lines": [
            {"op": "removed", "oldLine": 3, "newLine": None, "text": "c"},
            {"op": "added", "oldLine": None, "newLine": 3, "text": "C"},
        ],
        "stats": {"added": 1, "removed": 1},
    }
    json.dumps(result)


def test_middle_keeps_unchanged_lines_as_context() -> None:
    d = diff("x\n1\n2\n3\ny\n", "X\n1\n2\n3\nY\n")
    assert [(line.op, line.old_line, line.new_line, line.text) for line in d.lines] == [
        ("removed", 1, None, "x"),
        ("added", None, 1, "X"),
        ("context", 2, 2, "1"),
        ("context", 3, 3, "2"),
        ("context", 4, 4, "3"),
        ("removed", 5, None, "y"),
        ("added", None, 5, "Y"),
    ]
    assert (d.common_prefix_lines, d.common_suffix_lines) == (0, 0)


def test_identical_versions() -> None:
    d = diff("same\ntext\n", "same\ntext\n")
    assert d.lines == ()
    assert (d.added, d.removed, d.changed) == (0, 0, False)
    assert d.common_prefix_lines == 2
    assert d.unified() == ""


def test_empty_versions() -> None:
    assert diff("", "").to_json()["oldLines"] == 0
    d = diff("", "one\ntwo\n")
    assert [line.op for line in d.lines] == ["added", "added"]
    assert d.unified() == "--- notes.md@1\n+++ notes.md@2\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    d = diff("one\n", "")
    assert d.unified() == "--- notes.md@1\n+++ notes.md@2\n@@ -1 +0,0 @@\n-one\n"


def test_missing_final_newline_is_a_change() -> None:
    d = diff("a\nb", "a\nb\n")
    assert d.changed
    assert [line.to_json() for line in d.lines] == [
        {"op": "removed", "oldLine": 2, "newLine": None, "text": "b", "noNewlineAtEnd": True},
        {"op": "added", "oldLine": None, "newLine": 2, "text": "b"},
    ]
    assert d.unified().endswith("-b\n\\ No newline at end of file\n+b\n")


def test_crlf_lines_keep_their_carriage_return() -> None:
    d = diff("a\r\nb\r\n", "a\r\nB\r\n")
    assert [line.text for line in d.lines] == ["b\r", "B\r"]


def test_unicode_text() -> None:
    d = diff("Grüße\n日本\n", "Grüße\n日本語\n")
    assert [line.text for line in d.lines] == ["日本", "日本語"]


def test_unified_matches_difflib_on_a_simple_change() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 5\n", "line five\n").replace("line 15\n", "")
    ours = diff(old, new).unified()
    theirs = "".join(difflib.unified_diff(split(old), split(new), "notes.md@1", "notes.md@2"))
    assert ours == theirs
    assert apply_unified(old, ours) == new


def test_unified_context_zero_and_far_apart_hunks() -> None:
    lines = [f"{i}\n" for i in range(30)]
    old = "".join(lines)
    new = "".join([*lines[:3], "three\n", *lines[4:25], "twenty-five\n", *lines[26:]])
    text = diff(old, new).unified(context=0)
    assert text.count("@@ -") == 2
    assert "@@ -4 +4 @@" in text
    assert apply_unified(old, text) == new
    assert apply_unified(old, diff(old, new).unified(context=1)) == new
    with pytest.raises(InvalidInputError):
        diff(old, new).unified(context=-1)


def test_unified_escapes_newlines_in_labels() -> None:
    text = diff("a\n", "b\n", old_label="x\ny", new_label="z").unified()
    assert text.startswith("--- x\\ny\n+++ z\n")


# -- truncation -----------------------------------------------------------------------


def test_truncation_is_explicit() -> None:
    old = "".join(f"{i}\n" for i in range(10))
    new = "".join(f"{i}\n" for i in range(12)).replace("2\n", "two\n")
    d = diff(old, new, max_lines=5)
    j = d.to_json()
    assert j["truncated"] is True
    assert (j["oldLines"], j["newLines"], j["maxLines"]) == (10, 12, 5)
    assert all((line["oldLine"] or 0) <= 5 and (line["newLine"] or 0) <= 5 for line in j["lines"])
    assert (j["stats"]["added"], j["stats"]["removed"]) == (1, 1)
    assert d.unified().startswith("# truncated: only the first 5 lines of each version were compared")


def test_exactly_max_lines_is_not_truncated() -> None:
    text = "".join(f"{i}\n" for i in range(5))
    assert diff(text, text + "5\n", max_lines=6).truncated is False
    assert diff(text, text + "5\n", max_lines=5).truncated is True


def test_truncated_but_equal_window_says_so() -> None:
    d = diff("a\nb\nc\n", "a\nb\nX\n", max_lines=2)
    assert d.truncated and not d.changed
    assert d.unified().startswith("# truncated")


def test_default_limit_is_5000_lines() -> None:
    big = "".join(f"{i}\n" for i in range(5001))
    d = diff(big, big.replace("5000\n", "last\n"))
    assert d.truncated and d.max_lines == 5000 and not d.changed
    assert (d.old_lines, d.new_lines) == (5001, 5001)


# -- validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "media_type",
    [
        "text/plain",
        "text/markdown; charset=utf-8",
        "TEXT/CSV",
        "text/x-python",
        "application/json",
        "application/ld+json",
        "application/vnd.api+json",
        "application/xml",
        "image/svg+xml",
        "application/yaml",
        "application/x-yaml",
        "application/csv",
        "application/javascript",
        "application/x-tex",
        "application/x-ipynb+json",
    ],
)
def test_text_media_types(media_type: str) -> None:
    assert is_text_media_type(media_type)
    assert diff("a\n", "b\n", old_media_type=media_type, new_media_type=media_type).changed


@pytest.mark.parametrize(
    "media_type",
    ["application/octet-stream", "image/png", "application/pdf", "application/zip", "", "text", "/plain", "text/"],
)
def test_binary_media_types_are_refused(media_type: str) -> None:
    assert not is_text_media_type(media_type)
    with pytest.raises(InvalidInputError) as err:
        diff("a\n", "b\n", new_media_type=media_type)
    assert err.value.field == "mediaType"
    assert err.value.exit_code == EXIT_INVALID
    assert repr(media_type) in str(err.value)
    assert "new version" in str(err.value)


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(InvalidInputError) as err:
        diff(b"ok\n", b"\xff\xfe bad\n")
    assert err.value.field == "content"
    assert "notes.md@2" in str(err.value)


@pytest.mark.parametrize("max_lines", [0, -1, True, 2.5])
def test_max_lines_must_be_positive(max_lines: Any) -> None:
    with pytest.raises(InvalidInputError) as err:
        diff("a\n", "b\n", max_lines=max_lines)
    assert err.value.field == "maxLines"


# -- properties -----------------------------------------------------------------------

_line = st.sampled_from(["a", "b", "c", "", "a\r", "ü", "  x = 1", "}"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_line, max_size=25))
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if draw(st.booleans()) else "")


def _check_numbering(result: dict[str, Any], old_count: int, new_count: int) -> None:
    prefix, suffix = result["commonPrefixLines"], result["commonSuffixLines"]
    olds = [line["oldLine"] for line in result["lines"] if line["op"] != "added"]
    news = [line["newLine"] for line in result["lines"] if line["op"] != "removed"]
    assert olds == list(range(prefix + 1, old_count - suffix + 1))
    assert news == list(range(prefix + 1, new_count - suffix + 1))
    for line in result["lines"]:
        assert (line["oldLine"] is None) == (line["op"] == "added")
        assert (line["newLine"] is None) == (line["op"] == "removed")
        assert "\n" not in line["text"]


@given(texts(), texts())
def test_applying_the_diff_reconstructs_the_new_text(old: str, new: str) -> None:
    d = diff(old, new)
    result = d.to_json()
    assert result["truncated"] is False
    assert apply_json(old, result) == new
    assert unapply_json(new, result) == old
    assert apply_unified(old, d.unified()) == new


@given(texts(), texts())
def test_line_counts_are_consistent(old: str, new: str) -> None:
    result = diff(old, new).to_json()
    old_count, new_count = len(split(old)), len(split(new))
    assert (result["oldLines"], result["newLines"]) == (old_count, new_count)
    ops = [line["op"] for line in result["lines"]]
    prefix, suffix = result["commonPrefixLines"], result["commonSuffixLines"]
    assert prefix + suffix + ops.count("removed") + ops.count("context") == old_count
    assert prefix + suffix + ops.count("added") + ops.count("context") == new_count
    assert result["stats"] == {"added": ops.count("added"), "removed": ops.count("removed")}
    _check_numbering(result, old_count, new_count)
    if ops:
        assert ops[0] != "context" and ops[-1] != "context"  # prefix and suffix are maximal


@given(texts())
def test_identical_inputs_have_no_changes(text: str) -> None:
    d = diff(text, text)
    assert (d.added, d.removed) == (0, 0)
    assert d.lines == ()
    assert d.common_prefix_lines == len(split(text))
    assert d.unified() == ""


@given(texts(), texts(), st.integers(min_value=1, max_value=8))
def test_truncation_window(old: str, new: str, max_lines: int) -> None:
    result = diff(old, new, max_lines=max_lines).to_json()
    old_all, new_all = split(old), split(new)
    assert result["truncated"] == (max(len(old_all), len(new_all)) > max_lines)
    assert (result["oldLines"], result["newLines"]) == (len(old_all), len(new_all))
    old_seen, new_seen = "".join(old_all[:max_lines]), "".join(new_all[:max_lines])
    assert apply_json(old_seen, result) == new_seen
    _check_numbering(result, min(len(old_all), max_lines), min(len(new_all), max_lines))
