"""The review capability and the nonce book in the test process (web/_capability.py,
web/_nonces.py): the key file's checks, the signature the proxy makes and the inspector checks
(method, path, content type, key, nonce format, freshness, body digest), and the durable
one-time nonces, each refusal named by its field. tests/test_web_writes.py shows the same
refusals through a running inspector."""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import re
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from http_message_signatures import HTTPMessageSigner, algorithms
from hypothesis import given
from hypothesis import strategies as st

from conftest import need
from reviewtrail.errors import BackendUnavailableError, ConfigError, ConflictError, InvalidInputError
from reviewtrail.web._capability import (
    CAPABILITY_FILE_ENV,
    COVERED_COMPONENTS,
    DECISION_ROUTE,
    Capability,
    SignatureRefusedError,
    SignedRequest,
    check_content_digest,
    load_capability,
    new_capability,
    sign_decision,
    verify_decision_signature,
)
from reviewtrail.web._nonces import NONCE_FILE_ENV, NonceBook
from reviewtrail.web._private_file import check_folders
from support.web_signature import SHAPES, hand_signed

KEY = Capability.from_key(b"k" * 32)
URL = "http://127.0.0.1:8765" + DECISION_ROUTE
BODY = b'{"itemId": "item-1"}'
NOW = int(time.time())  # the signature library checks its own one-day skew against the clock


def signed(*, body: bytes = BODY, capability: Capability = KEY, **params: object) -> dict[str, str]:
    return sign_decision(capability, URL, body, created=NOW, **params)  # type: ignore[arg-type]


def verify(headers: dict[str, str], *, method: str = "POST", url: str = URL, now: float = NOW) -> SignedRequest:
    return verify_decision_signature(KEY, method, url, headers.items(), now=now)


def refused(headers: dict[str, str], **kwargs: object) -> SignatureRefusedError:
    with pytest.raises(SignatureRefusedError) as caught:
        verify(headers, **kwargs)  # type: ignore[arg-type]
    return caught.value


# --- the key ------------------------------------------------------------------------------------


def test_the_key_id_is_derived_from_the_key_and_the_key_never_shows() -> None:
    # A known answer: the proxy and the inspector derive the same id from the same key, across versions.
    assert Capability.from_key(b"k" * 32).key_id == "review-de439886f38e8c97"
    assert Capability.from_key(b"k" * 31 + b"j").key_id != KEY.key_id
    assert "kkkk" not in repr(KEY) and KEY.key_id in repr(KEY)
    with pytest.raises(InvalidInputError, match="the key has 31 bytes; at least 32 are needed") as short:
        Capability.from_key(b"k" * 31)
    assert short.value.field == "key"


def test_a_new_capability_file_is_one_owner_only_line_and_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "capability"
    made = new_capability(path)
    text = path.read_text(encoding="ascii")
    assert path.stat().st_mode & 0o777 == 0o600
    assert text.endswith("\n") and text.count("\n") == 1 and "=" not in text
    assert base64.urlsafe_b64decode(text.strip() + "=") == made.key and len(made.key) == 32
    assert load_capability(path) == made
    with pytest.raises(ConflictError, match="is never replaced") as exists:
        new_capability(path)
    assert exists.value.field == "capability" and path.read_text(encoding="ascii") == text
    assert new_capability(tmp_path / "another").key != made.key


