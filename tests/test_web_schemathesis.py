"""Schemathesis over the inspector's OpenAPI (``/openapi.json``), against ``reviewtrail serve``
running as a real process on 127.0.0.1 over a store with a campaign: every operation, GET and
HEAD, gets positive and negative cases and positive cases on the store's own campaign, items,
artifact versions and trace run;
no response is a server error (5xx) and every response conforms to the schema the app publishes.

The run is deterministic and bounded (tests/support/openapi_fuzz.py): 25 cases per operation and
mode. Another app that publishes OpenAPI is tested by adding it to :data:`APPS`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse

from conftest import need
from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.web._capability import CAPABILITY_FILE_ENV
from support.human_review import add_prompt, new_store
from support.openapi_fuzz import fuzz_openapi
from support.web import ledger_head, running_inspector
from support.web_pages import TRACE_RUN, artifact_with_two_runs, campaign_in_two_families, three_rounds

MAX_EXAMPLES = 25


@contextmanager
def inspector_over_a_campaign(root: Path, env: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The inspector over a store where every page has something to show (the audit pages' store
    of tests/support/web_pages.py, and a campaign with no item); its base URL and the parameter
    values that name data in that store."""
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    store = new_store(root)
    artifact_with_two_runs(store)
    three_rounds(store, root)
    items, _hidden = campaign_in_two_families(store)
    add_prompt(store, campaign="empty")
    store.close()
    known = {
        "campaign": "camp",
        "version": 1,
        "item_id": items[0].item_id,
        "spec": "report.md@2",
        "old": "report.md@1",
        "new": "report.md@2",
        "skill": "auto-review-loop",
        "run_id": TRACE_RUN,
    }
    with running_inspector(root, env=env or {}) as inspector:
        yield inspector.url, known


@contextmanager
def inspector_with_writes(root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The same, with review writes on (a capability key file): the signed decision route is
    published and fuzzed too, unsigned; nothing may be appended."""
    key = root / "capability.key"
    command = [sys.executable, "-m", "reviewtrail", "serve", "--new-capability", str(key)]
    subprocess.run(command, check=True, capture_output=True)
    with inspector_over_a_campaign(root, {CAPABILITY_FILE_ENV: str(key)}) as (url, known):
        before = head_of(root)
        yield url, known
        assert head_of(root) == before, "a fuzzed request was recorded"


def head_of(root: Path) -> tuple[int, str] | None:
    settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with open_store(settings, read_only=True) as store:
        return ledger_head(store)


@contextmanager
def proxy_in_front(root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``reviewtrail proxy`` in front of the inspector with writes on, signed in as a read-only
    Basic user (its header given with every case); a fuzzed write must not reach the store."""
    from argon2 import PasswordHasher

    from support.proxy import basic_header, running_proxy, write_secret

    users = root / "users"
    users.write_text(f"reader:{PasswordHasher().hash('reader-password')}\n")
    with inspector_with_writes(root) as (url, known):
        env = {
            "REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(users),
            "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(write_secret(root / "proxy.secret", b"p" * 48)),
            CAPABILITY_FILE_ENV: str(root / "capability.key"),
        }
        with running_proxy(url.rstrip("/"), env, root) as proxy:
            yield proxy.url + "/", known | {"_headers": {"Authorization": basic_header("reader", "reader-password")}}


APPS: dict[str, Callable[[Path], AbstractContextManager[tuple[str, dict[str, Any]]]]] = {
    "inspector": inspector_over_a_campaign,
    "inspector-writes": inspector_with_writes,
    "proxy": proxy_in_front,
}


@pytest.mark.parametrize("app", sorted(APPS))
def test_no_operation_answers_a_server_error_or_breaks_its_schema(app: str, tmp_path: Path) -> None:
    with APPS[app](tmp_path) as (url, known):
        headers = known.pop("_headers", None)
        report = fuzz_openapi(url, max_examples=MAX_EXAMPLES, known=known, headers=headers)
    assert report.operations, "the app published no operation"
    if app in ("inspector-writes", "proxy"):
        assert "POST /api/review/decisions" in report.operations
    # Every operation was called, with generated cases.
    assert all(n > 0 for n in report.cases.values()), report.cases
    assert report.failures == {}, "\n\n".join(f"{key}:\n{text}" for key, text in report.failures.items())
    # The known values reached the store's data: some operation answered 200 with them.
    if app != "proxy":  # the proxy's own operations are its login and session routes
        assert any(200 in codes for key, codes in report.statuses.items() if "known values" in key), report.statuses


def test_a_server_error_is_reported(tmp_path: Path) -> None:
    """The run can fail: an app whose one operation answers 500 is reported, with its label."""
    import socket
    import threading

    import uvicorn

    broken = FastAPI()

    @broken.get("/items/{n}")
    def item(n: int) -> PlainTextResponse:
        return PlainTextResponse("boom", status_code=500 if n % 2 == 0 else 200)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(broken, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        report = fuzz_openapi(f"http://127.0.0.1:{sock.getsockname()[1]}/", max_examples=10)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    assert report.operations == ["GET /items/{n}"]
    assert "GET /items/{n} [positive]" in report.failures
    assert "Server error" in report.failures["GET /items/{n} [positive]"]
