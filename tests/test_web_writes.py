"""The inspector's one write route against a real ``reviewtrail serve`` process: on only with a
review capability file readable by its owner only; RFC 9421 signature, freshness, one-time nonce
(durable across a restart), body digest and the fixed decision schema checked before anything is
appended; the record it makes is the one ``review decide`` makes."""

from __future__ import annotations

import datetime
import json
import os
import re
import secrets
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_message_signatures import HTTPMessageSigner, algorithms
from hypothesis import given
from hypothesis import strategies as st

from conftest import need, run_cli
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records._record_names import IDENT_PATTERN
from reviewtrail.store import Store
from reviewtrail.web import _decision as decision
from reviewtrail.web._capability import (
    CAPABILITY_FILE_ENV,
    DECISION_ROUTE,
    MAX_BODY_BYTES,
    Capability,
    SignatureRefusedError,
    load_capability,
    sign_decision,
    verify_decision_signature,
)
from support.human_review import new_store
from support.web import Inspector, ledger_head, planted_campaign, running_inspector, store_env
from support.web_signature import SHAPES, hand_signed


def capability_file(root: Path, name: str = "capability.key") -> Path:
    path = root / name
    subprocess.run(
        [sys.executable, "-m", "reviewtrail", "serve", "--new-capability", str(path)], check=True, capture_output=True
    )
    return path


def body_of(item: Any, **fields: Any) -> dict[str, Any]:
    return {
        "itemId": item.item_id,
        "campaignId": "camp",
        "campaignVersion": 1,
        "submissionId": secrets.token_hex(16),
        "reviewer": "proxy-7f3a9c",
        "disposition": "prefer",
        "preferred": "A",
        "strength": "slight",
        **fields,
    }