def key_file(tmp_path: Path, content: str | bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "capability"
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    path.chmod(mode)
    return path


GOOD = base64.urlsafe_b64encode(b"q" * 32).decode()
NOBODY = 65534


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "must hold one line of URL-safe base64"),
        (GOOD + "\n" + GOOD, "must hold one line of URL-safe base64"),
        (GOOD.replace("c", "+"), "must hold one line of URL-safe base64"),
        (GOOD + "===", "must hold one line of URL-safe base64"),
        (GOOD[:-4] + "A", "must hold one line of URL-safe base64"),  # a length base64 cannot have
        (base64.urlsafe_b64encode(b"q" * 31).decode(), "the key has 31 bytes; at least 32 are needed"),
        (b"\xff" * 44, "cannot read the capability file"),
        ("é" * 44, "cannot read the capability file"),
    ],
    ids=["empty", "two-lines", "not-url-safe", "too-much-padding", "truncated", "short", "not-utf-8", "not-ascii"],
)
def test_a_malformed_capability_file_is_refused_naming_it(tmp_path: Path, content: str | bytes, problem: str) -> None:
    path = key_file(tmp_path, content)
    with pytest.raises(ConfigError, match=problem) as caught:
        load_capability(path)
    assert caught.value.field == CAPABILITY_FILE_ENV and str(path) in str(caught.value)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o610, 0o601])
def test_a_capability_file_others_may_touch_is_refused(tmp_path: Path, mode: int) -> None:
    path = key_file(tmp_path, GOOD, mode)
    with pytest.raises(ConfigError, match=f"mode {mode:04o} lets others") as caught:
        load_capability(path)
    assert f"chmod 600 {path}" in str(caught.value) and caught.value.field == CAPABILITY_FILE_ENV


def test_a_missing_or_irregular_capability_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the capability file") as missing:
        load_capability(tmp_path / "nowhere")
    assert missing.value.field == CAPABILITY_FILE_ENV
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    with pytest.raises(ConfigError, match="is not a regular file") as irregular:
        load_capability(folder)
    assert irregular.value.field == CAPABILITY_FILE_ENV


def test_a_symbolic_link_to_a_good_capability_file_is_refused(tmp_path: Path) -> None:
    target = key_file(tmp_path, GOOD)
    assert load_capability(target) == Capability.from_key(b"q" * 32)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="the capability file is a symbolic link; name the file itself") as caught:
        load_capability(link)
    assert caught.value.field == CAPABILITY_FILE_ENV and str(link) in str(caught.value)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="is a symbolic link"):
        load_capability(dangling)


def test_a_capability_file_owned_by_another_user_than_the_servers_is_refused(tmp_path: Path) -> None:
    path = key_file(tmp_path, GOOD)
    mine = os.geteuid()
    with pytest.raises(ConfigError) as caught:
        load_capability(path, owner=mine + 1)
    assert caught.value.field == CAPABILITY_FILE_ENV
    assert str(caught.value) == (
        f"{CAPABILITY_FILE_ENV}: {path}: the capability file is owned by uid {mine}, not by uid {mine + 1} the server "
        f"runs as (chown {mine + 1} {path})"
    )
    assert load_capability(path, owner=mine) == load_capability(path)


def test_a_capability_file_chowned_to_another_user_is_refused(tmp_path: Path) -> None:
    need(os.geteuid() == 0, "giving a file to another user needs root")
    path = key_file(tmp_path, GOOD)
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match=f"owned by uid {NOBODY}, not by uid 0 the server runs as"):
        load_capability(path)


