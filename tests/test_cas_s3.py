"""The S3 CAS on a real SeaweedFS, beyond the contract every backend passes.

Create-only publishing (an existing corrupt object is never reused nor overwritten, also when it
appears while a multipart upload is being sent), multipart uploads (progress per part, an
interrupted or changed upload leaves no object and no unfinished upload), retries of a bucket
that answers 503 for a while, the settings' failures as the command line reports them (exit 5
naming the setting, no traceback, no secret; a malformed ``REVIEWTRAIL_CAS_URL`` is exit 2),
and a whole store whose objects live in the bucket, from ``reviewtrail init`` to ``verify``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from conftest import run_cli
from reviewtrail.cas import FilesystemCas, S3Cas, open_cas, verified_chunks, write_verified
from reviewtrail.cas._s3_download import GET_PART
from reviewtrail.config import S3Settings
from reviewtrail.errors import (
    BackendUnavailableError,
    CorruptObjectError,
    InvalidInputError,
    ObjectNotFoundError,
    ReadOnlyStoreError,
    StoreNotInitializedError,
)
from support.s3_faults import FaultyProxy
from support.seaweed import SeaweedServer, free_port
from test_cas_contract import s3_settings

MIB = 1 << 20
SMALL = {"multipart_threshold": 6 * MIB, "part_size": 5 * MIB}  # multipart from 6 MiB, in 5 MiB parts

MakeCas = Callable[..., S3Cas]


@pytest.fixture
def make_cas(seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path) -> MakeCas:
    """A new S3 store in the test's bucket (a fresh prefix each), spooling into its own folder."""

    def make(**options: object) -> S3Cas:
        spool = tmp_path / f"spool-{uuid.uuid4().hex[:8]}"
        spool.mkdir()
        options.setdefault("s3", s3_settings(seaweed))
        options.setdefault("create", True)
        prefix = str(options.pop("prefix", f"t-{uuid.uuid4().hex[:8]}"))
        return S3Cas(s3_bucket, prefix, spool_dir=spool, **options)  # type: ignore[arg-type]

    return make


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def raw_get(seaweed: SeaweedServer, cas: S3Cas, hexdigest: str) -> bytes:
    return bytes(seaweed.client().get_object(Bucket=cas.bucket, Key=cas.key("data", hexdigest))["Body"].read())


def raw_put(seaweed: SeaweedServer, cas: S3Cas, hexdigest: str, data: bytes) -> None:
    seaweed.client().put_object(Bucket=cas.bucket, Key=cas.key("data", hexdigest), Body=data)


def blob_keys(seaweed: SeaweedServer, cas: S3Cas) -> list[str]:
    listing = seaweed.client().list_objects_v2(Bucket=cas.bucket, Prefix=f"{cas.prefix}versioning/data/blobs/")
    return [entry["Key"] for entry in listing.get("Contents", [])]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- create-only publishing --------------------------------------------------------------------


@pytest.mark.parametrize("size", [7, 13 * MIB + 5], ids=["single-put", "multipart"])
def test_a_corrupt_existing_object_is_never_reused_or_overwritten(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path, size: int
) -> None:
    cas = make_cas(**SMALL)
    data = os.urandom(size)
    src = write(tmp_path / "src.bin", data)
    ref = cas.put_file(src)
    garbage = b"garbage" + data[7:]
    raw_put(seaweed, cas, ref.hash, garbage)
    with pytest.raises(CorruptObjectError, match=ref.hash):
        cas.put_file(src)
    with pytest.raises(CorruptObjectError, match=ref.hash):
        cas.put_stream(src.open("rb"))
    with pytest.raises(CorruptObjectError, match=ref.hash):
        cas.put_many([b"another", data])
    assert raw_get(seaweed, cas, ref.hash) == garbage, "the corrupt object was overwritten"
    assert not cas.verify(ref)
    assert cas.unfinished_uploads() == []