def post(
    inspector: Inspector,
    capability: Capability,
    body: dict[str, Any] | bytes,
    *,
    sent_body: bytes | None = None,
    path: str = DECISION_ROUTE,
    method: str = "POST",
    **signing: Any,
) -> httpx.Response:
    """Sign ``body`` for ``POST /api/review/decisions`` and send it (or ``sent_body``) with
    ``method`` to ``path``."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    url = inspector.url.rstrip("/") + DECISION_ROUTE
    headers = sign_decision(capability, url, raw, **signing)
    return httpx.request(
        method, inspector.url.rstrip("/") + path, content=raw if sent_body is None else sent_body, headers=headers
    )


@pytest.fixture
def writable(tmp_path: Path) -> Any:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=3)
    key = capability_file(tmp_path)
    env = {CAPABILITY_FILE_ENV: str(key)}
    with running_inspector(tmp_path, env=env) as inspector:
        yield inspector, store, items, load_capability(key), tmp_path
    store.close()


def test_new_capability_is_owner_only_and_never_replaced(tmp_path: Path) -> None:
    key = capability_file(tmp_path)
    assert key.stat().st_mode & 0o777 == 0o600
    first = load_capability(key)
    code, _, err = run_cli("serve", "--new-capability", str(key))
    assert code == 6 and "never replaced" in err
    assert load_capability(key) == first and len(first.key) >= 32
    other = load_capability(capability_file(tmp_path, "other.key"))
    assert other.key_id != first.key_id


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_serve_refuses_a_capability_others_may_read_or_change(tmp_path: Path, mode: int) -> None:
    new_store(tmp_path).close()
    key = capability_file(tmp_path)
    key.chmod(mode)
    env = store_env(tmp_path) | {CAPABILITY_FILE_ENV: str(key)}
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 5
    assert str(key) in done.stderr and f"{mode:04o}" in done.stderr and CAPABILITY_FILE_ENV in done.stderr


def serve_refusal(root: Path, key: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reviewtrail", "serve", "--port", "0"],
        env=store_env(root) | {CAPABILITY_FILE_ENV: str(key)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("case", ["a link to another owner-only file", "a folder anyone may write", "another owner"])
def test_serve_refuses_a_capability_file_as_ssh_refuses_a_key(tmp_path: Path, case: str) -> None:
    new_store(tmp_path).close()
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    key = capability_file(folder)
    if case == "a link to another owner-only file":
        named, problem = tmp_path / "link.key", "the capability file is a symbolic link"
        named.symlink_to(key)
    elif case == "a folder anyone may write":
        named, problem = key, f"the folder {folder} has mode 0777"
        folder.chmod(0o777)
    else:
        need(os.geteuid() == 0, "giving a file to another user needs root")
        named, problem = key, "is owned by uid 65534, not by uid 0 the server runs as"
        os.chown(key, 65534, 65534)
    done = serve_refusal(tmp_path, named)
    assert done.returncode == 5, done.stderr
    assert str(named) in done.stderr and problem in done.stderr and CAPABILITY_FILE_ENV in done.stderr


def test_serve_new_capability_refuses_a_folder_others_may_change(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    code, _, err = run_cli("serve", "--new-capability", str(folder / "capability.key"))
    assert code == 5 and f"the folder {folder} has mode 0777" in err
    assert not (folder / "capability.key").exists()


@pytest.mark.parametrize("content", ["", "not base64 !!\n", "c2hvcnQ\n", "a\nb\n"])
def test_serve_refuses_a_missing_or_malformed_capability(tmp_path: Path, content: str) -> None:
    new_store(tmp_path).close()
    key = tmp_path / "capability.key"
    if content:
        key.write_text(content)
        key.chmod(0o600)
    env = store_env(tmp_path) | {CAPABILITY_FILE_ENV: str(key)}
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "serve", "--port", "0"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 5 and str(key) in done.stderr


def test_a_signed_decision_is_recorded_once_for_the_signed_reviewer(writable: Any) -> None:
    inspector, store, items, capability, _ = writable
    body = body_of(items[0], reasonCodes=[], confidence=0.75)
    before = ledger_head(store)
    answer = post(inspector, capability, body)
    assert answer.status_code == 201, answer.text
    result = answer.json()
    assert result["reviewer"] == "proxy-7f3a9c" and result["disposition"] == "prefer" and result["active"] is True
    assert {p["model"] for p in result["provenance"]} == {"pelican-model-7", "walrus-model-2"}
    record = store.ledger.get(result["decisionId"])
    assert record.actor == "proxy-7f3a9c" and record.seq == before[0] + 1
    # A browser retry: the same submission id, a fresh signature and nonce. Nothing new.
    again = post(inspector, capability, body)
    assert again.status_code == 200 and again.json()["resubmitted"] is True
    assert again.json()["decisionId"] == result["decisionId"]
    assert ledger_head(store) == (record.seq, record.hash)


def test_a_replayed_request_is_refused_also_after_a_restart(writable: Any) -> None:
    inspector, store, items, capability, root = writable
    raw = json.dumps(body_of(items[0])).encode()
    url = inspector.url.rstrip("/") + DECISION_ROUTE
    headers = sign_decision(capability, url, raw)
    assert httpx.post(url, content=raw, headers=headers).status_code == 201
    head = ledger_head(store)
    replay = httpx.post(url, content=raw, headers=headers)
    assert replay.status_code == 401 and replay.json()["error"]["field"] == "nonce"
    # The same nonce on another body (a new submission, signed anew) is refused too.
    other = json.dumps(body_of(items[1])).encode()
    nonce = headers["Signature-Input"].split('nonce="')[1].split('"')[0]
    reused = httpx.post(url, content=other, headers=sign_decision(capability, url, other, nonce=nonce))
    assert reused.status_code == 401 and reused.json()["error"]["field"] == "nonce"
    inspector.process.terminate()
    inspector.process.wait(timeout=30)
    env = {CAPABILITY_FILE_ENV: str(root / "capability.key")}
    with running_inspector(root, env=env) as restarted:
        again = httpx.post(restarted.url.rstrip("/") + DECISION_ROUTE, content=raw, headers=headers)
        assert again.status_code == 401 and again.json()["error"]["field"] == "nonce"
    assert ledger_head(store) == head


MALFORMED_NONCES = {
    "missing": None,
    "empty": "",
    "too short": "a" * 15,
    "too long": "a" * 129,
    "not URL-safe": "abc+def/ghi=jklmnop",
    "a blank inside": "abcdefgh ijklmnop",
    "a quote inside": "abcdefgh'ijklmnop",
}


def test_a_missing_or_malformed_nonce_is_refused_as_malformed_not_as_a_replay(writable: Any) -> None:
    """The nonce's format is checked before the nonce book is asked: a missing nonce is not "a
    replayed request" (the book's NOT NULL), and a malformed one is never recorded."""
    inspector, store, items, capability, _ = writable
    head = ledger_head(store)
    url = inspector.url.rstrip("/") + DECISION_ROUTE
    for name, nonce in MALFORMED_NONCES.items():
        raw = json.dumps(body_of(items[0])).encode()
        answer = httpx.post(
            url, content=raw, headers=other_signer_headers(capability, "POST", url, raw, nonce=nonce, label="review")
        )
        assert answer.status_code == 401, (name, answer.status_code, answer.text)
        error = answer.json()["error"]
        assert error["field"] == "nonce", (name, error)
        expected = "missing; the signature carries" if nonce is None else "must be 16 to 128 URL-safe base64 characters"
        assert error["message"].startswith(f"nonce: {expected}"), (name, error)
        assert "replay" not in answer.text, name
    assert ledger_head(store) == head
    # The same request with a well-formed nonce is recorded: what was refused above is the nonce.
    raw = json.dumps(body_of(items[0])).encode()
    accepted = httpx.post(
        url, content=raw, headers=other_signer_headers(capability, "POST", url, raw, nonce="a" * 16, label="review")
    )
    assert accepted.status_code == 201, accepted.text