@pytest.mark.parametrize("mode", [0o777, 0o757, 0o770, 0o720, 0o702, 0o2777])
def test_a_capability_file_in_a_folder_others_may_change_is_refused(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    path = key_file(folder, GOOD)
    folder.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        load_capability(path)
    assert caught.value.field == CAPABILITY_FILE_ENV and str(path) in str(caught.value)
    assert f"the folder {folder} has mode {mode:04o}: other users may replace the capability file" in str(caught.value)


def test_every_folder_above_the_capability_file_is_checked(tmp_path: Path) -> None:
    inner = tmp_path / "open" / "inner"
    inner.mkdir(parents=True)
    path = key_file(inner, GOOD)
    (tmp_path / "open").chmod(0o777)
    with pytest.raises(ConfigError, match=f"the folder {tmp_path / 'open'} has mode 0777"):
        load_capability(path)
    # A link to the folder is followed: the folders checked are the ones the file is in.
    (tmp_path / "open").chmod(0o755)
    (tmp_path / "via").symlink_to(inner)
    assert load_capability(tmp_path / "via" / "capability") == Capability.from_key(b"q" * 32)
    inner.chmod(0o777)
    with pytest.raises(ConfigError, match=f"the folder {inner} has mode 0777"):
        load_capability(tmp_path / "via" / "capability")


def test_a_sticky_folder_anyone_may_write_is_safe_above_the_file_as_tmp_is(tmp_path: Path) -> None:
    """In a sticky folder no one else may rename or remove what they do not own: a folder of the
    server's user inside it stays put."""
    folder = tmp_path / "sticky" / "mine"
    folder.mkdir(parents=True)
    path = key_file(folder, GOOD)
    (tmp_path / "sticky").chmod(0o1777)
    assert load_capability(path) == Capability.from_key(b"q" * 32)


@pytest.mark.parametrize("mode", [0o1777, 0o1770, 0o1703])
def test_a_capability_file_in_a_sticky_folder_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    """The file's own folder allows no other writer, sticky or not: others could create names
    beside the file there."""
    folder = tmp_path / "sticky"
    folder.mkdir()
    path = key_file(folder, GOOD)
    folder.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        load_capability(path)
    assert caught.value.field == CAPABILITY_FILE_ENV
    assert f"the folder {folder} has mode {mode:04o}: other users may replace the capability file" in str(caught.value)


def test_a_capability_file_in_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    need(os.geteuid() == 0, "giving a folder to another user needs root")
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o755)
    path = key_file(folder, GOOD)
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(ConfigError) as caught:
        load_capability(path)
    assert caught.value.field == CAPABILITY_FILE_ENV and str(caught.value) == (
        f"{CAPABILITY_FILE_ENV}: {path}: the folder {folder} is owned by uid {NOBODY}; the folders of the capability "
        f"file must be owned by root or by uid 0 the server runs as, or their owner may replace it"
    )
    # The same file and folder are safe for a server that runs as their owner.
    os.chown(path, NOBODY, NOBODY)
    assert load_capability(path, owner=NOBODY) == Capability.from_key(b"q" * 32)


def test_folders_owned_by_root_are_safe_for_any_user() -> None:
    check_folders(Path("/etc/passwd"), field="f", what="the file", owner=4242)


def test_a_file_that_fails_as_it_is_read_is_refused_naming_it() -> None:
    """/proc/self/mem is a regular file, the process's own and owner-only, whose first page
    cannot be read."""
    mem = Path("/proc/self/mem")
    need(mem.exists(), "/proc/self/mem (Linux) is not here")
    with pytest.raises(ConfigError) as caught:
        load_capability(mem)
    assert caught.value.field == CAPABILITY_FILE_ENV
    assert str(caught.value) == (f"{CAPABILITY_FILE_ENV}: {mem}: cannot read the capability file (Input/output error)")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "capability"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ConfigError, match="is not a regular file"):
        load_capability(fifo)