@pytest.mark.parametrize("intact", [True, False], ids=["intact", "corrupt"])
def test_an_object_that_appears_during_a_multipart_upload_is_verified_not_replaced(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path, intact: bool
) -> None:
    cas = make_cas(**SMALL)
    data = os.urandom(12 * MIB)
    src = write(tmp_path / "src.bin", data)
    other = data if intact else b"x" + data[1:]
    parts: list[int] = []

    def another_writer_wins(n: int) -> None:  # after the first part, another writer publishes the key
        parts.append(n)
        if len(parts) == 1:
            raw_put(seaweed, cas, sha(data), other)

    if intact:
        ref = cas.put_file(src, on_bytes=another_writer_wins)
        assert cas.read(ref) == data
    else:
        with pytest.raises(CorruptObjectError, match=sha(data)):
            cas.put_file(src, on_bytes=another_writer_wins)
    assert len(parts) == 3, "every part was sent before completing found the key taken"
    assert raw_get(seaweed, cas, sha(data)) == other
    assert cas.unfinished_uploads() == [], "the upload that lost was aborted"


# --- multipart uploads ------------------------------------------------------------------------


def test_multipart_upload_above_the_threshold(seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path) -> None:
    cas = make_cas(**SMALL)
    data = os.urandom(17 * MIB + 3)
    seen: list[int] = []
    ref = cas.put_file(write(tmp_path / "big.bin", data), on_bytes=seen.append)
    # Part by part, as each is done (a short last part may be done first).
    assert sorted(seen) == [2 * MIB + 3, 5 * MIB, 5 * MIB, 5 * MIB], "progress is reported part by part"
    head = seaweed.client().head_object(Bucket=cas.bucket, Key=cas.key("data", ref.hash))
    assert head["ContentLength"] == len(data)
    assert head["ETag"].strip('"').endswith("-4"), "stored as a multipart object of 4 parts"
    assert ref.hash == sha(data) and cas.read(ref) == data
    assert cas.stored_size("data", ref.hash) == len(data)
    assert cas.unfinished_uploads() == []
    # put_stream spools past a few MiB, then sends the spool as parts; the spool is removed.
    streamed = os.urandom(9 * MIB)
    with write(tmp_path / "stream.bin", streamed).open("rb") as fh:
        sref = cas.put_stream(fh)
    assert cas.read(sref) == streamed
    assert cas.spool_dir is not None and list(Path(cas.spool_dir).iterdir()) == []
    # the same object again is verified and reused; nothing more is uploaded
    again: list[int] = []
    assert cas.put_file(tmp_path / "big.bin", on_bytes=again.append) == ref
    assert sum(again) == len(data)
    assert blob_keys(seaweed, cas) == sorted([cas.key("data", ref.hash), cas.key("data", sref.hash)])


class Interrupted(Exception):
    pass


@pytest.mark.parametrize("stop", [Interrupted, KeyboardInterrupt])
def test_an_interrupted_multipart_upload_leaves_nothing(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path, stop: type[BaseException]
) -> None:
    cas = make_cas(**SMALL)
    data = os.urandom(16 * MIB)
    src = write(tmp_path / "big.bin", data)
    seen: list[int] = []

    def interrupt(n: int) -> None:
        seen.append(n)
        raise stop("stopped after the first part")

    with pytest.raises(stop):
        cas.put_file(src, on_bytes=interrupt)
    assert len(seen) == 1 and seen[0] in (5 * MIB, 1 * MIB)  # the first part done: any of the four
    assert cas.locate(sha(data)) is None and blob_keys(seaweed, cas) == [], "no object is visible"
    assert cas.unfinished_uploads() == [], "the upload was aborted"
    ref = cas.put_file(src)
    assert cas.read(ref) == data


def test_a_file_changed_while_it_is_sent_is_not_published(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path
) -> None:
    cas = make_cas(**SMALL)
    # Nine parts: at most eight are read ahead of the first one the server confirms, so the last
    # part is read after the file changed.
    data = os.urandom(9 * 5 * MIB)
    src = write(tmp_path / "big.bin", data)

    def change_the_file(n: int) -> None:
        with open(src, "r+b") as fh:
            fh.seek(len(data) - 1)
            fh.write(bytes([data[-1] ^ 1]))

    with pytest.raises(InvalidInputError, match="changed while being stored"):
        cas.put_file(src, on_bytes=change_the_file)
    assert cas.locate(sha(data)) is None and blob_keys(seaweed, cas) == []
    assert cas.unfinished_uploads() == []