@pytest.mark.parametrize("offset", [-61, -3600, 120, 3600])  # the future: past the window even if the request is slow
def test_a_stale_or_future_signature_is_refused(writable: Any, offset: int) -> None:
    inspector, store, items, capability, _ = writable
    head = ledger_head(store)
    answer = post(inspector, capability, body_of(items[0]), created=int(time.time()) + offset)
    assert answer.status_code == 401 and answer.json()["error"]["field"] == "created"
    assert ledger_head(store) == head


@pytest.mark.parametrize(("age", "fresh"), [(0, True), (60, True), (-60, True), (61, False), (-61, False)])
def test_the_freshness_window_is_60_seconds_either_way(age: int, fresh: bool) -> None:
    capability = Capability.from_key(b"k" * 32)
    url = "http://127.0.0.1:1" + DECISION_ROUTE
    created = int(time.time())  # the signature library checks its own (one-day) skew against the clock
    headers = sign_decision(capability, url, b"{}", created=created)
    try:
        verify_decision_signature(capability, "POST", url, headers.items(), now=created + age)
    except SignatureRefusedError as exc:
        assert not fresh and exc.field == "created"
    else:
        assert fresh


@given(
    st.sampled_from(["_ID", "_SUBMISSION"]).flatmap(lambda name: st.from_regex(getattr(decision, name), fullmatch=True))
)
def test_every_id_the_schema_takes_is_one_the_records_take(text: str) -> None:
    """The decision schema never accepts an id the decision record would refuse (a submission id
    with ``_`` once passed the schema and failed at decide)."""
    assert re.fullmatch(IDENT_PATTERN, text)


# A JSON document as written, objects as lists of (key, value) pairs, so a key may be given twice.
_LEAVES = st.none() | st.booleans() | st.integers(-9, 9) | st.text(max_size=3)
_KEYS = st.sampled_from(["a", "b", "itemId", "disposition", "é"])
_WRITTEN = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda items: ("array", items))
        | st.lists(st.tuples(_KEYS, inner), max_size=3).map(lambda pairs: ("object", pairs))
    ),
    max_leaves=12,
)