def test_a_new_capability_file_is_refused_in_a_folder_others_may_change(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(ConfigError) as caught:
        new_capability(folder / "capability")
    assert caught.value.field == "capability" and caught.value.exit_code == 5
    assert str(caught.value) == (
        f"capability: {folder / 'capability'}: the folder {folder} has mode 0777: other users may replace the "
        f"capability file (chmod go-w {folder}, or keep the file in a folder only its owner can write)"
    )
    assert list(folder.iterdir()) == []
    folder.chmod(0o700)
    made = new_capability(folder / "capability")
    assert load_capability(folder / "capability") == made
    with pytest.raises(ConfigError) as missing:
        new_capability(tmp_path / "nowhere" / "capability")
    assert str(missing.value) == (
        f"capability: {tmp_path / 'nowhere' / 'capability'}: cannot check the folder {tmp_path / 'nowhere'} "
        "(No such file or directory)"
    )


@pytest.mark.parametrize("text", [GOOD, GOOD.rstrip("="), f"  {GOOD}\n", GOOD.rstrip("=") + "\n"])
def test_a_well_formed_capability_file_loads_with_or_without_padding(tmp_path: Path, text: str) -> None:
    for mode in (0o600, 0o400):
        assert load_capability(key_file(tmp_path, text, mode)) == Capability.from_key(b"q" * 32)


# --- the signature ------------------------------------------------------------------------------


def test_a_signature_verifies_and_vouches_for_its_key_nonce_time_and_digest() -> None:
    headers = signed(nonce="n" * 16)
    assert set(headers) == {"Content-Type", "Content-Digest", "Signature-Input", "Signature"}
    assert headers["Content-Type"] == "application/json"
    digest = base64.b64encode(hashlib.sha256(BODY).digest()).decode()
    assert headers["Content-Digest"] == f"sha-256=:{digest}:"
    signature_input = headers["Signature-Input"]
    assert signature_input.startswith('review=("@method" "@path" "content-type" "content-digest");')
    assert f"created={NOW}" in signature_input and f'keyid="{KEY.key_id}"' in signature_input
    assert verify(headers) == SignedRequest(KEY.key_id, "n" * 16, NOW, headers["Content-Digest"])
    # The verification reads headers in any case, and a query does not change the path.
    lowered = {name.lower(): value for name, value in headers.items()}
    assert verify(lowered, url=URL + "?x=1").nonce == "n" * 16
    check_content_digest(verify(headers), BODY)


def test_the_window_is_measured_against_the_clock_unless_given() -> None:
    assert verify_decision_signature(KEY, "POST", URL, sign_decision(KEY, URL, BODY).items()).key_id == KEY.key_id
    stale = sign_decision(KEY, URL, BODY, created=int(time.time()) - 3600)
    with pytest.raises(SignatureRefusedError, match="s ago") as caught:
        verify_decision_signature(KEY, "POST", URL, stale.items())
    assert caught.value.field == "created"


def test_a_fresh_nonce_and_the_current_time_by_default() -> None:
    first = sign_decision(KEY, URL, BODY)
    second = sign_decision(KEY, URL, BODY)
    one, two = verify(first, now=time.time()), verify(second, now=time.time())
    assert one.nonce != two.nonce and len(one.nonce) >= 43
    assert abs(one.created - time.time()) < FRESHNESS


FRESHNESS = 60


@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("PUT", URL, "@path"),
        ("post", URL, "@path"),
        ("POST", URL + "/extra", "@path"),
        ("POST", "http://127.0.0.1:8765/api/review", "@path"),
    ],
)
def test_only_post_to_the_decision_route_is_verified(method: str, url: str, field: str) -> None:
    error = refused(signed(), method=method, url=url)
    assert error.field == field and str(error) == "@path: only POST /api/review/decisions is signed"


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/json ;x=1"]
)
def test_the_content_type_may_carry_parameters_and_any_case(content_type: str) -> None:
    # The content type is covered by the signature: a variant is signed as sent.
    headers = signed()
    with pytest.raises(SignatureRefusedError) as caught:
        verify(headers | {"Content-Type": content_type})
    assert caught.value.field == "signature"  # not refused as another content type


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/jsonx", "application/x-www-form-urlencoded"])
def test_another_content_type_is_refused_before_the_signature_is_read(content_type: str | None) -> None:
    headers = {k: v for k, v in signed().items() if k != "Content-Type"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    error = refused(headers)
    assert error.field == "content-type" and str(error) == "content-type: must be application/json"


def test_a_missing_altered_or_foreign_signature_is_refused() -> None:
    headers = signed()
    unsigned = refused({"Content-Type": "application/json"})
    assert str(unsigned) == "signature: missing: the request is not signed"
    altered = refused(headers | {"Signature": headers["Signature"][:-3] + "AA:"})
    assert altered.field == "signature" and str(altered).startswith(
        "signature: the request's signature does not verify"
    )
    foreign = signed(capability=Capability.from_key(b"f" * 32))
    error = refused(foreign)
    assert error.field == "keyid" and str(error) == "keyid: signed by a key this inspector does not hold"
    # A repeated header is joined as HTTP joins it: two signatures, refused.
    second = signed(nonce="m" * 16)
    twice = [(k, v) for k, v in headers.items()] + [
        ("Signature-Input", second["Signature-Input"].replace("review=", "again=")),
        ("Signature", second["Signature"].replace("review=", "again=")),
    ]
    with pytest.raises(SignatureRefusedError, match="exactly one signature is accepted") as caught:
        verify_decision_signature(KEY, "POST", URL, twice, now=NOW)
    assert caught.value.field == "signature"


def test_a_signature_covering_less_than_the_four_components_is_refused() -> None:
    class Message:
        def __init__(self) -> None:
            self.method, self.url, self.headers = "POST", URL, {"Content-Type": "application/json"}

    class Keys:
        def resolve_private_key(self, key_id: str) -> bytes:
            return KEY.key

    # The library adds content-digest itself when it is given the body.
    for covered, body in (
        (("@method", "@path"), None),
        (("@method", "@path", "content-type"), None),
        (("@path", "content-type"), BODY),
        (("@method", "content-type"), BODY),
    ):
        message = Message()
        HTTPMessageSigner(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=Keys()).sign(  # type: ignore[arg-type]
            message,
            key_id=KEY.key_id,
            nonce="n" * 16,
            created=datetime.datetime.fromtimestamp(NOW, datetime.UTC),
            covered_component_ids=covered,
            label="review",
            body=body,
        )
        error = refused(message.headers | {"Content-Digest": signed()["Content-Digest"]})
        assert error.field == "signature" and "not covered" in str(error).lower(), (covered, str(error))


def test_a_signature_made_by_hand_in_the_documented_shape_verifies() -> None:
    """The hand signer below signs as the proxy does: what it changes is all that is refused."""
    headers = hand_signed(KEY, BODY, created=NOW)
    assert verify(headers).created == NOW
    check_content_digest(verify(headers), BODY)
    assert verify(hand_signed(KEY, BODY, covered=tuple(reversed(COVERED_COMPONENTS)), created=NOW)).created == NOW


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_signature_of_any_other_shape_is_refused_naming_what_differs(shape: str) -> None:
    changes, field, message = SHAPES[shape]
    error = refused(hand_signed(KEY, BODY, created=NOW, **changes))  # type: ignore[arg-type]
    assert error.field == field and str(error) == f"{field}: {message}", (shape, str(error))


@pytest.mark.parametrize(
    ("signature_input", "message"),
    [
        (
            'review=("@method" "@path" "content-type" "content-digest" "@path")',
            "signature: covers a component twice; it covers @method, @path, content-type, content-digest and nothing "
            "else",
        ),
        (
            'review=("@method" "@path";req "content-type" "content-digest")',
            "signature-input: the covered components must be a list of plain component names",
        ),
        ('review="@method"', "signature-input: the covered components must be a list of plain component names"),
        ("review=(", "signature-input: malformed: "),
        ('review=("@method");alg="x", review=("@path")', "signature-input: malformed: 'review' given twice"),
        (
            'review=("@method" "@path" "content-type" "content-digest");nonce="a";nonce="b"',
            "signature-input: malformed: 'nonce' given twice",
        ),
        ("", "signature: exactly one signature is accepted, labelled 'review'; this request has 0"),
        (
            'review=("@method" "@path" "content-type" "content-digest" "date" "x-a")',
            "signature: covers 'date', 'x-a'; it covers @method, @path, content-type, content-digest and nothing else",
        ),
        ("é", "signature-input: malformed: "),
    ],
    ids=[
        "component-twice",
        "component-parameter",
        "not-a-list",
        "malformed",
        "label-twice",
        "parameter-twice",
        "empty",
        "two-components-more",
        "not-ascii",
    ],
)
def test_a_malformed_signature_input_is_refused_before_it_is_verified(signature_input: str, message: str) -> None:
    error = refused(signed() | {"Signature-Input": signature_input})
    assert str(error) == message if not message.endswith(": ") else str(error).startswith(message), str(error)
    assert error.field == message.split(":", maxsplit=1)[0]


@pytest.mark.parametrize(
    "nonce",
    ["a" * 15, "a" * 129, "abc+def/ghi=jklmnop", "abcdefgh ijklmnop", "abcdefghijklmnop.", "abcdefghijklmnop~"],
)
def test_a_malformed_nonce_is_refused_naming_the_nonce(nonce: str) -> None:
    error = refused(signed(nonce=nonce))
    assert error.field == "nonce" and str(error) == "nonce: must be 16 to 128 URL-safe base64 characters"


@given(st.from_regex(r"[A-Za-z0-9_-]{16,128}", fullmatch=True))
def test_every_url_safe_nonce_of_16_to_128_characters_is_accepted(nonce: str) -> None:
    assert verify(signed(nonce=nonce)).nonce == nonce


@pytest.mark.parametrize(
    ("age", "message"),
    [(61, "created 61 s ago"), (-61, "created 61 s in the future"), (3600, "created 3600 s ago")],
)
def test_a_signature_outside_the_window_says_how_far(age: int, message: str) -> None:
    error = refused(signed(), now=NOW + age)
    assert error.field == "created" and message in str(error) and "the window is 60 s either way" in str(error)


@pytest.mark.parametrize("age", [0, 60, -60, 59.5, -59.5])
def test_a_signature_inside_the_window_is_fresh(age: float) -> None:
    assert verify(signed(), now=NOW + age).created == NOW


# --- the body's digest --------------------------------------------------------------------------


def digest_of(value: str) -> SignedRequest:
    return SignedRequest(KEY.key_id, "n" * 16, NOW, value)


SHA256 = base64.b64encode(hashlib.sha256(BODY).digest()).decode()


def test_the_body_must_be_the_one_signed() -> None:
    check_content_digest(digest_of(f"sha-256=:{SHA256}:"), BODY)
    check_content_digest(digest_of(f"sha-512=:{SHA256}:, sha-256=:{SHA256}:"), BODY)
    with pytest.raises(SignatureRefusedError) as other:
        check_content_digest(digest_of(f"sha-256=:{SHA256}:"), BODY + b" ")
    assert other.value.field == "content-digest"
    assert str(other.value) == "content-digest: the body is not the one signed"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (f"sha-256=:{SHA256}:, sha-256=:{SHA256}:", "malformed: 'sha-256' given twice"),
        ("sha-256=:not base64!:", "malformed"),
        ("sha-256=:é:", "malformed"),
        (f"sha-512=:{SHA256}:", "must carry a sha-256 digest$"),
        (f'sha-256="{SHA256}"', "must carry a sha-256 digest$"),
        ("sha-256", "must carry a sha-256 digest$"),
    ],
)
def test_a_digest_header_without_one_sha256_digest_is_refused(value: str, problem: str) -> None:
    with pytest.raises(SignatureRefusedError) as caught:
        check_content_digest(digest_of(value), BODY)
    assert caught.value.field == "content-digest" and re.match("content-digest: " + problem, str(caught.value))


