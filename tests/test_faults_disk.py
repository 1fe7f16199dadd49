"""Fault campaign: a full disk under the store folder (filesystem CAS and SQLite ledger).

The store lives on an 8 MiB tmpfs mounted for the test (as root: ``mount -t tmpfs``; unmounted
in the end). Per trial a new store is made there and a filler file beside it leaves a random few
hundred KiB free; then ``reviewtrail cas put`` (new files of up to 1.5 MiB, and files already
stored), ``reviewtrail ledger append`` (records pointing at stored objects, with notes of up to
40 KB) run one after another until the disk has refused several of them. Each command either
succeeds or exits 5 saying there is no space left and where (in the store folder), with no
traceback; and then, the disk still
full:

* no half object: every file under ``blobs/sha256/`` is read-only and hashes to its name (a
  temporary file is never visible as an object), and ``cas clean-ingest --older-than 0`` leaves
  ``ingest/`` empty;
* ``reviewtrail verify`` passes (it needs no room in the store);
* every acknowledged put and append is there;

and once the filler is deleted, ``reviewtrail verify`` passes and a put and an append succeed.

Prints ``faults: disk-full trials=… faults=… verify-problems=… acked-lost=…``. ``RT_FAULT_TRIALS``
sets the number of trials (default 5), ``RT_FAULT_SEED`` the seed. Without root or a ``mount``
that works here the test skips, and fails under ``REVIEWTRAIL_STRICT=1``, naming why.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import need
from reviewtrail.errors import EXIT_BACKEND
from support.faults import base_env, cli, print_figures

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("RT_FAULT_TRIALS", "5"))
SEED = int(os.environ.get("RT_FAULT_SEED", "20261202"))
KIB = 1024
REFUSALS_PER_KIND = 2  # puts and appends the full disk refuses before a trial ends
MAX_COMMANDS = 50


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs mounted at a new folder, unmounted afterwards."""
    need(os.geteuid() == 0, "mounting a small tmpfs for the full-disk campaign needs root")
    need(shutil.which("mount") is not None, "the mount command is not installed")
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
        check=False,
    )
    need(done.returncode == 0, f"cannot mount a tmpfs here (mount -t tmpfs): {done.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, check=False)  # busy: detach it


def _free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def _fill(disk: Path, leave: int) -> Path:
    """A filler file that leaves about ``leave`` bytes free on ``disk``."""
    filler = disk / "filler"
    size = max(0, _free(disk) - leave)
    with open(filler, "wb") as fh:
        chunk = b"\xa5" * (64 * KIB)
        while size > 0:
            size -= fh.write(chunk[: min(size, len(chunk))])
    return filler


def _object_problems(store: Path) -> tuple[int, list[str], int]:
    """(objects, the problems of the files under blobs/, temporary files in ingest/)."""
    count, problems, temps = 0, [], 0
    for pool in ("data", "agent-state"):
        base = store / "versioning" / pool
        for entry in os.scandir(base / "blobs" / "sha256"):
            count += 1
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o222:
                problems.append(f"{pool}/{entry.name}: not a read-only file (mode {oct(info.st_mode)})")
                continue
            digest = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
            if digest != entry.name:
                problems.append(f"{pool}/{entry.name}: a half object (its bytes hash to {digest})")
        temps += len(os.listdir(base / "ingest"))
    return count, problems, temps


def _append(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(
        env, "ledger", "append", "--type", "fault.disk@1", "--actor", "disk", "--privacy", "private", *args, cwd=cwd
    )


def _is_full_refusal(done: subprocess.CompletedProcess[str], store: Path) -> bool:
    """Exit 5 saying there is no space left and where (the store's folder), no traceback."""
    err = done.stderr
    return (
        done.returncode == EXIT_BACKEND
        and "no space left" in err.lower()
        and str(store) in err
        and "Traceback" not in err
    )


def test_a_full_disk_refuses_writes_cleanly(
    small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED)
    sources = tmp_path / "sources"
    sources.mkdir()
    names = ("commands", "objects", "refused_puts", "refused_appends", "temps_cleaned", "verify_problems")
    figures = dict.fromkeys((*names, "acked", "acked_lost"), 0)
    failures: list[str] = []
    for trial in range(TRIALS):
        store = small_disk / f"store-{trial}"
        env = base_env(REVIEWTRAIL_STORE=str(store))
        done = cli(env, "init", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        filler = _fill(small_disk, rng.randrange(64 * KIB, 1024 * KIB))
        acked_refs: list[dict[str, object]] = []
        acked_files: list[Path] = []
        acked_ids: list[str] = []
        refused = {"put": 0, "append": 0}
        for n in range(MAX_COMMANDS):
            if min(refused.values()) >= REFUSALS_PER_KIND:
                break
            r = rng.random()
            free = _free(small_disk)
            if acked_refs and r < 0.4:
                ref = rng.choice(acked_refs)
                payload = {"blob": {"hash": str(ref["digest"])[7:], "size": ref["size"]}, "n": n}
                payload["note"] = "x" * rng.randrange(0, 40_000)
                what = "append"
                done = _append(env, tmp_path, "--payload", json.dumps(payload), "--json")
            elif acked_files and r < 0.5:
                what = "put again"
                done = cli(env, "cas", "put", str(rng.choice(acked_files)), "--json", cwd=tmp_path)
            else:
                what = "put"
                src = sources / f"{trial}-{n}.bin"
                # Half of them fit (the disk fills up), half do not (refused while being written).
                fits = rng.random() < 0.5
                size = rng.randrange(1, max(2, free // 2)) if fits else rng.randrange(free + 1, free + 1536 * KIB)
                src.write_bytes(rng.randbytes(size))
                done = cli(env, "cas", "put", str(src), "--json", cwd=tmp_path)
            figures["commands"] += 1
            if done.returncode == 0:
                if what == "append":
                    acked_ids.append(json.loads(done.stdout)["id"])
                else:
                    acked_refs.append(json.loads(done.stdout))
                    if what == "put":
                        acked_files.append(src)
            elif _is_full_refusal(done, store):
                refused["append" if what == "append" else "put"] += 1
                figures["refused_appends" if what == "append" else "refused_puts"] += 1
            else:
                failures.append(
                    f"trial {trial}: {what}: exit {done.returncode}, not a full-disk refusal: {done.stderr}"
                )

        # The disk is still full.
        count, problems, temps = _object_problems(store)
        failures += [f"trial {trial}: {p}" for p in problems]
        cleaned = cli(env, "cas", "clean-ingest", "--older-than", "0", "--json", cwd=tmp_path)
        if cleaned.returncode != 0:
            failures.append(f"trial {trial}: clean-ingest on a full disk: exit {cleaned.returncode}: {cleaned.stderr}")
        else:
            figures["temps_cleaned"] += len(json.loads(cleaned.stdout)["removed"])
        if _object_problems(store)[2]:
            failures.append(f"trial {trial}: temporary files left in ingest/ after clean-ingest ({temps} before)")
        for when in ("full", "freed"):
            if when == "freed":
                filler.unlink()
            checked = cli(env, "verify", "--json", "--no-progress", cwd=tmp_path)
            if checked.returncode != 0:
                figures["verify_problems"] += 1
                failures.append(f"trial {trial}: verify, disk {when}: {checked.stdout[-1500:]} {checked.stderr}")
        listed = cli(env, "ledger", "tail", "-n", "100000", "--json", cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        stored = {r["id"] for r in json.loads(listed.stdout)}
        for rid in acked_ids:
            figures["acked"] += 1
            if rid not in stored:
                figures["acked_lost"] += 1
                failures.append(f"trial {trial}: acknowledged record {rid} is not there")
        for ref in acked_refs:
            figures["acked"] += 1
            hexdigest = str(ref["digest"])[7:]
            path = store / "versioning" / str(ref["pool"]) / "blobs" / "sha256" / hexdigest
            if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != hexdigest:
                figures["acked_lost"] += 1
                failures.append(f"trial {trial}: acknowledged object {ref['digest']} is missing or damaged")
        # Room again: writing works.
        (sources / "after.txt").write_text(f"after trial {trial}\n")
        after = cli(env, "cas", "put", str(sources / "after.txt"), "--json", cwd=tmp_path)
        appended = _append(env, tmp_path)
        if after.returncode != 0 or appended.returncode != 0:
            failures.append(f"trial {trial}: writing after space was freed failed: {after.stderr} {appended.stderr}")
        figures["objects"] += count
        shutil.rmtree(store)  # room for the next trial's store

    print_figures(
        capsys,
        "disk-full",
        trials=TRIALS,
        faults=figures["refused_puts"] + figures["refused_appends"],
        **figures,
    )
    assert not failures, "\n".join(failures[:20])
    assert figures["acked"] > 0 and figures["refused_puts"] > 0 and figures["refused_appends"] > 0, figures
