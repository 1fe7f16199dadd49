"""The inspector in tests: ``reviewtrail serve`` started as a real process on 127.0.0.1 with a
port the system chooses (``--port 0 --json`` announces it), over a store the test built."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail.store import Store

__all__ = [
    "CHROMIUM",
    "PLANTED",
    "Inspector",
    "ServerOutput",
    "announcing",
    "chromium",
    "ledger_head",
    "planted_campaign",
    "running_inspector",
    "store_env",
]


class ServerOutput:
    """A server's standard error, kept in an unnamed file as it is written: the server never
    blocks on it (a pipe nobody reads fills at 64 KiB and stops the server at its next line)."""

    def __init__(self) -> None:
        # O_APPEND: the server always writes at the end, whatever this process reads
        self.file = tempfile.TemporaryFile(mode="a+b")  # noqa: SIM115 (closed by close())

    def text(self) -> str:
        """Everything written so far."""
        size = os.fstat(self.file.fileno()).st_size
        return os.pread(self.file.fileno(), size, 0).decode(errors="replace")

    def close(self) -> None:
        self.file.close()


@dataclass(frozen=True)
class Inspector:
    url: str  # ends with "/"
    process: subprocess.Popen[str]
    output: ServerOutput  # its standard error


def store_env(root: Path) -> dict[str, str]:
    """The environment that points a command at the store ``new_store(root)`` made."""
    env = dict(os.environ)
    env["REVIEWTRAIL_STORE"] = str(root / "store")
    env["REVIEWTRAIL_DATABASE_URL"] = f"sqlite:///{root / 'ledger.sqlite'}"
    return env


@contextmanager
def running_inspector(root: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Inspector]:
    """``reviewtrail serve --port 0 --json ARGS`` over the store ``new_store(root)`` made (with
    ``env`` added to its environment), stopped (SIGTERM) on exit."""
    command = [sys.executable, "-m", "reviewtrail", "serve", "--port", "0", "--json", *args]
    with announcing(command, store_env(root) | (env or {}), root, "the inspector") as (process, announced, output):
        yield Inspector(announced["url"], process, output)


def _ctrl_c_default() -> None:
    """In the child, before it runs: Ctrl-C (SIGINT) acts as on a terminal, whatever this process
    inherited (a suite started as a background job of a non-interactive shell ignores SIGINT, and a
    child inherits that, so Ctrl-C would never reach the server). Nothing is imported here: the
    child runs it between fork and exec, where another thread's import lock could be held."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def announcing(
    command: list[str], env: dict[str, str], cwd: Path, name: str
) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any], ServerOutput]]:
    """``command`` started as a process that prints one JSON object once it listens (``--json``):
    the process, that object and its standard error (:class:`ServerOutput`); stopped (SIGTERM,
    then SIGKILL after 30 s) on exit. Nothing else is read from its standard output, so it must
    print nothing more than a pipe holds."""
    output = ServerOutput()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=output.file, text=True, cwd=cwd, preexec_fn=_ctrl_c_default
    )
    try:
        # The JSON announcement is printed once the socket listens: read it whole, line by line.
        text = ""
        while True:
            line = process.stdout.readline() if process.stdout else ""
            if not line:
                raise AssertionError(f"{name} exited ({process.wait()}): {output.text()}")
            text += line
            if line.startswith("}"):
                break
        yield process, json.loads(text), output
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        output.close()


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (never a browser Playwright downloads)."""
    from conftest import need

    need(Path(CHROMIUM).is_file(), "Debian's chromium is not installed (scripts/setup.sh --system installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - depends on the environment
        need(False, "playwright is not installed (pip install -e '.[dev]')")
        raise
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


def ledger_head(store: Store) -> tuple[int, str] | None:
    """The ledger's head (seq, hash), read afresh."""
    head = store.ledger.head()
    return None if head is None else (head.seq, head.hash)


# Names no page may show before a decision: every candidate's run id and these, planted in the runs.
PLANTED = {
    "agent-heron": {
        "model": "pelican-model-7",
        "provider": "quokkacloud",
        "executionAdapter": "narwhal-exec@3",
        "learnedAdapter": "okapi-lora-5",
        "catalogGeneration": "gen-axolotl",
    },
    "agent-bison": {
        "model": "walrus-model-2",
        "provider": "capybarahost",
        "executionAdapter": "ibis-exec@9",
        "learnedAdapter": "tapir-lora-1",
        "catalogGeneration": "gen-marmot",
    },
}


def planted_campaign(store: Store, n: int = 3) -> tuple[list[Any], set[str]]:
    """``n`` items of campaign ``camp`` v1 whose runs carry the distinctive names of
    :data:`PLANTED`, and every name a blinded page must not hold (run ids included)."""
    from support.human_review import add_item, add_prompt, add_run

    agents = tuple(PLANTED)
    items, hidden = [], {name for agent in PLANTED.values() for name in agent.values()} | set(agents)
    for _ in range(n):
        prompt = add_prompt(store, agents=agents)
        runs = [add_run(store, prompt, agent, **PLANTED[agent]) for agent in agents]
        hidden.update(runs)
        items.append(add_item(store, prompt, *runs))
    return items, hidden