def _render(value: Any) -> str:
    if isinstance(value, tuple) and value[0] == "array":
        return "[" + ", ".join(_render(item) for item in value[1]) + "]"
    if isinstance(value, tuple):
        return "{" + ", ".join(f"{json.dumps(key)}: {_render(item)}" for key, item in value[1]) + "}"
    return json.dumps(value)


def _repeats(value: Any) -> bool:
    if isinstance(value, tuple) and value[0] == "array":
        return any(_repeats(item) for item in value[1])
    if isinstance(value, tuple):
        keys = [key for key, _ in value[1]]
        return len(keys) != len(set(keys)) or any(_repeats(item) for _, item in value[1])
    return False


@given(st.lists(st.tuples(_KEYS, _WRITTEN), max_size=4))
def test_a_key_given_twice_anywhere_is_refused_by_both_servers_and_only_then(pairs: list[tuple[str, Any]]) -> None:
    from reviewtrail.web._proxy_rules import RefusedBody, decision_body

    document = ("object", pairs)
    raw = _render(document).encode()
    twice = _repeats(document)
    for parse in (decision.parse_submission, decision.parse_signed_decision):
        try:
            parse(raw)
        except decision.RepeatedKeyError as exc:
            assert twice and exc.field == "body" and "appears twice in one object" in str(exc), raw
        except InvalidInputError:
            assert not twice, raw
        else:
            raise AssertionError(f"not a decision, yet parsed: {raw!r}")
    with pytest.raises(RefusedBody) as refused:
        decision_body(raw, "proxy-7f3a9c")
    assert (refused.value.status == 400) == twice, raw


def other_signer_headers(
    capability: Capability, method: str, url: str, raw: bytes, *, nonce: str | None, label: str | None = None
) -> dict[str, str]:
    """Headers of a valid signature by ``capability`` over ``method`` and ``url``: a request
    signed for something other than what it is sent as, or with ``nonce`` as given (None: no
    nonce parameter at all)."""

    class Message:
        def __init__(self) -> None:
            self.method, self.url, self.headers = method, url, {"Content-Type": "application/json"}

    class Keys:
        def resolve_private_key(self, key_id: str) -> bytes:
            return capability.key

    message = Message()
    HTTPMessageSigner(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=Keys()).sign(  # type: ignore[arg-type]
        message,
        key_id=capability.key_id,
        nonce=nonce,
        created=datetime.datetime.now(datetime.UTC),
        covered_component_ids=("@method", "@path", "content-type", "content-digest"),
        label=label,
        body=raw,
    )
    return message.headers


def test_tampered_misdirected_or_foreign_requests_are_refused(writable: Any, tmp_path: Path) -> None:
    inspector, store, items, capability, _ = writable
    head = ledger_head(store)
    good = body_of(items[0])
    base = inspector.url.rstrip("/")
    raw = json.dumps(good).encode()
    tampered = json.dumps({**good, "preferred": "B"}).encode()
    cases = {
        "tampered body": post(inspector, capability, good, sent_body=tampered),
        "wrong method": post(inspector, capability, good, method="PUT"),
        "wrong path": post(inspector, capability, good, path="/api/review/decisions/extra"),
        "signed for another path": httpx.post(
            base + DECISION_ROUTE,
            content=raw,
            headers=other_signer_headers(
                capability, "POST", base + "/api/review/other", raw, nonce=secrets.token_urlsafe(18)
            ),
        ),
        "signed for another method": httpx.post(
            base + DECISION_ROUTE,
            content=raw,
            headers=other_signer_headers(
                capability, "PUT", base + DECISION_ROUTE, raw, nonce=secrets.token_urlsafe(18)
            ),
        ),
        "another key": post(inspector, load_capability(capability_file(tmp_path, "foreign.key")), good),
        "unsigned": httpx.post(base + DECISION_ROUTE, json=good),
        "covering less": httpx.post(
            base + DECISION_ROUTE,
            content=raw,
            headers={
                **sign_decision(capability, base + DECISION_ROUTE, raw),
                "Signature-Input": 'review=("@method" "@path");created=1;keyid="x";nonce="aaaaaaaaaaaaaaaaaaaa"',
            },
        ),
    }
    expected = {"wrong method": 405, "wrong path": 405}
    for name, answer in cases.items():
        assert answer.status_code == expected.get(name, 401), (name, answer.status_code, answer.text)
    assert cases["tampered body"].json()["error"]["field"] == "content-digest"
    assert cases["another key"].json()["error"]["field"] == "keyid"
    assert cases["signed for another path"].json()["error"]["field"] == "signature"
    assert ledger_head(store) == head