def test_a_batch_of_large_files_is_sent_from_the_files_without_a_local_copy(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path
) -> None:
    cas = make_cas(concurrency=2, **SMALL)
    assert cas.spool_dir is not None
    spool = Path(cas.spool_dir)
    sizes = [7 * MIB + 1, 11 * MIB, 13 * MIB + 5, 100]  # three multipart uploads, one PutObject
    datas = [os.urandom(n) for n in sizes]
    paths = [write(tmp_path / f"f{n}.bin", data) for n, data in enumerate(datas)]
    spooled: list[list[Path]] = []

    def look_at_the_spool(n: int) -> None:  # called as each part or object reaches the server
        spooled.append(list(spool.iterdir()))

    refs = cas.put_files(paths, on_bytes=look_at_the_spool)
    assert spooled and all(listing == [] for listing in spooled), "no file was copied into the spool folder"
    assert [ref.hash for ref in refs] == [sha(data) for data in datas]
    assert [cas.read(ref) for ref in refs] == datas
    for ref, parts in zip(refs[:3], (2, 3, 3), strict=True):
        head = seaweed.client().head_object(Bucket=cas.bucket, Key=cas.key("data", ref.hash))
        assert head["ETag"].strip('"').endswith(f"-{parts}"), "sent as a multipart upload from the file"
    assert cas.unfinished_uploads() == [] and list(spool.iterdir()) == []


def test_a_file_of_a_batch_changed_before_it_is_sent_is_not_published(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path
) -> None:
    cas = make_cas(concurrency=1, **SMALL)  # one at a time: the first is sent before the second
    first, second = os.urandom(7 * MIB), os.urandom(8 * MIB)
    paths = [write(tmp_path / "first.bin", first), write(tmp_path / "second.bin", second)]

    def change_the_second(n: int) -> None:  # both are hashed by now
        with open(paths[1], "r+b") as fh:
            fh.seek(len(second) - 1)
            fh.write(bytes([second[-1] ^ 1]))

    with pytest.raises(InvalidInputError, match="changed while being stored"):
        cas.put_files(paths, on_bytes=change_the_second)
    assert cas.read(sha(first)) == first, "the file sent before the change is stored whole"
    assert cas.locate(sha(second)) is None and cas.locate(sha(paths[1].read_bytes())) is None
    assert cas.unfinished_uploads() == []


@pytest.mark.parametrize("swap", ["endless-device", "fifo"])
def test_a_file_of_a_batch_swapped_for_a_device_or_fifo_is_refused_without_sending_it(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path, swap: str
) -> None:
    cas = make_cas(concurrency=1, **SMALL)  # one at a time: the first is sent before the second
    first = os.urandom(7 * MIB)
    paths = [write(tmp_path / "first.bin", first), write(tmp_path / "second.bin", os.urandom(8 * MIB))]
    parts: list[int] = []
    calls = cas._call

    def counting(what: str, operation: str, **kwargs: Any) -> Any:
        if operation == "upload_part":
            parts.append(kwargs["PartNumber"])
            assert len(parts) <= 6, "an endless source is being uploaded"
        return calls(what, operation, **kwargs)

    def swap_the_second(n: int) -> None:  # both are hashed by now
        if paths[1].is_symlink() or not paths[1].is_file():
            return
        paths[1].unlink()
        if swap == "fifo":
            os.mkfifo(paths[1])
        else:
            paths[1].symlink_to("/dev/zero")

    with (
        mock.patch.object(cas, "_call", counting),
        pytest.raises(InvalidInputError, match="no longer a regular file") as refused,
    ):
        cas.put_files(paths, on_bytes=swap_the_second)
    assert refused.value.field == "path" and str(paths[1]) in str(refused.value)
    assert cas.read(sha(first)) == first, "the file sent before the swap is stored whole"
    assert parts == [1, 2], "only the first file's two parts were sent"
    assert cas.unfinished_uploads() == []


def test_a_batch_counts_every_files_bytes_even_when_two_hold_the_same(make_cas: MakeCas, tmp_path: Path) -> None:
    cas = make_cas(concurrency=2, **SMALL)
    big, small = os.urandom(7 * MIB), os.urandom(1000)
    paths = [write(tmp_path / n, b) for n, b in [("a", big), ("b", small), ("a2", big), ("b2", small)]]
    counted: list[int] = []
    refs = cas.put_files(paths, on_bytes=counted.append)
    assert [r.hash for r in refs] == [sha(big), sha(small), sha(big), sha(small)]
    assert sum(counted) == 2 * (len(big) + len(small)), "the bar reaches the batch's total"
    assert sorted(name for _, name in cas.iter_objects()) == sorted([sha(big), sha(small)])


