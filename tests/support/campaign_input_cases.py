"""The campaign's bad inputs, by name: each must be refused with a documented exit code.

``bad_input_cases`` gives them in groups; each group runs on one copy of the project and shares
one ``verify`` (see ``campaign_inputs``). A case lists the exit codes it accepts (all within 2-6),
the environment it runs with and any file it needs for itself alone.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field

from support.campaign import Facts

__all__ = ["FILES", "BadInput", "bad_input_cases"]

DOCUMENTED = {2, 3, 4, 5, 6}
UNKNOWN = str(uuid.UUID("01a20000-0000-7000-8000-0000000000ff"))


@dataclass(frozen=True)
class BadInput:
    name: str
    args: tuple[str, ...]
    codes: frozenset[int]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # written for this case only
    field: str = ""  # when given, stderr must name it


def _case(
    name: str,
    codes: set[int],
    *args: str,
    env: dict[str, str] | None = None,
    files: dict[str, bytes] | None = None,
    field: str = "",
) -> BadInput:
    assert codes <= DOCUMENTED
    return BadInput(name, args, frozenset(codes), env or {}, files or {}, field)


FILES = {
    "notes.txt": b"plain text, not a PDF\n",
    "bad-checkpoint.json": b'{"type": "reviewtrail.checkpoint@1", "seq": "ten"}',
    "deep.json": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "binary.md": b"The model scores \xff\xfe 0.91.\n",
}


def bad_input_cases(f: Facts) -> list[list[BadInput]]:
    """The cases, in groups that share one ``verify``."""
    append = ("ledger", "append", "--actor", "a", "--privacy", "private")
    typed = (*append, "--type", "eval.bad@1")
    save = ("trace", "save", "--skill", "campaign-bad", "--purpose", "p", "--response", "r", "--executor", "codex")
    s = f.session
    return [
        _non_utf8(f),
        [
            _case("ledger append: payload is a JSON list", {2}, *typed, "--payload", "[1, 2]"),
            _case("ledger append: payload is a JSON string", {2}, *typed, "--payload", '"text"'),
            _case("ledger append: payload is not JSON", {2}, *typed, "--payload", '{"a": '),
            _case("ledger append: payload with NaN", {2}, *typed, "--payload", '{"a": NaN}'),
            _case("ledger append: payload with a duplicate key", {2}, *typed, "--payload", '{"a": 1, "a": 2}'),
            _case("ledger append: payload with a lone surrogate", {2}, *typed, "--payload", '{"a": "\\ud800"}'),
            _case(
                "ledger append: payload with a 30-digit integer", {2}, *typed, "--payload", '{"a": ' + "9" * 30 + "}"
            ),
            _case("ledger append: payload nested 100000 deep", {2}, *typed, "--payload", "@deep.json"),
            _case("ledger append: payload file missing", {2, 3}, *typed, "--payload", "@missing.json"),
            _case(
                "ledger append: reserved type provenance.execution-run@1",
                {2},
                *append,
                "--type",
                "provenance.execution-run@1",
                "--payload",
                "{}",
            ),
            _case("ledger append: reserved type trace.review-call@1", {2}, *append, "--type", "trace.review-call@1"),
            _case("ledger append: reserved type review.run@1", {2}, *append, "--type", "review.run@1"),
            _case(
                "ledger append: reserved type stream.thought.delta@1", {2}, *append, "--type", "stream.thought.delta@1"
            ),
        ],
        [
            _case(
                "ledger append: bad privacy",
                {2},
                "ledger",
                "append",
                "--actor",
                "a",
                "--privacy",
                "secret",
                "--type",
                "eval.bad@1",
            ),
            _case("ledger append: type without a version", {2}, *append, "--type", "eval.result"),
            _case("ledger append: type with a space", {2}, *append, "--type", "eval result@1"),
            _case(
                "ledger append: empty actor",
                {2},
                "ledger",
                "append",
                "--actor",
                "",
                "--privacy",
                "private",
                "--type",
                "eval.bad@1",
            ),
            _case(
                "ledger append: dangling CAS reference",
                {2, 3, 4},
                *typed,
                "--payload",
                json.dumps({"file": {"hash": "ab" * 32, "size": 12}}),
            ),
            _case(
                "ledger append: malformed CAS reference",
                {2},
                *typed,
                "--payload",
                json.dumps({"file": {"hash": "xyz", "size": 1}}),
            ),
            _case("ledger append: supersedes a record that does not exist", {2, 3}, *typed, "--supersedes", UNKNOWN),
            _case("ledger show: unknown record", {2, 3}, "ledger", "show", UNKNOWN),
            _case("cas cat: bad address", {2}, "cas", "cat", "xyz"),
            _case("cas cat: unknown address", {3}, "cas", "cat", "sha256:" + "cd" * 32),
            _case("cas put: missing file", {2, 3}, "cas", "put", "missing.bin"),
            _case("cas put: unknown pool", {2}, "cas", "put", "up.csv", "--pool", "nope"),
            _case("cas put: a directory", {2}, "cas", "put", "."),
            _case("cas verify: bad address", {2}, "cas", "verify", "sha256:XYZ"),
        ],
        [
            _case("artifact upload: name with @", {2}, "artifact", "upload", "evil@2.csv", "up.csv"),
            _case("artifact upload: name with a newline", {2}, "artifact", "upload", "a\nb.csv", "up.csv"),
            _case("artifact upload: 300-character name", {2}, "artifact", "upload", "n" * 300, "up.csv"),
            _case("artifact upload: empty name", {2}, "artifact", "upload", "", "up.csv"),
            _case("artifact upload: bad origin", {2}, "artifact", "upload", "x.csv", "up.csv", "--origin", "stolen"),
            _case("artifact upload: missing file", {2, 3}, "artifact", "upload", "x.csv", "missing.csv"),
            _case(
                "artifact declare: missing path",
                {2, 3},
                "artifact",
                "declare",
                "x.md",
                "--session",
                s,
                "--path",
                "missing.md",
            ),
            _case(
                "artifact declare: path out of the workspace",
                {2},
                "artifact",
                "declare",
                "x.json",
                "--session",
                s,
                "--path",
                "../../reviewtrail-store.json",
            ),
            _case(
                "artifact declare: unknown session",
                {2, 3},
                "artifact",
                "declare",
                "x.md",
                "--session",
                UNKNOWN,
                "--path",
                "out.md",
            ),
            _case("artifact show: unknown artifact", {3}, "artifact", "show", "nope.csv"),
            _case("artifact diff: unknown version", {3}, "artifact", "diff", "data.csv@1", "data.csv@9"),
            _case("provenance: unknown artifact", {3}, "provenance", "nope.csv@1"),
            _case("provenance: bad format", {2}, "provenance", "data.csv", "--format", "xml"),
        ],
        [
            _case("session rm: unknown session", {3}, "session", "rm", UNKNOWN),
            _case("session rm: not a session id", {2, 3}, "session", "rm", "../../versioning"),
            _case("session rm: already deleted", {6}, "session", "rm", f.extra["deleted_session"]),
            _case(
                "run: --allow without --network allowlist",
                {2},
                "run",
                "--session",
                s,
                "--allow",
                "example.com",
                "-c",
                "print(1)",
            ),
            _case("run: bad --max-memory", {2}, "run", "--session", s, "--max-memory", "lots", "-c", "print(1)"),
            _case("run: bad --network", {2}, "run", "--session", s, "--network", "wifi", "-c", "print(1)"),
            _case("run: negative --timeout", {2}, "run", "--session", s, "--timeout", "-1", "-c", "print(1)"),
            _case("run: unknown --lang", {2}, "run", "--session", s, "--lang", "cobol", "-c", "print(1)"),
            _case("run: unknown session", {2, 3}, "run", "--session", UNKNOWN, "-c", "print(1)"),
            _case("run: --cwd out of the workspace", {2}, "run", "--session", s, "--cwd", "/etc", "-c", "print(1)"),
            _case("run: bad --env", {2}, "run", "--session", s, "--env", "NOEQUALS", "-c", "print(1)"),
            _case("run: bad --max-procs", {2}, "run", "--session", s, "--max-procs", "0", "-c", "print(1)"),
        ],
        [
            _case("trace save: --project-dir does not exist", {2}, *save, "--project-dir", "/nonexistent/campaign"),
            _case("trace save: --project-dir is a file", {2}, *save, "--project-dir", "up.csv"),
            _case("trace save: --status with a newline", {2}, *save, "--status", "ok\nforged", "--project-dir", "."),
            _case("trace save: bad --run-id", {2}, *save, "--run-id", "../x", "--project-dir", "."),
            _case(
                "trace save: bad --skill",
                {2},
                "trace",
                "save",
                "--skill",
                "../up",
                "--purpose",
                "p",
                "--project-dir",
                ".",
            ),
            _case("trace show: unknown run", {2, 3}, "trace", "show", "nope/2026-01-01_run01"),
            _case("evidence extract-pdf: not a PDF", {2}, "evidence", "extract-pdf", "doi:10.1/x", "notes.txt"),
            _case("evidence extract-pdf: missing file", {2, 3}, "evidence", "extract-pdf", "doi:10.1/x", "no.pdf"),
            _case("evidence add: two origins", {2}, "evidence", "add", "--run", f.run_record, "--paper", "doi:1"),
            _case("evidence add: unknown run", {2, 3}, "evidence", "add", "--run", UNKNOWN),
            _case("evidence link: unknown claim", {2, 3}, "evidence", "link", UNKNOWN, f.evidence),
            _case("evidence link: bad relation", {2}, "evidence", "link", f.claim, f.evidence, "--relation", "maybe"),
            _case("ledger checkpoint: --key is not a key", {2}, "ledger", "checkpoint", "--key", "notes.txt"),
            _case("ledger checkpoint: --key missing", {2, 3}, "ledger", "checkpoint", "--key", "missing.pem"),
            _case("ledger checkpoint: --out exists", {2, 6}, "ledger", "checkpoint", "--out", "up.csv"),
            _case(
                "verify --public-key: not a key",
                {2},
                "verify",
                "--checkpoint",
                "bad-checkpoint.json",
                "--public-key",
                "notes.txt",
            ),
            _case("verify --checkpoint: malformed file", {2}, "verify", "--checkpoint", "bad-checkpoint.json"),
            _case("verify --checkpoint: missing file", {2, 3}, "verify", "--checkpoint", "missing-checkpoint.json"),
            _case("claims extract: missing file", {2, 3}, "claims", "extract", "missing.md"),
            _case("review citations: missing file", {2, 3}, "review", "citations", "missing.md"),
        ],
        [
            _case(
                "trace install-helper: --project-dir does not exist",
                {2},
                "trace",
                "install-helper",
                "--project-dir",
                "missing-project",
            ),
            _case(
                "config: reviewtrail.toml is not TOML", {5}, "ledger", "tail", files={"reviewtrail.toml": b"store = ["}
            ),
            _case(
                "config: unknown key in reviewtrail.toml",
                {5},
                "ledger",
                "tail",
                files={"reviewtrail.toml": b'stor = "x"\n'},
            ),
            _case(
                "config: unsupported database URL",
                {2, 5},
                "ledger",
                "tail",
                env={"REVIEWTRAIL_DATABASE_URL": "mysql://db/x"},
            ),
            _case(
                "config: PostgreSQL server unreachable",
                {5},
                "ledger",
                "tail",
                env={"REVIEWTRAIL_DATABASE_URL": "postgresql://127.0.0.1:9/x"},
            ),
            _case("config: store is a file", {2, 5}, "ledger", "tail", env={"REVIEWTRAIL_STORE": "up.csv"}),
            _case("config: bad REVIEWTRAIL_PROJECT", {2}, "artifact", "ls", env={"REVIEWTRAIL_PROJECT": "../x"}),
            _case(
                "config: bad REVIEWTRAIL_REVIEWER",
                {2, 5},
                "review",
                "run",
                "out.md",
                env={"REVIEWTRAIL_REVIEWER": "ultra"},
            ),
            _case("config: bad ARIS_TRACE_MODE", {2}, *save, "--project-dir", ".", env={"ARIS_TRACE_MODE": "loud"}),
            _case("config: bad ARIS_TRACE_RUN_ID", {2}, *save, "--project-dir", ".", env={"ARIS_TRACE_RUN_ID": "../x"}),
            _case(
                "review run: unknown artifact", {3}, "review", "run", "nope.md", env={"REVIEWTRAIL_REVIEWER": "quick"}
            ),
        ],
    ]


def _non_utf8(f: Facts) -> list[BadInput]:
    """Arguments holding a byte that is not UTF-8 (Python sees it as a lone surrogate, U+DCFF)."""
    x = "\udcff"
    s = f.session
    save = ("trace", "save", "--skill", "campaign-bad", "--purpose", "p", "--project-dir", ".")
    return [
        _case(
            "non-UTF-8: ledger append --actor",
            {2},
            "ledger",
            "append",
            "--type",
            "eval.x@1",
            "--actor",
            f"a{x}",
            "--privacy",
            "private",
        ),
        _case("non-UTF-8: ledger tail --subject", {2}, "ledger", "tail", "--subject", f"s{x}"),
        _case("non-UTF-8: artifact upload NAME", {2}, "artifact", "upload", f"n{x}.csv", "up.csv"),
        _case("non-UTF-8: artifact show NAME", {2, 3}, "artifact", "show", f"n{x}.csv"),
        _case(
            "non-UTF-8: artifact declare NAME",
            {2},
            "artifact",
            "declare",
            f"d{x}.md",
            "--session",
            s,
            "--path",
            "out.md",
        ),
        _case("non-UTF-8: provenance NAME", {2, 3}, "provenance", f"n{x}.csv"),
        _case("non-UTF-8: trace save --response", {2}, *save, "--response", f"r{x}"),
        _case("non-UTF-8: trace save --prompt", {2}, *save, "--prompt", f"p{x}", "--response", "r"),
        _case("non-UTF-8: trace save --status", {2}, *save, "--status", f"ok{x}", "--response", "r"),
        _case("non-UTF-8: run --env value", {2}, "run", "--session", s, "--env", f"A={x}", "-c", "print(1)"),
        _case("non-UTF-8: run -c code", {2}, "run", "--session", s, "-c", f"print('{x}')"),
        _case("non-UTF-8: session new --project", {2}, "session", "new", "--project", f"p{x}"),
        _case("non-UTF-8: claims extract --turn", {2}, "claims", "extract", "reply.md", "--turn", f"t{x}"),
        _case("non-UTF-8: claims extract of a binary file", {2}, "claims", "extract", "binary.md"),
        _case("non-UTF-8: evidence add --mcp", {2}, "evidence", "add", "--mcp", f"srv{x}/rec/1"),
    ]