def test_a_signature_other_than_the_documented_one_is_refused(writable: Any) -> None:
    """One label, the four components, the four parameters: each other shape is 401 naming what
    differs, and nothing is appended; the same body signed in the documented shape is recorded."""
    inspector, store, items, capability, _ = writable
    head = ledger_head(store)
    url = inspector.url.rstrip("/") + DECISION_ROUTE
    raw = json.dumps(body_of(items[0])).encode()
    for shape, (changes, field, message) in SHAPES.items():
        answer = httpx.post(url, content=raw, headers=hand_signed(capability, raw, **changes))  # type: ignore[arg-type]
        assert answer.status_code == 401, (shape, answer.status_code, answer.text)
        error = answer.json()["error"]
        assert error["field"] == field and error["message"] == f"{field}: {message}", (shape, error)
    assert ledger_head(store) == head
    assert httpx.post(url, content=raw, headers=hand_signed(capability, raw)).status_code == 201


def test_bodies_outside_the_fixed_schema_are_refused(writable: Any, tmp_path: Path) -> None:
    inspector, store, items, capability, _ = writable
    other_root = tmp_path / "other"
    other_root.mkdir()
    other = new_store(other_root)
    head = ledger_head(store)
    cases: dict[str, tuple[dict[str, Any] | bytes, int, str]] = {
        "oversized": (body_of(items[0], note="x" * MAX_BODY_BYTES), 413, "body"),
        "extra field": (body_of(items[0], type="prompt"), 400, "type"),
        "a record of another kind": ({"type": "campaign.settings", "payload": {"trainingEnabled": True}}, 400, ""),
        "no reviewer": ({k: v for k, v in body_of(items[0]).items() if k != "reviewer"}, 400, "reviewer"),
        "another campaign": (body_of(items[0], campaignId="elsewhere"), 400, "campaignId"),
        "another version": (body_of(items[0], campaignVersion=2), 400, "campaignId"),
        "an unknown item": (body_of(items[0], itemId=str(uuid.uuid4())), 404, "item"),
        "a run id as preference": (body_of(items[0], preferred="run-1"), 400, "preferred"),
        "not JSON": (b"{not json", 400, ""),
        "bad disposition": (body_of(items[0], disposition="export"), 400, "disposition"),
        "a key twice, the last one good": (
            repeated(body_of(items[0], disposition="export"), "disposition"),
            400,
            "body",
        ),
        "a key twice in a nested object": (
            json.dumps(body_of(items[0], extra={"a": 1}))[:-1].encode() + b', "extra": {"a": 1, "a": 2}}',
            400,
            "body",
        ),
    }
    for name, (body, status, field) in cases.items():
        answer = post(inspector, capability, body)
        assert answer.status_code == status, (name, answer.status_code, answer.text)
        if field:
            assert answer.json()["error"]["field"] == field, (name, answer.text)
        if "twice" in name:
            assert "appears twice in one object" in answer.json()["error"]["message"], (name, answer.text)
    assert ledger_head(store) == head
    other.close()


def repeated(body: dict[str, Any], key: str) -> bytes:
    """``body`` as JSON with ``key`` given again at the end, as a good decision has it: a reader
    that keeps the last one reads a good decision."""
    good = {"disposition": "prefer", "preferred": "A", "reviewer": "proxy-7f3a9c"}[key]
    return json.dumps(body)[:-1].encode() + f", {json.dumps(key)}: {json.dumps(good)}}}".encode()


