"""``cas put`` and ``cas cat`` of many objects in one process, and ``cas cat`` to a file in one pass.

``cas put A B C`` stores every file (a line each, ``--json`` a list), checking every path before
anything is stored. ``cas cat --out FILE`` and ``cas cat D1 D2 --out-dir DIR`` download each object
once, hashing it into a temporary file beside its destination that is renamed into place only when
it hashed right: a missing or corrupt object leaves no file, no temporary file and the destination
as it was, with the documented exit code; the others of a batch are written all the same. In the
embedded store and with the objects in an S3 bucket (SeaweedFS).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pytest

import reviewtrail.cas as cas_api
from conftest import run_cli
from contracts.store_backend import StoreBackend
from reviewtrail.cas import FilesystemCas, S3Cas
from reviewtrail.cas._s3_download import GET_PART
from reviewtrail.errors import CorruptObjectError, InvalidInputError, ObjectNotFoundError
from support.seaweed import SeaweedServer
from test_cas_contract import s3_settings


def _tamper(backend: StoreBackend, hexdigest: str, data: bytes) -> None:
    """Overwrite an object's stored bytes behind the store's back."""
    if backend.seaweed is not None:
        key = f"{backend.prefix}versioning/data/blobs/sha256/{hexdigest}"
        backend.seaweed.client().put_object(Bucket=backend.bucket, Key=key, Body=data)
        return
    blob = backend.store / "versioning" / "data" / "blobs" / "sha256" / hexdigest
    blob.chmod(0o644)
    blob.write_bytes(data)


def _put(folder: Path, *contents: bytes) -> list[str]:
    """Store each content with one ``cas put`` of them all; their addresses, checked against hashlib."""
    names = []
    for n, data in enumerate(contents):
        (folder / f"f{n}.bin").write_bytes(data)
        names.append(f"f{n}.bin")
    code, out, err = run_cli("cas", "put", *names)
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [f"sha256:{hashlib.sha256(d).hexdigest()}" for d in contents]
    assert [int(line.split()[1]) for line in lines] == [len(d) for d in contents]
    return [line.split()[0] for line in lines]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def test_put_of_many_files_stores_each_and_checks_every_path_first(
    backend_env: Path, store_backend: StoreBackend
) -> None:
    assert run_cli("init")[0] == 0
    digests = _put(backend_env, b"one", b"two", b"one", b"")
    assert digests[0] == digests[2]
    assert store_backend.check_objects(*digests) == {d.removeprefix("sha256:") for d in digests}
    code, out, err = run_cli("cas", "put", "f0.bin", "f1.bin", "--json", "--media-type", "text/plain")
    assert code == 0, err
    refs = json.loads(out)
    assert [r["digest"] for r in refs] == digests[:2] and {r["mediaType"] for r in refs} == {"text/plain"}
    code, out, _ = run_cli("cas", "put", "f0.bin", "--json")
    assert code == 0 and json.loads(out)["digest"] == digests[0], "one file still prints one object"
    before = store_backend.objects()
    (backend_env / "new.bin").write_bytes(b"never stored")
    code, out, err = run_cli("cas", "put", "new.bin", "missing.bin", "--json")
    assert code == 2 and json.loads(out)["error"]["field"] == "path" and "missing.bin" in out, out
    assert store_backend.objects() == before, "a bad path among them stores nothing"


def test_cat_of_many_objects_to_a_folder(backend_env: Path, store_backend: StoreBackend) -> None:
    assert run_cli("init")[0] == 0
    contents = [b"alpha", os.urandom(3000), b"gamma"]
    digests = _put(backend_env, *contents)
    out_dir = backend_env / "out"
    out_dir.mkdir()
    code, out, err = run_cli("cas", "cat", *digests, digests[0], "--out-dir", str(out_dir))
    assert code == 0, err
    hexes = [d.removeprefix("sha256:") for d in digests]
    assert out.splitlines() == [f"{d} {out_dir / h}" for d, h in zip(digests, hexes, strict=True)]
    assert [(out_dir / h).read_bytes() for h in hexes] == contents
    for h in hexes:
        (out_dir / h).unlink()
    _tamper(store_backend, hexes[1], b"X" + contents[1][1:])
    code, out, err = run_cli("cas", "cat", *digests, "--out-dir", str(out_dir))
    assert code == 4 and hexes[1] in err and "does not hash" in err, err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted([hexes[0], hexes[2]]), "the others are written"
    code, _, err = run_cli("cas", "cat", digests[0], "b" * 64, "--out-dir", str(out_dir))
    assert code == 3, err
    assert not (out_dir / ("b" * 64)).exists() and _leftovers(out_dir) == []


def test_cat_to_a_file_replaces_it_only_with_verified_bytes(backend_env: Path, store_backend: StoreBackend) -> None:
    assert run_cli("init")[0] == 0
    data = os.urandom(5000)
    (digest,) = _put(backend_env, data)
    dest = backend_env / "dest.bin"
    dest.write_bytes(b"what was there")
    code, out, err = run_cli("cas", "cat", digest, "--out", "dest.bin")
    assert code == 0 and out == f"{digest} dest.bin\n", err
    assert dest.read_bytes() == data
    dest.write_bytes(b"what was there")
    _tamper(store_backend, digest.removeprefix("sha256:"), data[:-1] + b"!")
    code, out, err = run_cli("cas", "cat", digest, "--out", "dest.bin")
    assert code == 4 and "does not hash" in err, err
    assert dest.read_bytes() == b"what was there" and _leftovers(backend_env) == []
    code, _, err = run_cli("cas", "cat", "c" * 64, "--out", "fresh.bin")
    assert code == 3 and not (backend_env / "fresh.bin").exists() and _leftovers(backend_env) == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["cas", "cat", "a" * 64, "b" * 64], "out_dir"),
        (["cas", "cat", "a" * 64, "b" * 64, "--out", "x.bin"], "out"),
        (["cas", "cat", "a" * 64, "--out", "x.bin", "--out-dir", "."], "out"),
        (["cas", "cat", "a" * 64, "not-an-address", "--out-dir", "."], "hash"),
        (["cas", "cat", "a" * 64, "--out-dir", "nowhere"], "out_dir"),
        (["cas", "cat", "a" * 64, "--out", "nowhere/x.bin"], "out"),
    ],
)
def test_what_cat_refuses_before_reading_anything(store_env: Path, args: list[str], field: str) -> None:
    assert run_cli("init")[0] == 0
    code, out, err = run_cli(*args)
    assert code == 2 and out == "", err
    assert f"error: {field}: " in err, err


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (["--out", "store/versioning/data/blobs/sha256/{other}"], "out"),  # over another object
        (["--out", "store/ledger.copy"], "out"),
        (["--out-dir", "store/versioning/data/blobs/sha256"], "out_dir"),
        (["--out-dir", "inside"], "out_dir"),  # a symlink into the store
    ],
    ids=["over-an-object", "in-the-store", "into-the-pool", "through-a-symlink"],
)
def test_cat_never_writes_into_the_store(store_env: Path, where: list[str], field: str) -> None:
    """Objects are copied out of the store: a destination inside it (or its CAS), however named,
    is refused before anything is read, and every object stays as it was."""
    assert run_cli("init")[0] == 0
    first, other = (a.removeprefix("sha256:") for a in _put(store_env, b"one\n", b"other\n"))
    (store_env / "inside").symlink_to(store_env / "store")
    args = [part.format(other=other) for part in where]
    code, out, err = run_cli("cas", "cat", first, *args)
    assert code == 2 and out == "", err
    assert f"error: {field}: " in err and "inside the store" in err, err
    for hexdigest, data in ((first, b"one\n"), (other, b"other\n")):
        code, out, err = run_cli("cas", "cat", hexdigest)
        assert code == 0 and out == data.decode(), err
    assert not (store_env / "store" / "ledger.copy").exists()
    assert _leftovers(store_env / "store" / "versioning" / "data" / "blobs" / "sha256") == []


# --- the library, on S3: one pass, beside the destination -------------------------------------


def _gets(cas: S3Cas) -> list[str]:
    keys: list[str] = []
    cas.client.meta.events.register(
        "before-parameter-build.s3.GetObject", lambda params, **_: keys.append(params["Key"])
    )
    return keys


@pytest.mark.parametrize(
    ("size", "parts"), [(5, 1), (3 * (1 << 20) + 1, 1), (2 * GET_PART + 3, 3)], ids=["small", "one-part", "in-parts"]
)
def test_saving_an_s3_object_downloads_and_hashes_it_once_beside_the_file(
    seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path, size: int, parts: int
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    cas = S3Cas(s3_bucket, f"t-{uuid.uuid4().hex[:8]}", s3=s3_settings(seaweed), create=True, spool_dir=spool)
    data = os.urandom(size)
    ref = cas.put(data)
    gets = _gets(cas)
    dest_dir = tmp_path / "dest"
    dest_dir.mkdir()
    seen: list[str] = []

    def counted(n: int) -> None:
        seen.extend([str(n), *_leftovers(dest_dir)])

    cas_api.save_verified(cas, ref.hash, dest_dir / "out.bin", on_bytes=counted)
    assert (dest_dir / "out.bin").read_bytes() == data
    assert gets == [cas.key("data", ref.hash)] * parts, "each byte fetched once"
    assert sum(int(s) for s in seen if s.isdigit()) == size, "one pass: each byte written once"
    assert any(s.startswith(".out.bin.") for s in seen), "written to a temporary file beside the destination"
    assert list(spool.iterdir()) == [] and _leftovers(dest_dir) == []


def test_saving_a_corrupt_or_missing_object_leaves_the_destination_as_it_was(
    seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path
) -> None:
    cas = S3Cas(s3_bucket, f"t-{uuid.uuid4().hex[:8]}", s3=s3_settings(seaweed), create=True)
    large = os.urandom(GET_PART + 10)
    big = cas.put(large)
    small = cas.put(b"hello world")
    client = seaweed.client()
    client.put_object(Bucket=cas.bucket, Key=cas.key("data", big.hash), Body=large[:-1] + bytes([large[-1] ^ 1]))
    client.put_object(Bucket=cas.bucket, Key=cas.key("data", small.hash), Body=b"HELLO WORLD")
    dest = tmp_path / "dest.bin"
    dest.write_bytes(b"kept")
    for ref in (big, small):
        with pytest.raises(CorruptObjectError, match=ref.hash):
            cas_api.save_verified(cas, ref.hash, dest)
        assert dest.read_bytes() == b"kept" and _leftovers(tmp_path) == []
    with pytest.raises(ObjectNotFoundError):
        cas_api.save_verified(cas, "d" * 64, dest)
    assert dest.read_bytes() == b"kept" and _leftovers(tmp_path) == []
    saved = cas_api.save_many(cas, [small.hash, "d" * 64], tmp_path)
    assert isinstance(saved[0], CorruptObjectError) and isinstance(saved[1], ObjectNotFoundError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest.bin"]


def test_saving_from_the_folder_store_is_one_verified_pass(tmp_path: Path) -> None:
    cas = FilesystemCas(tmp_path / "store", create=True)
    refs = cas.put_files([_file(tmp_path / "a", b"a" * 10), _file(tmp_path / "b", b"b" * 20)])
    assert [r.size for r in refs] == [10, 20]
    counted: list[int] = []
    saved = cas_api.save_many(cas, [r.digest for r in refs], tmp_path, on_bytes=counted.append)
    assert [p.read_bytes() for p in saved if isinstance(p, Path)] == [b"a" * 10, b"b" * 20]
    assert sum(counted) == 30, "one pass: each byte read once"
    with pytest.raises(InvalidInputError) as err:
        cas_api.save_verified(cas, refs[0].hash, tmp_path)
    assert err.value.field == "out"
    with pytest.raises(InvalidInputError) as err:
        cas.put_files([tmp_path / "a", tmp_path / "nope"])
    assert err.value.field == "path" and "nope" in str(err.value)


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
