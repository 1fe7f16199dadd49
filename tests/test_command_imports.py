"""Everyday commands load only what they use: run in a fresh process against a small real store,
``ledger tail``, ``cas put``, ``cas cat``, ``trace save``, ``review queue`` and ``review decide``
never import the reviewer, evidence or provenance packages, nor the command modules of other
groups, nor rich (tables to a pipe are drawn without it). All but ``review decide`` take the fast
path (``reviewtrail.cli._fast``): typer and click are not imported either. Each command's exact
set of reviewtrail modules is listed here (no timings: ``bench/bench_startup.py`` measures
start-up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewtrail.store import Store
from support.catalog import DECLARATIONS
from support.human_review import campaign_with_items, new_store

# Prints, at exit, every loaded reviewtrail module, which optional heavy libraries were imported, the
# loaded reviewtrail modules that define a dataclass, and every module loaded at all.
PROBE = """
import atexit, json, sys
def report():
    names = sorted(m for m in sys.modules if m.startswith("reviewtrail."))
    heavy = ("psycopg", "cryptography", "jsonschema", "httpx", "rich", "typer", "click", "pydantic")
    libraries = sorted(m for m in heavy if m in sys.modules)
    dataclasses = sorted(
        name for name in names for value in list(vars(sys.modules[name]).values())
        if isinstance(value, type) and value.__module__ == name and "__dataclass_fields__" in vars(value)
    )
    found = [names, libraries, sorted(set(dataclasses)), sorted(sys.modules)]
    sys.stderr.write("\\nLOADED " + json.dumps(found) + "\\n")