def test_put_many_sends_on_many_threads_and_stores_each_once(seaweed: SeaweedServer, make_cas: MakeCas) -> None:
    cas = make_cas(concurrency=8, **SMALL)
    items = [os.urandom(100) for _ in range(150)] + [os.urandom(7 * MIB)]  # the last one as a multipart upload
    refs = cas.put_many([*items, *items[:20]])
    assert [r.hash for r in refs] == [sha(i) for i in [*items, *items[:20]]]
    assert sorted(name for _, name in cas.iter_objects()) == sorted({sha(i) for i in items})
    assert all(cas.read(ref) == item for ref, item in zip(refs, items, strict=False))
    big = seaweed.client().head_object(Bucket=cas.bucket, Key=cas.key("data", refs[150].hash))
    assert big["ETag"].strip('"').endswith("-2") and cas.unfinished_uploads() == []


# --- opening ----------------------------------------------------------------------------------


def test_open_cas_by_url(seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    folder = FilesystemCas(tmp_path / "objects", create=True)
    assert isinstance(open_cas(None, store=store, create=True), FilesystemCas)
    assert (store / "versioning" / "data" / "oci-layout").is_file()
    opened = open_cas(f"file://{folder.root}", store=store)
    assert isinstance(opened, FilesystemCas) and opened.root == folder.root
    with pytest.raises(StoreNotInitializedError, match=f"s3://{s3_bucket}/rt/"):
        open_cas(f"s3://{s3_bucket}/rt", store=store, s3=s3_settings(seaweed))
    made = open_cas(f"s3://{s3_bucket}/rt/", store=store, s3=s3_settings(seaweed), create=True)
    assert isinstance(made, S3Cas) and (made.bucket, made.prefix) == (s3_bucket, "rt/")
    ref = made.put(b"hello")
    again = open_cas(f"s3://{s3_bucket}/rt", store=store, s3=s3_settings(seaweed), read_only=True)
    assert again.read(ref) == b"hello" and again.furniture_problems() == []
    with pytest.raises(ReadOnlyStoreError):
        again.put(b"other")
    with pytest.raises(ReadOnlyStoreError):
        again.put_file(tmp_path / "objects" / "versioning" / "data" / "oci-layout")
    assert [name for _, name in again.iter_objects()] == [ref.hash]


def test_a_layout_object_changed_or_removed_is_a_problem(seaweed: SeaweedServer, make_cas: MakeCas) -> None:
    cas = make_cas()
    client = seaweed.client()
    client.put_object(Bucket=cas.bucket, Key=f"{cas.prefix}versioning/data/index.json", Body=b'{"schemaVersion": 1}')
    client.delete_object(Bucket=cas.bucket, Key=f"{cas.prefix}versioning/agent-state/oci-layout")
    problems = cas.furniture_problems()
    assert any(p.startswith("data: index.json was changed") for p in problems), problems
    assert any(p.startswith("agent-state: oci-layout is missing") for p in problems), problems


# --- verified reads ----------------------------------------------------------------------------


def _count_gets(cas: S3Cas) -> list[str]:
    """The keys of every GetObject the store's client sends from now on."""
    keys: list[str] = []
    cas.client.meta.events.register(
        "before-parameter-build.s3.GetObject", lambda params, **_: keys.append(params["Key"])
    )
    return keys


@pytest.mark.parametrize(
    ("size", "parts"), [(5, 1), (3 * MIB + 1, 1), (2 * GET_PART + 3, 3)], ids=["small", "one-part", "in-parts"]
)
def test_a_verified_read_downloads_the_object_once(make_cas: MakeCas, tmp_path: Path, size: int, parts: int) -> None:
    cas = make_cas()
    data = os.urandom(size)
    ref = cas.put(data)
    gets = _count_gets(cas)
    counted: list[int] = []
    chunks = verified_chunks(cas, ref.hash, on_bytes=counted.append)
    assert gets == [cas.key("data", ref.hash)] * parts, "verified before the first chunk, each byte fetched once"
    assert b"".join(chunks) == data
    assert len(gets) == parts, "the second pass read the local copy, not the bucket"
    assert sum(counted) == 2 * size, "both passes are counted for the progress bar"
    assert list(tmp_path.glob("spool-*/*")) == [], "the local copy is removed once read"
    counted.clear()
    with open(tmp_path / "out.bin", "wb") as out:  # both ends files: the kernel copies
        out.write(b"head:")
        write_verified(cas, ref.hash, out, on_bytes=counted.append)
    assert (tmp_path / "out.bin").read_bytes() == b"head:" + data
    assert sum(counted) == 2 * size and len(gets) == 2 * parts


def test_a_verified_read_of_a_corrupt_object_gives_no_byte_and_leaves_no_copy(
    seaweed: SeaweedServer, make_cas: MakeCas, tmp_path: Path
) -> None:
    cas = make_cas()
    ref = cas.put(b"hello world")
    raw_put(seaweed, cas, ref.hash, b"HELLO WORLD")
    with pytest.raises(CorruptObjectError, match=ref.hash):
        verified_chunks(cas, ref.hash)
    large = os.urandom(GET_PART + 10)
    big = cas.put(large)
    raw_put(seaweed, cas, big.hash, large[:-1] + bytes([large[-1] ^ 1]))  # the last part differs
    with pytest.raises(CorruptObjectError, match=big.hash):
        verified_chunks(cas, big.hash)
    raw_put(seaweed, cas, big.hash, large[:-1])  # one byte short of its reference
    with pytest.raises(CorruptObjectError, match=big.hash):
        verified_chunks(cas, big.hash)
    with pytest.raises(ObjectNotFoundError):
        verified_chunks(cas, "b" * 64)
    assert list(tmp_path.glob("spool-*/*")) == []


def test_opening_an_s3_store_loads_no_boto3(seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path) -> None:
    probe = (
        "import sys; from pathlib import Path; from reviewtrail.cas import open_cas; "
        f"open_cas('s3://{s3_bucket}/rt', store=Path('{tmp_path}'), require_layout=False); "
        "print(sorted(m for m in ('boto3', 'botocore') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_without_boto3_an_s3_url_is_backend_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(BackendUnavailableError, match=r"reviewtrail\[s3\]") as err:
        open_cas("s3://bucket/rt", store=tmp_path)
    assert err.value.exit_code == 5 and err.value.field == "REVIEWTRAIL_CAS_URL"


# --- a bucket that answers 503 for a while ------------------------------------------------------


def test_a_bucket_answering_503_for_a_while_is_retried(seaweed: SeaweedServer, s3_bucket: str) -> None:
    cas = S3Cas(s3_bucket, "rt", s3=s3_settings(seaweed), create=True)
    with FaultyProxy(seaweed.endpoint, failures=2, status=503, code="SlowDown") as proxy:
        settings = S3Settings(seaweed.access_key, seaweed.secret_key, None, proxy.endpoint, "us-east-1")
        flaky = S3Cas(s3_bucket, "rt", s3=settings)
        ref = flaky.put(b"through a flaky bucket")
        assert proxy.refused == 2 and proxy.requests > 2
    assert cas.read(ref) == b"through a flaky bucket"


def test_a_bucket_that_keeps_answering_500_is_backend_unavailable(seaweed: SeaweedServer, s3_bucket: str) -> None:
    with FaultyProxy(seaweed.endpoint, failures=10**6, status=500, code="InternalError") as proxy:
        settings = S3Settings(seaweed.access_key, seaweed.secret_key, None, proxy.endpoint, "us-east-1")
        cas = S3Cas(s3_bucket, "rt", s3=settings, require_layout=False, max_attempts=3)
        with pytest.raises(BackendUnavailableError, match="500 InternalError") as err:
            cas.put(b"never stored")
        assert proxy.requests == 3, "standard retries: the request and two retries"
    assert err.value.exit_code == 5


# --- the command line -------------------------------------------------------------------------


def s3_env(seaweed: SeaweedServer, bucket: str, prefix: str = "team/rt") -> dict[str, str]:
    return {**seaweed.env(), "REVIEWTRAIL_CAS_URL": f"s3://{bucket}/{prefix}"}


def test_a_store_whose_objects_live_in_s3(
    seaweed: SeaweedServer, s3_bucket: str, store_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3_env(seaweed, s3_bucket).items():
        monkeypatch.setenv(name, value)
    code, _, err = run_cli("init")
    assert code == 0, err
    content = "model,score\nA,0.81\n"
    (store_env / "results.csv").write_text(content)
    code, out, err = run_cli("cas", "put", "results.csv", "--media-type", "text/csv", "--json")
    assert code == 0, err
    ref = json.loads(out)
    hexdigest = ref["digest"].removeprefix("sha256:")
    payload = json.dumps({"file": {"hash": hexdigest, "size": ref["size"]}})
    code, _, err = run_cli(
        "ledger", "append", "--type", "eval.result@1", "--actor", "alice", "--privacy", "private", "--payload", payload
    )
    assert code == 0, err
    code, out, err = run_cli("cas", "cat", ref["digest"])
    assert code == 0 and out == content, err
    code, out, err = run_cli("verify", "--json")
    assert code == 0, out + err
    report = json.loads(out)
    assert report["objectsChecked"] == 1 and report["refsChecked"] == 1
    # The object is in the bucket under the prefix, in the filesystem layout; not in the store folder.
    keys = [e["Key"] for e in seaweed.client().list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert f"team/rt/versioning/data/blobs/sha256/{hexdigest}" in keys
    assert "team/rt/versioning/agent-state/oci-layout" in keys
    store = store_env / "store"
    assert (store / "reviewtrail-store.json").is_file()
    assert not (store / "versioning").exists()
    assert [p for p in store.rglob("*") if hexdigest in p.name] == []
    # verify re-hashes the objects in the bucket: one changed behind the store's back is found.
    seaweed.client().put_object(
        Bucket=s3_bucket, Key=f"team/rt/versioning/data/blobs/sha256/{hexdigest}", Body=b"model,score\nA,0.99\n"
    )
    code, out, _ = run_cli("verify")
    assert code == 4 and hexdigest in out


def test_a_wrong_secret_is_exit_5_naming_the_setting_without_traceback_or_secret(
    seaweed: SeaweedServer, s3_bucket: str, store_env: Path
) -> None:
    wrong = "not-the-secret-" + uuid.uuid4().hex
    env = {**os.environ, **s3_env(seaweed, s3_bucket), "AWS_SECRET_ACCESS_KEY": wrong}
    proc = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "init"], env=env, capture_output=True, text=True, timeout=120
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 5, output
    assert "AWS_SECRET_ACCESS_KEY" in proc.stderr and "SignatureDoesNotMatch" in proc.stderr
    assert "Traceback" not in output
    assert wrong not in output and seaweed.secret_key not in output


def test_after_init_wrong_credentials_are_exit_5_for_reads_and_writes(
    seaweed: SeaweedServer, s3_bucket: str, store_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3_env(seaweed, s3_bucket).items():
        monkeypatch.setenv(name, value)
    assert run_cli("init")[0] == 0
    (store_env / "f.txt").write_text("hello")
    code, out, _ = run_cli("cas", "put", "f.txt", "--json")
    digest = json.loads(out)["digest"]
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-" + uuid.uuid4().hex)
    for args in (["cas", "put", "f.txt"], ["cas", "verify", digest], ["cas", "cat", digest], ["verify"]):
        code, out, err = run_cli(*args)
        assert code == 5 and "AWS_SECRET_ACCESS_KEY" in err, (args, out, err)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "nobody")
    code, _, err = run_cli("cas", "verify", digest)
    assert code == 5 and "AWS_ACCESS_KEY_ID" in err and "nobody" in err, err


def test_a_missing_bucket_is_exit_5_naming_the_url(seaweed: SeaweedServer, store_env: Path) -> None:
    bucket = f"rt-missing-{uuid.uuid4().hex[:8]}"
    code, _, err = run_cli("init", env=s3_env(seaweed, bucket))
    assert code == 5 and "REVIEWTRAIL_CAS_URL" in err and bucket in err, err


def test_an_unreachable_endpoint_is_exit_5_naming_it(seaweed: SeaweedServer, store_env: Path) -> None:
    env = {**s3_env(seaweed, "rt-any"), "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}
    code, _, err = run_cli("init", env=env)
    assert code == 5 and "AWS_ENDPOINT_URL" in err and "cannot reach" in err, err


@pytest.mark.parametrize(
    "url",
    [
        "s3://",
        "s3://Upper_Case/rt",
        "s3://ab/rt",
        "s3://bucket/../rt",
        "s3://bucket//rt",
        "s3://user@bucket/rt",
        "s3://bucket:9000/rt",
        "s3://bucket/rt?x=1",
        "http://host/rt",
        "/plain/folder",
        "file:relative/folder",
        "file://host/folder",
    ],
)
def test_a_malformed_cas_url_is_exit_2_and_makes_nothing(store_env: Path, url: str) -> None:
    code, _, err = run_cli("init", env={"REVIEWTRAIL_CAS_URL": url})
    assert code == 2 and "REVIEWTRAIL_CAS_URL" in err, err
    assert not (store_env / "store").exists()
