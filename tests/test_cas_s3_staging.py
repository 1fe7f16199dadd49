"""Unfinished multipart uploads in a bucket (a writer killed mid-upload): ``verify`` notes them and
``cas clean-ingest`` aborts those older than its threshold, touching no object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.seaweed import SeaweedServer


def cli(env: dict[str, str], *args: str) -> tuple[int, Any, str]:
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    try:
        return done.returncode, json.loads(done.stdout), done.stderr
    except json.JSONDecodeError:
        return done.returncode, done.stdout, done.stderr


def test_unfinished_uploads_are_noted_and_aborted(tmp_path: Path, seaweed: SeaweedServer, s3_bucket: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
    env |= {
        **seaweed.env(),
        "REVIEWTRAIL_STORE": str(tmp_path / "store"),
        "REVIEWTRAIL_CAS_URL": f"s3://{s3_bucket}/p/",
    }
    assert cli(env, "init")[0] == 0
    (tmp_path / "a.txt").write_bytes(b"kept\n")
    code, ref, err = cli(env, "cas", "put", str(tmp_path / "a.txt"), "--json")
    assert code == 0, err
    client = seaweed.client()
    key = "p/versioning/data/blobs/sha256/" + "ab" * 32
    upload = client.create_multipart_upload(Bucket=s3_bucket, Key=key)["UploadId"]
    client.upload_part(Bucket=s3_bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"x" * 1024)
    other = client.create_multipart_upload(Bucket=s3_bucket, Key="elsewhere/not-ours")["UploadId"]

    code, report, err = cli(env, "verify", "--json")
    assert code == 0, (report, err)
    [note] = [n for n in report["notes"] if "unfinished write(s)" in n]
    assert note.startswith("1 unfinished write(s)") and upload in note

    code, kept, _ = cli(env, "cas", "clean-ingest", "--json")  # begun just now: younger than an hour
    assert code == 0 and kept == {"removed": []}
    code, removed, err = cli(env, "cas", "clean-ingest", "--older-than", "0", "--json")
    assert code == 0, err
    assert removed == {"removed": [f"s3://{s3_bucket}/{key} (unfinished multipart upload {upload})"]}
    left = client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", [])
    assert [(u["Key"], u["UploadId"]) for u in left] == [("elsewhere/not-ours", other)]  # outside the prefix
    code, data, _ = cli(env, "cas", "cat", ref["digest"])
    assert code == 0 and data == "kept\n"
    code, report, _ = cli(env, "verify", "--json")
    assert code == 0 and not [n for n in report["notes"] if "unfinished" in n]
