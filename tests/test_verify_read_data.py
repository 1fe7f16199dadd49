"""``verify --read-data`` (the default) re-hashes every object; ``--no-read-data`` lists them:
presence and size are checked, bytes are not. In both configurations (embedded, PostgreSQL + S3)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from contracts.store_backend import StoreBackend


def cli(backend: StoreBackend, *args: str, stdin: bytes | None = None) -> tuple[int, Any, str]:
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", *args],
        env=backend.process_env(),
        cwd=backend.store.parent,
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )
    out = done.stdout.decode()
    try:
        doc = json.loads(out) if out.strip().startswith(("{", "[")) else out
    except json.JSONDecodeError:
        doc = out
    return done.returncode, doc, done.stderr.decode()


def _stored(backend: StoreBackend) -> str:
    """A store holding one object named by one record; the object's hex digest."""
    assert cli(backend, "init")[0] == 0
    src = backend.store.parent / "results.csv"
    src.write_bytes(b"model,score\nx,0.81\ny,0.84\n" * 50)
    code, ref, err = cli(backend, "cas", "put", str(src), "--json")
    assert code == 0, err
    payload = json.dumps({"results": ref})
    code, _, err = cli(backend, "ledger", "append", "--type", "demo.r@1", "--actor", "a", "--privacy", "private",
                       "--payload", payload)  # fmt: skip
    assert code == 0, err
    return str(ref["digest"]).removeprefix("sha256:")


def _replace(backend: StoreBackend, hexdigest: str, change: Any) -> None:
    """Rewrite the stored bytes of the object, as anyone with raw access could."""
    if backend.external:
        assert backend.seaweed is not None and backend.bucket is not None
        client = backend.seaweed.client()
        key = f"{backend.prefix}versioning/data/blobs/sha256/{hexdigest}"
        data = client.get_object(Bucket=backend.bucket, Key=key)["Body"].read()
        new = change(data)
        if new is None:
            client.delete_object(Bucket=backend.bucket, Key=key)
        else:
            client.put_object(Bucket=backend.bucket, Key=key, Body=new)
        return
    path = backend.store / "versioning" / "data" / "blobs" / "sha256" / hexdigest
    path.chmod(0o644)
    new = change(path.read_bytes())
    if new is None:
        path.unlink()
    else:
        path.write_bytes(new)


def _flip(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:]


@pytest.mark.parametrize("read_data", [True, False], ids=["read-data", "no-read-data"])
def test_an_intact_store_passes_either_way(store_backend: StoreBackend, read_data: bool) -> None:
    _stored(store_backend)
    code, report, err = cli(store_backend, "verify", "--json", "--read-data" if read_data else "--no-read-data")
    assert code == 0, (report, err)
    listed = [n for n in report["notes"] if "listed, not read" in n]
    assert report["objectsChecked"] == (1 if read_data else 0)
    assert bool(listed) is not read_data
    if listed:
        assert listed[0].startswith("1 object(s) listed")


def test_a_flipped_byte_needs_read_data(store_backend: StoreBackend) -> None:
    hexdigest = _stored(store_backend)
    _replace(store_backend, hexdigest, _flip)
    code, report, _ = cli(store_backend, "verify", "--json")
    assert code == 4 and any("does not hash to its address" in p for p in report["problems"])
    code, report, _ = cli(store_backend, "verify", "--json", "--no-read-data")
    assert code == 0 and report["problems"] == []  # the documented limit of a listing


@pytest.mark.parametrize(
    "change",
    [pytest.param(lambda data: None, id="deleted"), pytest.param(lambda data: data[:-1], id="truncated")],
)
def test_a_missing_or_resized_object_is_found_by_a_listing(store_backend: StoreBackend, change: Any) -> None:
    hexdigest = _stored(store_backend)
    _replace(store_backend, hexdigest, change)
    code, report, _ = cli(store_backend, "verify", "--json", "--no-read-data")
    assert code == 4, report
    assert any(hexdigest in p for p in report["problems"]), report["problems"]