atexit.register(report)
sys.argv[0] = "reviewtrail"
from reviewtrail.cli import main
main()
"""


# What every command that opens a store loads: the store and the layers below it, and the
# composition root (and each domain package's declaration, DECLARATIONS). No model: ``ledger tail``
# and ``cas cat`` load neither the record to append, the payload models nor the CAS reference models.
STORE = {
    "reviewtrail._durable",
    "reviewtrail._face",
    "reviewtrail._value",
    "reviewtrail._version",
    "reviewtrail.app",
    "reviewtrail.canonical",
    "reviewtrail.cas",
    "reviewtrail.cli",
    "reviewtrail.config",
    "reviewtrail.errors",
    "reviewtrail.ledger",
    "reviewtrail.store",
}
# The msgspec model base: the CAS references and the payload models converted to msgspec are built
# on it (a command that makes or finds a reference loads it, and msgspec, but no pydantic).
STRUCT = {"reviewtrail._struct"}
# Human review loads its modules on first use: deciding checks the decision with the package's
# msgspec payload models (no pydantic, no strict value types).
HUMAN_REVIEW = STORE | STRUCT | {"reviewtrail.human_review"}
# Reading the queue reads its records through the package's msgspec payload models (and the ledger
# holds the query-table rows against them): the model base, but not the strict value types of the
# pydantic models, nor pydantic.
HUMAN_REVIEW_READ = STORE | STRUCT | {"reviewtrail.human_review"}
# The fast path: the entry point, the commands' declaration and bodies, printing and progress bars;
# no typer app.
FAST_CLI = {
    "reviewtrail.cli._fast",
    "reviewtrail.cli._everyday_options",
    "reviewtrail.cli._output",
    "reviewtrail.cli._everyday",
    "reviewtrail.cli._progress",
}
CLI_BASE = {
    "reviewtrail.cli._fast",
    "reviewtrail.cli._everyday_options",
    "reviewtrail.cli._app",
    "reviewtrail.cli._output",
}
REVIEW_CLI = CLI_BASE | {
    "reviewtrail.cli._everyday",
    "reviewtrail.cli._everyday_commands",
    "reviewtrail.cli.review",
    "reviewtrail.cli.review._review",
    "reviewtrail.cli.review._decide",
    "reviewtrail.cli.review._session",
    "reviewtrail.cli.review._campaign_outputs",
    "reviewtrail.cli._progress",
}
NEVER = {"reviewtrail.reviewer", "reviewtrail.evidence", "reviewtrail.provenance"}
# Reading records or an object by its address (ledger tail, cas cat), storing one (cas put), the
# review queue and a trace save load no heavy library; review decide loads typer (not the fast path)
# and no pydantic: the decision's payload models are msgspec models.
READ_LIBRARIES: list[str] = []


class Project:
    def __init__(self, root: Path, digest: str, item_id: str) -> None:
        self.root = root
        self.digest = digest
        self.item_id = item_id
        self.human_review: list[str] = []  # human review's modules the last command loaded
        self.declared: set[str] = set()  # the declarations of the domain packages it loaded
        self.dataclasses: set[str] = set()  # its loaded modules that define a dataclass
        self.modules: set[str] = set()  # every module it loaded, the standard library's too
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "ARIS_"))},
            "REVIEWTRAIL_STORE": str(root / "store"),
            "REVIEWTRAIL_DATABASE_URL": f"sqlite:///{root / 'ledger.sqlite'}",
            "REVIEWTRAIL_REVIEWER_ID": "rev-test",
        }

    def loaded(self, *args: str) -> tuple[set[str], set[str], list[str]]:
        """Run ``reviewtrail ARGS`` in a fresh process: (packages, command modules, libraries)."""
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=self.env, cwd=self.root
        )
        assert proc.returncode == 0, proc.stderr
        line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED "))
        names, libraries, dataclasses, modules = json.loads(line.removeprefix("LOADED "))
        self.dataclasses, self.modules = set(dataclasses), set(modules)
        self.declared = set(names) & DECLARATIONS
        self.human_review = [m for m in names if m.startswith("reviewtrail.human_review.")]
        packages = {".".join(m.split(".")[:2]) for m in names if m not in DECLARATIONS}
        return packages, {m for m in names if m.startswith("reviewtrail.cli.")}, libraries


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("commands")
    store: Store = new_store(root)
    try:
        digest = str(store.cas.put(b"hello\n").digest)
        items = campaign_with_items(store, 2)
    finally:
        store.close()
    (root / "small.txt").write_text("a small file\n")
    (root / "prompt.txt").write_text("Review the method section.\n")
    (root / "response.md").write_text("Score: 6/10.\n")
    return Project(root, digest, items[0].item_id)


def _trace_save(root: Path) -> list[str]:
    return [
        "trace", "save", "--skill", "probe", "--purpose", "round", "--backend", "grok", "--tool", "mcp__grok__grok",
        "--executor", "codex", "--executor-model", "gpt-5", "--requested-reviewer-model", "grok-4",
        "--reported-reviewer-model", "grok-4", "--prompt-file", str(root / "prompt.txt"),
        "--response-file", str(root / "response.md"), "--status", "ok", "--verdict", "ready", "--review-completed",
        "--project-dir", str(root),
    ]  # fmt: skip


def test_ledger_tail_loads_the_store_only(project: Project) -> None:
    packages, cli, libraries = project.loaded("ledger", "tail", "-n", "5")
    assert packages == STORE
    assert project.declared == DECLARATIONS
    assert cli == FAST_CLI
    assert libraries == READ_LIBRARIES


def test_cas_put_and_cat_load_the_store_only(project: Project) -> None:
    packages, cli, libraries = project.loaded("cas", "cat", project.digest)
    assert packages == STORE
    assert cli == FAST_CLI
    assert libraries == READ_LIBRARIES
    packages, cli, libraries = project.loaded("cas", "put", str(project.root / "small.txt"))
    assert packages == STORE | STRUCT
    assert cli == FAST_CLI
    assert libraries == READ_LIBRARIES


def test_trace_save_loads_tracing_and_the_store(project: Project) -> None:
    """The save builds no pydantic model (the record to append and the trace documents are plain),
    and the ledger checks the two records' payloads with the trace package's payload models, msgspec
    models: neither pydantic nor the strict value types are loaded."""
    packages, cli, libraries = project.loaded(*_trace_save(project.root))
    assert packages == STORE | STRUCT | {"reviewtrail.tracing", "reviewtrail.inputs"}
    assert cli == FAST_CLI
    assert libraries == READ_LIBRARIES


def test_review_queue_and_decide_load_human_review_and_the_store(project: Project) -> None:
    packages, cli, libraries = project.loaded("review", "queue")
    assert packages == HUMAN_REVIEW_READ
    assert cli == FAST_CLI
    assert libraries == READ_LIBRARIES
    packages, cli, libraries = project.loaded(
        "review", "decide", project.item_id, "--prefer", "A", "--strength", "slight"
    )
    assert packages == HUMAN_REVIEW
    assert cli == REVIEW_CLI
    assert libraries == ["typer"]


# What ``review queue`` loads of human review: its declaration, the parts' faces, the queue and what it reads with
# (the records as they stand, the rules, the record types); no decision, reveal, history, session,
# campaign, export or quality module.
QUEUE_PARTS = {
    "reviewtrail.human_review.catalog",
    "reviewtrail.human_review.reads",
    "reviewtrail.human_review.reads._bulk_resolve",
    "reviewtrail.human_review.reads._candidates",
    "reviewtrail.human_review.reads._chains",
    "reviewtrail.human_review.reads._listed",
    "reviewtrail.human_review.reads._resolve",
    "reviewtrail.human_review.records",
    "reviewtrail.human_review.records._projection",
    "reviewtrail.human_review.records._record_names",
    "reviewtrail.human_review.records._record_types",
    "reviewtrail.human_review.records._records",
    "reviewtrail.human_review.records._run_records",
    "reviewtrail.human_review.records._self_identification",
    "reviewtrail.human_review.records._tables",
    "reviewtrail.human_review.rules",
    "reviewtrail.human_review.rules._decision_rules",
    "reviewtrail.human_review.rules._frozen",
    "reviewtrail.human_review.rules._item_rules",
    "reviewtrail.human_review.rules._queue_rules",
    "reviewtrail.human_review.rules._reviewers",
    "reviewtrail.human_review.rules._run_rules",
    "reviewtrail.human_review.session",
    "reviewtrail.human_review.session._queue",
    "reviewtrail.human_review.session._skipped",
}


def test_review_queue_loads_only_the_human_review_modules_it_uses(project: Project) -> None:
    project.loaded("review", "queue")
    assert set(project.human_review) == QUEUE_PARTS


def test_no_everyday_command_loads_the_reviewer_evidence_or_provenance(project: Project) -> None:
    for args in (("ledger", "tail"), ("cas", "cat", project.digest), ("review", "queue"), _trace_save(project.root)):
        packages, _, libraries = project.loaded(*args)
        assert packages & NEVER == set(), args
        assert {"typer", "click", "rich"} & set(libraries) == set(), args


def test_verify_loads_every_package(project: Project) -> None:
    """verify checks every query table against the chain with every package loaded (each checked
    against its declaration in the record index), whatever records the store holds."""
    packages, _, _ = project.loaded("verify", "--json")
    assert NEVER | {"reviewtrail.human_review", "reviewtrail.models", "reviewtrail.tracing"} <= packages


# A dataclass costs about half a millisecond to build at import: the modules the everyday commands load
# define none (plain value classes, reviewtrail._value, or msgspec structs where the command loads
# msgspec anyway), so the commands that load no msgspec load neither ``dataclasses`` nor ``inspect``.
WITHOUT_MSGSPEC = {"dataclasses", "inspect", "msgspec"}
# Standard-library modules an everyday command does not use, so never loads: human review's text digest
# (``unicodedata``; made for a response's query-table rows, which only the queue derives); a writer
# key's declaration (``base64``, ``binascii``; read when a signature is checked); reading ahead on a
# thread (``queue``; verify, migrate); finding boto3 (``importlib.util``; an ``s3://`` CAS); ``secrets``
# (it loads ``base64``, ``hmac`` and ``random``; a project folder's id is random bytes from the OS);
# ``rfc8785`` (canonical JSON of a value the C-speed path declines, such as a float).
UNUSED = {"unicodedata", "base64", "binascii", "queue", "importlib.util", "secrets", "rfc8785"}


def _everyday(project: Project) -> dict[str, tuple[str, ...]]:
    return {
        "ledger tail": ("ledger", "tail", "-n", "5"),
        "cas cat": ("cas", "cat", project.digest),
        "review queue": ("review", "queue"),
        "trace save": tuple(_trace_save(project.root)),
    }


@pytest.mark.parametrize("command", ["ledger tail", "cas cat", "review queue", "trace save"])
def test_everyday_commands_build_no_dataclass_and_skip_what_they_do_not_use(project: Project, command: str) -> None:
    project.loaded(*_everyday(project)[command])
    assert project.dataclasses == set()
    unused = UNUSED - {"unicodedata"} if command == "review queue" else UNUSED
    if command in ("ledger tail", "cas cat"):
        unused = unused | WITHOUT_MSGSPEC
    assert project.modules & unused == set()