# --- the nonce book -----------------------------------------------------------------------------


def request(nonce: str, created: int = NOW, key_id: str = KEY.key_id) -> SignedRequest:
    return SignedRequest(key_id, nonce, created, "")


def test_a_nonce_is_claimed_once_also_after_a_restart(tmp_path: Path) -> None:
    now = int(time.time())  # this test's own clock: NOW was read when the suite was collected, maybe long ago
    path = tmp_path / "nonces.sqlite"
    book = NonceBook(path)
    book.claim(request("a" * 16, created=now), now=now)
    with pytest.raises(SignatureRefusedError) as replay:
        book.claim(request("a" * 16, created=now), now=now + 1)
    assert (
        replay.value.field == "nonce" and str(replay.value) == "nonce: this nonce was used already: a replayed request"
    )
    book.claim(request("a" * 16, created=now, key_id="review-another"), now=now)  # another key's nonces are its own
    book.claim(request("b" * 16, created=now), now=now)
    assert len(book) == 3
    book.close()
    reopened = NonceBook(path)
    with pytest.raises(SignatureRefusedError, match="replayed"):
        reopened.claim(request("a" * 16, created=now), now=now + 2)
    assert len(reopened) == 3
    reopened.claim(request("c" * 16, created=now))  # the clock is the system's unless given
    assert len(reopened) == 4
    reopened.close()