def test_without_a_capability_nothing_is_writable(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=1)
    capability = load_capability(capability_file(tmp_path))
    head = ledger_head(store)
    with running_inspector(tmp_path) as inspector:
        answer = post(inspector, capability, body_of(items[0]))
        openapi = httpx.get(inspector.url + "openapi.json").json()
    assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD"
    assert DECISION_ROUTE not in openapi["paths"]
    assert ledger_head(store) == head
    store.close()


def test_openapi_describes_the_one_write_route(writable: Any) -> None:
    inspector, _, _, _, _ = writable
    paths = httpx.get(inspector.url + "openapi.json").json()["paths"]
    writes = {(path, method) for path, ops in paths.items() for method in ops if method not in ("get", "head")}
    assert writes == {(DECISION_ROUTE, "post")}
    schema = paths[DECISION_ROUTE]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schema["additionalProperties"] is False and "reviewer" in schema["required"]


def payload_without_ids(store: Store, decision_id: str, item: Any) -> dict[str, Any]:
    record = store.ledger.get(decision_id)
    payload = dict(record.payload_value)
    assert payload.pop("itemId") == item.item_id
    # The preferred run is the one shown at A: the same choice, named by each item's own run.
    assert payload.pop("preferred") == item.display_order[0]
    payload.pop("submissionId")
    return {"type": record.type, "privacy": record.privacy, "payload": payload}


def test_a_decision_from_the_route_is_the_record_review_decide_makes(writable: Any) -> None:
    inspector, store, items, capability, root = writable
    fields = {"strength": "strong", "confidence": 0.5, "note": "clearer", "reasonCodes": [], "responseTags": []}
    answer = post(inspector, capability, body_of(items[0], **fields))
    assert answer.status_code == 201, answer.text
    done = subprocess.run(
        [
            *(sys.executable, "-m", "reviewtrail", "review", "decide", items[1].item_id, "--prefer", "A"),
            *("--strength", "strong", "--confidence", "0.5", "--note", "clearer", "--reviewer", "rev-cli", "--json"),
        ],
        env=store_env(root),
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    from_route = payload_without_ids(store, answer.json()["decisionId"], items[0])
    from_cli = payload_without_ids(store, json.loads(done.stdout)["decisionId"], items[1])
    assert from_route == from_cli
    assert from_route["payload"]["strength"] == "strong" and from_route["payload"]["note"] == "clearer"


def test_workers_share_the_nonce_book_and_stop_together(tmp_path: Path) -> None:
    """``serve --workers 3``: whichever process answers, a signed request is recorded once and
    its replays are refused; SIGTERM stops every worker."""
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=2)
    key = capability_file(tmp_path)
    capability = load_capability(key)
    before = ledger_head(store)
    with running_inspector(tmp_path, "--workers", "3", env={CAPABILITY_FILE_ENV: str(key)}) as inspector:
        raw = json.dumps(body_of(items[0])).encode()
        url = inspector.url.rstrip("/") + DECISION_ROUTE
        headers = sign_decision(capability, url, raw)
        codes = []
        for _ in range(9):
            with httpx.Client() as fresh:  # a new connection each time: any worker may answer
                codes.append(fresh.post(url, content=raw, headers=headers).status_code)
        pages = {httpx.get(inspector.url + "api/review/camp/1/progress").json()["decided"] for _ in range(6)}
        workers = subprocess.run(
            ["pgrep", "-P", str(inspector.process.pid)], capture_output=True, text=True
        ).stdout.split()
        assert len(workers) == 3
        inspector.process.terminate()
        inspector.process.wait(timeout=30)
    assert sorted(codes) == [201] + [401] * 8
    assert pages == {1}
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert ledger_head(store)[0] == before[0] + 1
    store.close()
