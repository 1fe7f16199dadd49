"""``trace install-helper`` keeps ``.aris/traces/`` out of git: the rule on text (hypothesis) and
the command on a real project folder."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli
from reviewtrail.tracing.files import with_traces_ignored

LINES = st.sampled_from(
    [
        "node_modules/",
        "*.pyc",
        "# .aris/traces/",
        ".aris/tools/",
        ".aris/traces/",
        "/.aris/traces",
        ".aris/",
        "!.aris/traces/",
        "!.aris/",
        ".aris/traces/*",
        ".aris/traces/   ",
        ".aris/traces/\\ ",
        "",
        "traces/",
    ]
)
TEXTS = st.lists(LINES, max_size=8).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).flatmap(
        lambda nl: st.booleans().map(lambda end: nl.join(lines) + (nl if end and lines else ""))
    )
)


def ignores(text: str) -> bool:
    return with_traces_ignored(text) is None


@given(TEXTS)
def test_the_line_is_added_once_and_nothing_else_changes(text: str) -> None:
    new = with_traces_ignored(text)
    if new is None:
        return
    assert new.startswith(text)  # every existing line, byte for byte
    added = new[len(text) :]
    assert added.strip("\r\n") == ".aris/traces/"
    assert with_traces_ignored(new) is None  # idempotent
    assert ("\r\n" in text) == ("\r\n" in added) or not text


@pytest.mark.parametrize(
    ("text", "ignored"),
    [
        (".aris/traces/\n", True),
        ("/.aris/traces\n", True),
        (".aris/\n", True),
        (".aris/traces/   \n", True),  # trailing spaces do not count
        (".aris/traces/\\ \n", False),  # an escaped space does: another name
        ("# .aris/traces/\n", False),
        (".aris/traces/\n!.aris/traces/\n", False),  # negated later
        ("!.aris/traces/\n.aris/traces/\n", True),
        ("traces/\n.aris/tools/\n", False),
        ("", False),
    ],
)
def test_what_counts_as_already_ignored(text: str, ignored: bool) -> None:
    assert ignores(text) is ignored


def test_install_helper_adds_the_line_to_an_existing_file_and_keeps_the_rest(tmp_path: Path) -> None:
    gitignore = tmp_path / ".gitignore"
    gitignore.write_bytes(b"build/\r\n*.log")  # CRLF, no final newline
    gitignore.chmod(0o640)
    code, out, err = run_cli("trace", "install-helper", "--project-dir", str(tmp_path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["gitignoreChanged"] is True and doc["gitignore"] == str(gitignore)
    assert gitignore.read_bytes() == b"build/\r\n*.log\r\n.aris/traces/\r\n"
    assert stat.S_IMODE(gitignore.stat().st_mode) == 0o640
    code, out, _ = run_cli("trace", "install-helper", "--project-dir", str(tmp_path), "--json")
    assert code == 0 and json.loads(out)["gitignoreChanged"] is False
    assert gitignore.read_bytes() == b"build/\r\n*.log\r\n.aris/traces/\r\n"


def test_install_helper_creates_the_file_when_there_is_none(tmp_path: Path) -> None:
    code, out, err = run_cli("trace", "install-helper", "--project-dir", str(tmp_path))
    assert code == 0 and out.strip() == str(tmp_path / ".aris" / "tools" / "save_trace.sh")
    assert (tmp_path / ".gitignore").read_text() == ".aris/traces/\n"
    assert "added .aris/traces/" in err