def refusal(book: NonceBook, signed: SignedRequest) -> str | None:
    try:
        book.claim(signed)
    except SignatureRefusedError as exc:
        return exc.field
    return None


def test_claims_may_come_from_any_thread(tmp_path: Path) -> None:
    """The inspector claims from its thread pool, on a book opened elsewhere."""
    now = int(time.time())  # this test's own clock: NOW was read when the suite was collected, maybe long ago
    book = NonceBook(tmp_path / "nonces.sqlite")
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda n: book.claim(request(n * 16, created=now), now=now), "abcdefgh"))
        replays = list(pool.map(lambda n: refusal(book, request(n * 16, created=now)), "ab"))
    assert len(book) == 8 and replays == ["nonce", "nonce"]
    book.close()


def test_the_book_is_durable_on_every_claim(tmp_path: Path) -> None:
    book = NonceBook(tmp_path / "nonces.sqlite")
    assert book._db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert book._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    book.claim(request("a" * 16), now=NOW)
    # Committed before the claim returns: another connection sees it.
    with sqlite3.connect(tmp_path / "nonces.sqlite") as other:
        assert other.execute("SELECT key_id, nonce, created FROM review_nonces").fetchall() == [
            (KEY.key_id, "a" * 16, NOW)
        ]
    book.close()


