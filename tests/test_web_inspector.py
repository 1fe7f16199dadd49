"""The inspector over HTTP (``reviewtrail serve`` as a real process on 127.0.0.1, a real store):
loopback only, read-only, security headers on every response, OpenAPI, and blinded JSON and
HTML before any decision. The browser's view is tests/test_web_browser.py."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import run_cli
from reviewtrail.human_review.session import decide
from reviewtrail.store import Store
from reviewtrail.web import loopback_host
from support.human_review import add_prompt, new_store
from support.web import Inspector, ledger_head, planted_campaign, running_inspector

SECURITY = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inspector, Store, list[Any], set[str]]]:
    root = tmp_path_factory.mktemp("inspector")
    store = new_store(root)
    items, hidden = planted_campaign(store)
    add_prompt(store, campaign="unmade")  # a campaign version with a prompt and no item yet
    with running_inspector(root) as inspector:
        yield inspector, store, items, hidden
    store.close()


def pages(items: list[Any]) -> list[str]:
    item = items[0].item_id
    return [
        "",
        "review/camp/1",
        "review/camp/1?card=2",
        f"items/{item}/history",
        "api/campaigns",
        "api/review/camp/1/cards/1",
        "api/review/camp/1/progress",
        f"api/items/{item}/history",
        "openapi.json",
        "static/review.js",
        "static/inspector.css",
    ]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "10.0.0.1", "::", "2001:db8::1", "example.org", ""])
def test_a_non_loopback_host_is_refused_at_start(host: str, tmp_path: Path) -> None:
    code, out, err = run_cli("serve", "--host", host, "--port", "0", "--json")
    assert code == 2
    error = json.loads(out)["error"]
    assert error["field"] == "host" and repr(host) in error["message"]
    assert repr(host) in err


def test_loopback_forms_are_accepted_as_literals() -> None:
    assert loopback_host("127.0.0.1") == "127.0.0.1"
    assert loopback_host("127.8.9.10") == "127.8.9.10"
    assert loopback_host("::1") == "::1"
    assert loopback_host("[::1]") == "::1"
    assert loopback_host("localhost") == "127.0.0.1"


def test_a_port_out_of_range_or_in_use_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new_store(tmp_path).close()
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    code, out, _ = run_cli("serve", "--port", "70000", "--json")
    assert code == 2 and json.loads(out)["error"]["field"] == "port"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        code, out, _ = run_cli("serve", "--port", str(taken.getsockname()[1]), "--json")
    assert code == 5 and json.loads(out)["error"]["field"] == "port"


def test_a_missing_store_is_exit_5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "nothing"))
    monkeypatch.delenv("REVIEWTRAIL_DATABASE_URL", raising=False)
    code, out, _ = run_cli("serve", "--port", "0", "--json")
    assert code == 5 and json.loads(out)["error"]["type"] == "StoreNotInitializedError"


def test_every_route_answers_get_and_head_only_and_nothing_is_appended(served: Any) -> None:
    inspector, store, items, _ = served
    before = ledger_head(store)
    decision = {"disposition": "tie", "itemId": items[0].item_id}
    paths = [*pages(items), "api/review/decisions", "items/x/decide", "nowhere"]
    with httpx.Client(base_url=inspector.url) as client:
        for path in paths:
            for method in ("POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
                response = client.request(method, path, json=decision)
                assert response.status_code == 405, (method, path)
                assert response.headers["allow"] == "GET, HEAD"
            head = client.head(path)
            assert head.status_code == (404 if path in {"api/review/decisions", "items/x/decide", "nowhere"} else 200)
            assert head.content == b""
    assert ledger_head(store) == before
    assert inspector.process.poll() is None


def test_every_response_carries_the_security_headers(served: Any) -> None:
    inspector, _, items, _ = served
    with httpx.Client(base_url=inspector.url) as client:
        responses = [client.get(path) for path in [*pages(items), "nowhere", "review/camp/9", "items/nope/history"]]
        responses.append(client.post("review/camp/1"))
        responses.append(client.get("", headers={"host": "rebound.example"}))
    assert sorted({r.status_code for r in responses}) == [200, 400, 404, 405]
    for response in responses:
        for name, value in SECURITY.items():
            assert response.headers[name] == value, (response.url, name)
        csp = [part.strip() for part in response.headers["content-security-policy"].split(";")]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in response.headers["content-security-policy"]
        assert "server" not in response.headers


def test_pages_hold_no_inline_script(served: Any) -> None:
    inspector, _, items, _ = served
    with httpx.Client(base_url=inspector.url) as client:
        for path in pages(items)[:4]:
            html = client.get(path).text
            assert "<html" in html
            for tag in html.split("<script")[1:]:
                head, _, rest = tag.partition(">")
                assert 'src="/static/' in head and rest.startswith("</script>"), path
            assert " on" + "click=" not in html and "javascript:" not in html


def test_a_host_header_other_than_loopback_is_refused(served: Any) -> None:
    inspector, _, _, _ = served
    with httpx.Client(base_url=inspector.url) as client:
        assert client.get("", headers={"host": "rebound.example:80"}).status_code == 400
        assert client.get("", headers={"host": "localhost"}).status_code == 200


def test_openapi_lists_only_reads(served: Any) -> None:
    inspector, _, _, _ = served
    doc = httpx.get(inspector.url + "openapi.json").json()
    assert doc["info"]["title"] == "reviewtrail inspector"
    assert {"/", "/review/{campaign}/{version}", "/items/{item_id}/history", "/api/campaigns"} <= doc["paths"].keys()
    for path, operations in doc["paths"].items():
        assert set(operations) == {"get", "head"}, path
    ids = [operation["operationId"] for operations in doc["paths"].values() for operation in operations.values()]
    assert len(ids) == len(set(ids))


def test_nothing_served_names_who_produced_a_candidate_before_a_decision(served: Any) -> None:
    inspector, _, items, hidden = served
    with httpx.Client(base_url=inspector.url) as client:
        bodies = {path: client.get(path).text for path in pages(items)}
        bodies.update({f"card {n}": client.get(f"api/review/camp/1/cards/{n}").text for n in (1, 2, 3)})
    assert all("Candidate A" in bodies[p] and "Candidate B" in bodies[p] for p in ("review/camp/1",))
    for path, body in bodies.items():
        assert not [name for name in hidden if name in body], path


def test_history_reveals_provenance_and_the_reviewer_once_decided(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=1)
    item = items[0]
    with running_inspector(tmp_path) as inspector, httpx.Client(base_url=inspector.url) as client:
        before = client.get(f"api/items/{item.item_id}/history").json()
        assert before["blinded"] and before["provenance"] is None and before["active"] is None
        decide(store, item.item_id, {"disposition": "tie"}, reviewer="rev-1")
        after = client.get(f"api/items/{item.item_id}/history").json()
        page = client.get(f"items/{item.item_id}/history").text
        card = client.get("api/review/camp/1/cards/1").json()["card"]
    assert after["active"]["reviewer"] == "rev-1" and after["active"]["disposition"] == "tie"
    assert {p["model"] for p in after["provenance"]} == {"pelican-model-7", "walrus-model-2"}
    assert "rev-1" in page and "pelican-model-7" in page and "walrus-model-2" in page
    assert card["decided"] is True and "pelican-model-7" not in json.dumps(card)
    store.close()


def test_progress_counts_the_items_as_the_session_status_line_does(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=3)
    with running_inspector(tmp_path) as inspector, httpx.Client(base_url=inspector.url) as client:
        before = client.get("api/review/camp/1/progress").json()
        decide(store, items[1].item_id, {"disposition": "skip"}, reviewer="rev-1")
        skipped = client.get("api/review/camp/1/progress").json()
        decide(store, items[2].item_id, {"disposition": "tie"}, reviewer="rev-1")
        after = client.get("api/review/camp/1/progress").json()
        unknown = client.get("api/review/nowhere/1/progress")
    # A skip supplies no judgment: the item stays open. No reviewer is vouched for: no own counts.
    assert before == {"items": 3, "open": 3, "decided": 0, "own": None}
    assert skipped == {"items": 3, "open": 3, "decided": 0, "own": None}
    assert after == {"items": 3, "open": 2, "decided": 1, "own": None}
    assert unknown.status_code == 404 and unknown.json()["error"]["field"] == "campaign"
    store.close()


def test_the_page_keys_are_the_session_keys() -> None:
    from reviewtrail.human_review.session import SESSION_KEYS
    from reviewtrail.web._keys import DECISION_KEYS, NAVIGATION_KEYS

    session = {key.strip() for keys, _ in SESSION_KEYS for key in keys.split("/")}
    assert [k.key for k in DECISION_KEYS if k.key not in session] == []
    assert [k.key for k in NAVIGATION_KEYS if k.key in session - {"?"}] == []  # no navigation key shadows one


# Run as ``reviewtrail ARGS`` in a fresh process; prints which web modules were loaded.
PROBE = """
import atexit, json, sys
def report():
    web = ("fastapi", "starlette", "uvicorn", "jinja2", "reviewtrail.web", "reviewtrail.web._app")
    sys.stderr.write("\\nLOADED " + json.dumps(sorted(m for m in web if m in sys.modules)) + "\\n")
