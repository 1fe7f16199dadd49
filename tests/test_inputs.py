"""Files a command reads are bounded: only regular files, each kind at most its documented size,
checked while reading. /dev/zero, a FIFO, a folder, a 10 GB sparse file and a file one byte past
its kind's maximum are exit 2 naming the argument, for every file argument of every command, in a
process whose peak RSS stays under 200 MiB; and nothing blocks on a FIFO."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import init_cli_store
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import CanonicalJSONError, InvalidInputError
from reviewtrail.inputs import INPUT_LIMITS, read_input, read_input_text, read_regular
from reviewtrail.ledger import RecordPayload, new_record, record_type

MiB = 1 << 20
RSS_LIMIT_KIB = 200 * 1024


# --- the reader --------------------------------------------------------------------------------------
def _bad(tmp_path: Path, what: str, size: int) -> str:
    """A path of the kind ``what``: ``zero`` (/dev/zero), ``fifo``, ``folder``, ``sparse`` (10 GB)
    or ``over`` (``size`` + 1 bytes, sparse)."""
    if what == "zero":
        return "/dev/zero"
    path = tmp_path / f"bad-{what}"
    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
    else:
        with open(path, "wb") as f:
            f.truncate(10 << 30 if what == "sparse" else size + 1)
    return str(path)


BAD = ("zero", "fifo", "folder", "sparse", "over")


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``, which must return (or raise) in ``seconds``: a read that blocks fails the test
    instead of hanging it."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # handed to the test thread
            out["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the read blocked"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.parametrize("what", BAD)
def test_the_reader_refuses_what_is_not_a_bounded_regular_file(tmp_path: Path, what: str) -> None:
    path = _bad(tmp_path, what, INPUT_LIMITS["key"])
    with pytest.raises(InvalidInputError) as err:
        _within(30, lambda: read_input(path, "key", field="key"))
    assert err.value.field == "key" and path in str(err.value)
    expected = {"zero": "character device", "fifo": "a FIFO", "folder": "a folder"}.get(what, "larger than 65,536")
    assert expected in str(err.value)


def test_the_reader_reads_a_file_of_the_maximum_size_exactly(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(b"k" * INPUT_LIMITS["key"])
    assert read_input(path, "key", field="key") == b"k" * INPUT_LIMITS["key"]
    assert read_regular(path, INPUT_LIMITS["key"], field="x") == path.read_bytes()
    with pytest.raises(InvalidInputError):
        read_regular(path, INPUT_LIMITS["key"] - 1, field="x")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidInputError) as err:
        read_input_text(tmp_path / "bad.txt", "code", field="file")
    assert err.value.field == "file" and "UTF-8" in str(err.value)
    with pytest.raises(InvalidInputError) as missing:
        read_input(tmp_path / "nope", "code", field="file")
    assert "does not exist" in str(missing.value)


def test_standard_input_is_bounded_too(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom reviewtrail.inputs import read_input\nfrom reviewtrail.errors import InvalidInputError\n"
        "try:\n    read_input('-', 'key', field='key', stdin=True)\nexcept InvalidInputError as e:\n"
        "    print(e)\n    sys.exit(2)\n"
    )
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run([sys.executable, "-c", code], stdin=zero, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "standard input is larger than 65,536 bytes" in proc.stdout, proc.stderr


# --- every file argument of every command ------------------------------------------------------------
# (command line with {F} for the file, the field named, the kind's maximum or None when any size of
# regular file is taken: the CAS streams those in constant memory).
CASES: list[tuple[str, str, int | None]] = [
    ("campaign import {F}", "file", INPUT_LIMITS["campaign"]),
    ("campaign run c1 --version 1 --agents {F}", "agents", INPUT_LIMITS["agents"]),
    ("campaign import-runs {F}", "file", INPUT_LIMITS["runs"]),
    ("campaign correct-output 01J9Z3K4Q8 --response-file {F}", "response-file", INPUT_LIMITS["response"]),
    ("campaign receipt c1 --version 1 --export-manifest {F} --checkpoint c7 --eval {F}", "", 16 * MiB),
    ("review decide 3f1c0b9e --correct {F}", "correct", INPUT_LIMITS["correction"]),
    ("review citations {F}", "file", INPUT_LIMITS["reply"]),
    ("claims extract {F} --turn t-1", "file", INPUT_LIMITS["reply"]),
    ("claims extract reply.md --turn t-1 --aliases {F}", "aliases", INPUT_LIMITS["reply"]),
    ("evidence extract-pdf doi:10.1/x {F}", "pdf", INPUT_LIMITS["pdf"]),
    ("run {F} --weak-limits", "file", INPUT_LIMITS["code"]),
    ("ledger append --type eval.result@1 --actor a --privacy private --payload @{F}", "payload",
     INPUT_LIMITS["payload"]),
    ("ledger checkpoint --key {F}", "key", INPUT_LIMITS["key"]),
    ("verify --checkpoint {F}", "checkpoint", INPUT_LIMITS["checkpoint"]),
    ("verify --checkpoint cp.json --public-key {F}", "public_key", INPUT_LIMITS["key"]),
    ("trace save --skill s --purpose p --backend b --prompt-file {F} --response x", "prompt-file",
     INPUT_LIMITS["prompt"]),
    ("trace save --skill s --purpose p --backend b --prompt x --response-file {F}", "response-file",
     INPUT_LIMITS["trace-response"]),
    ("cas put {F}", "", None),  # typer names it file, the CAS path
    ("artifact upload data {F}", "path", None),
]  # fmt: skip


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    with pytest.MonkeyPatch.context() as mp:
        init_cli_store(root, mp)
    (root / "reply.md").write_text("A reply.\n")
    return root


_MEASURED = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)\n"
    "sys.stdout.write(p.stderr)\n"
    "print(f'\\n{p.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}')\n"
)


def _run(project: Path, line: str, path: str) -> tuple[int, int, str]:
    """(exit code, peak RSS in KiB, stderr) of the command, as its own process."""
    args = [part.replace("{F}", path) for part in line.split()]
    env = {**os.environ, "REVIEWTRAIL_STORE": str(project / "store"), "COLUMNS": "200"}
    env.pop("REVIEWTRAIL_DATABASE_URL", None)
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURED, sys.executable, "-m", "reviewtrail", *args],
        capture_output=True, text=True, cwd=project, env=env, timeout=180,
    )  # fmt: skip
    err, _, tail = proc.stdout.rstrip("\n").rpartition("\n")
    code, rss = (int(x) for x in tail.split())
    return code, rss, err


# A regular file of any size is streamed into the CAS in constant memory: only what is not a
# regular file is refused there.
MATRIX = [
    pytest.param(line, field, most, what, id=f"{line.split(' {F}')[0].split(' --')[0]}/{field}/{what}")
    for line, field, most in CASES
    for what in BAD
    if most is not None or what not in ("sparse", "over")
]


@pytest.mark.parametrize("line, field, most, what", MATRIX)
def test_every_file_argument_is_bounded(
    project: Path, tmp_path: Path, line: str, field: str, most: int | None, what: str
) -> None:
    path = _bad(tmp_path, what, most or 0)
    code, rss, err = _run(project, line, path)
    assert code == 2, err
    assert path in err and (not field or field in err), err
    assert rss < RSS_LIMIT_KIB, f"peak RSS {rss} KiB"


def test_a_manifest_that_is_a_folder_is_exit_2(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "manifest.json").mkdir(parents=True)
    code, _, err = _run(project, "review export-verify {F}", str(out))
    assert code == 2 and "manifest.json is a folder" in err, err


def test_a_manifest_nested_100000_deep_is_exit_2_not_a_traceback(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "deep"
    out.mkdir()
    (out / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = _run(project, "review export-verify {F}", str(out))
    assert code == 2 and "Traceback" not in err and "manifest" in err, err


# --- NaN and Infinity ------------------------------------------------------------------------------
json_leaves = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=5)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])


@st.composite
def holding_non_finite(draw: st.DrawFn) -> tuple[Any, str]:
    """A JSON value with one NaN or ±Infinity somewhere, and the path canonical JSON must name."""
    bad = draw(non_finite)
    value: Any = bad
    path: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            before = draw(st.lists(json_leaves, max_size=3))
            value = [*before, value, *draw(st.lists(json_leaves, max_size=3))]
            path.insert(0, f"[{len(before)}]")
        else:
            key = draw(st.from_regex(r"[a-z]{1,6}", fullmatch=True))
            others = draw(st.dictionaries(st.from_regex(r"[A-Z]{1,6}", fullmatch=True), json_leaves, max_size=3))
            value = {**others, key: value}
            path.insert(0, f".{key}")
    return value, "payload" + "".join(path)


@given(holding_non_finite())
def test_nan_and_infinity_anywhere_are_refused_naming_their_path(case: tuple[Any, str]) -> None:
    value, path = case
    with pytest.raises(CanonicalJSONError) as err:
        canonical_json(value, field="payload")
    assert err.value.field == "payload" and f"at {path}:" in str(err.value), str(err.value)


@record_type("test.metrics@1")
class Metrics(RecordPayload):
    values: dict[str, Any]


@given(holding_non_finite())
def test_a_payload_model_never_turns_nan_into_null(case: tuple[Any, str]) -> None:
    value, _ = case
    with pytest.raises(CanonicalJSONError) as err:
        record = new_record(Metrics(values={"m": value}), actor="a", privacy="private")
        canonical_json(record.payload, field="payload")  # what the append encodes
    assert "payload.values.m" in str(err.value)


def test_an_eval_file_holding_nan_is_refused(tmp_path: Path) -> None:
    from reviewtrail.human_review.export._training_receipt import load_evaluation

    for text in ('{"loss": NaN}', '{"a": [1, Infinity]}', '{"b": -Infinity}'):
        path = tmp_path / "eval.json"
        path.write_text(text)
        with pytest.raises(InvalidInputError) as err:
            load_evaluation(path)
        assert err.value.field == "eval" and "canonical JSON cannot hold" in str(err.value)
    path.write_text(json.dumps({"loss": 0.25}))
    assert load_evaluation(path) == {"loss": 0.25}