def test_nonces_older_than_twice_the_window_are_dropped_as_new_ones_are_claimed(tmp_path: Path) -> None:
    book = NonceBook(tmp_path / "nonces.sqlite")
    book.claim(request("a" * 16, created=NOW), now=NOW)
    book.claim(request("b" * 16, created=NOW + 1), now=NOW + 121)  # NOW is 121 s old: kept
    assert len(book) == 2
    with pytest.raises(SignatureRefusedError):
        book.claim(request("a" * 16, created=NOW + 1), now=NOW + 121)
    assert len(book) == 2  # a refused claim changes nothing
    book.claim(request("c" * 16, created=NOW + 2), now=NOW + 122)  # NOW is 122 s old: dropped
    assert len(book) == 2
    book.claim(request("a" * 16, created=NOW + 2), now=NOW + 122.9)  # its nonce is free again
    assert len(book) == 3
    book.close()


def test_a_book_that_cannot_be_opened_or_written_is_a_backend_error(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailableError, match="cannot open the nonce book") as unopened:
        NonceBook(tmp_path)  # a folder
    assert unopened.value.field == NONCE_FILE_ENV and str(tmp_path) in str(unopened.value)
    path = tmp_path / "nonces.sqlite"
    book = NonceBook(path)
    with sqlite3.connect(path) as other:
        other.execute("DROP TABLE review_nonces")
    with pytest.raises(BackendUnavailableError, match="cannot record the nonce") as unwritten:
        book.claim(request("a" * 16), now=NOW)
    assert unwritten.value.field == NONCE_FILE_ENV and str(path) in str(unwritten.value)
    assert not book._db.in_transaction  # rolled back: the book takes the next claim
    with sqlite3.connect(path) as other:
        other.executescript(
            "CREATE TABLE review_nonces (key_id TEXT NOT NULL, nonce TEXT NOT NULL, created INTEGER NOT NULL,"
            " claimed REAL NOT NULL, PRIMARY KEY (key_id, nonce))"
        )
    book.claim(request("a" * 16), now=NOW)
    assert len(book) == 1
    book.close()