atexit.register(report)
sys.argv = ["reviewtrail", *sys.argv[1:]]
from reviewtrail.cli import main
main()
"""


@pytest.mark.parametrize(
    ("args", "code", "loaded"),
    [
        (["--help"], 0, []),
        (["serve", "--help"], 0, []),
        (["serve", "--host", "0.0.0.0"], 2, ["reviewtrail.web"]),
    ],
)
def test_the_command_line_loads_the_web_framework_only_to_serve(args: list[str], code: int, loaded: list[str]) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    assert json.loads(done.stderr.rsplit("LOADED ", 1)[1]) == loaded


def test_refusals_name_the_field(served: Any) -> None:
    inspector, _, _, _ = served
    with httpx.Client(base_url=inspector.url) as client:
        empty = client.get("review/unmade/1")
        assert empty.status_code == 200 and "no review items yet" in empty.text
        assert client.get("api/review/unmade/1/cards/1").json() == {"position": 1, "more": False, "card": None}
        cases = {
            "api/review/camp/1/cards/99": (404, "card"),
            "api/review/camp/1/cards/0": (400, "card"),
            "api/review/camp/2/cards/1": (404, "campaign"),
            "api/items/no-such-item/history": (404, "item"),
        }
        for path, (status, field) in cases.items():
            response = client.get(path)
            assert response.status_code == status, path
            assert response.json()["error"]["field"] == field, path
        page = client.get("review/camp/1?card=99")
        assert page.status_code == 404 and "<code>card</code>" in page.text


def test_ctrl_c_stops_the_inspector(tmp_path: Path) -> None:
    import signal

    new_store(tmp_path).close()
    with running_inspector(tmp_path) as inspector:
        assert httpx.get(inspector.url).status_code == 200
        inspector.process.send_signal(signal.SIGINT)
        assert inspector.process.wait(timeout=30) == 130
        assert "Traceback" not in inspector.output.text()
