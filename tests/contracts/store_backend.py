"""The two configurations a whole store runs in, for the end-to-end tests of every package.

- ``embedded``: the SQLite ledger and the objects in the store's folder (``REVIEWTRAIL_STORE`` only);
- ``postgres+s3``: the ledger in a fresh database of the session's PostgreSQL server and the objects
  under a prefix of a fresh bucket of the session's SeaweedFS (``REVIEWTRAIL_DATABASE_URL``,
  ``REVIEWTRAIL_CAS_URL`` and the AWS variables), the store's folder holding only its marker.

The ``store_backend`` fixture (tests/conftest.py) gives one :class:`StoreBackend` per configuration;
a workflow runs a ``reviewtrail`` process with :meth:`StoreBackend.process_env`, or this process's
commands after :meth:`StoreBackend.apply`, and ends with :meth:`StoreBackend.check_objects`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from reviewtrail.config import Settings
    from support.seaweed import SeaweedServer

__all__ = ["BACKENDS", "StoreBackend"]

BACKENDS = ("embedded", "postgres+s3")

# Every variable that chooses where a store lives: a backend's ``env`` is the only one of them a
# command sees, whatever this process's environment holds.
_STORE_VARIABLES = ("REVIEWTRAIL_STORE", "REVIEWTRAIL_DATABASE_URL", "REVIEWTRAIL_CAS_URL")
_BLOB = re.compile(r"versioning/(data|agent-state)/blobs/sha256/([0-9a-f]{64})")


def _chooses_the_store(name: str) -> bool:
    return name in _STORE_VARIABLES or name.startswith("AWS_")


@dataclass(frozen=True)
class StoreBackend:
    """A fresh, uninitialised store in one configuration (``name``, one of :data:`BACKENDS`)."""

    name: str
    store: Path  # REVIEWTRAIL_STORE
    env: dict[str, str]  # what a reviewtrail process or load_settings(env) needs for this store
    seaweed: SeaweedServer | None = field(default=None, repr=False)
    bucket: str | None = None
    prefix: str = ""  # the CAS's key prefix in the bucket, ending with "/"

    @classmethod
    def embedded(cls, store: Path) -> StoreBackend:
        return cls("embedded", store, {"REVIEWTRAIL_STORE": str(store)})

    @classmethod
    def postgres_s3(cls, store: Path, database_url: str, seaweed: SeaweedServer, bucket: str) -> StoreBackend:
        prefix = "team/objects/"
        env = {
            "REVIEWTRAIL_STORE": str(store),
            "REVIEWTRAIL_DATABASE_URL": database_url,
            "REVIEWTRAIL_CAS_URL": f"s3://{bucket}/{prefix}",
            **seaweed.env(),
        }
        return cls("postgres+s3", store, env, seaweed, bucket, prefix)

    @property
    def external(self) -> bool:
        """True when the ledger and the objects live outside the store's folder."""
        return self.bucket is not None

    def process_env(self, **extra: str) -> dict[str, str]:
        """This process's environment with no ``REVIEWTRAIL_`` or ``AWS_`` variable but this backend's
        (and ``extra``): a command sees no setting from outside the test."""
        kept = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
        return {**kept, **self.env, **extra}

    def apply(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Point this process's environment at the store (commands run in process, ``load_settings()``)."""
        for name in [k for k in os.environ if _chooses_the_store(k)]:
            monkeypatch.delenv(name)
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)

    def settings(self) -> Settings:
        """The settings a command reads from :attr:`env`."""
        from reviewtrail.config import load_settings

        return load_settings(self.env, cwd=self.store.parent)

    def bucket_keys(self) -> dict[str, int]:
        """Every key of the bucket with its size (empty for ``embedded``)."""
        if self.seaweed is None or self.bucket is None:
            return {}
        keys: dict[str, int] = {}
        for page in self.seaweed.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            keys.update({item["Key"]: int(item["Size"]) for item in page.get("Contents", [])})
        return keys

    def folder_blobs(self) -> set[str]:
        """The hex digests of the objects in the store's folder (typed pools and the legacy layout)."""
        if not self.store.exists():
            return set()
        found = set()
        for path in self.store.rglob("*"):
            relative = path.relative_to(self.store).as_posix()
            if path.is_file() and (_BLOB.fullmatch(relative) or relative.startswith("cas/sha256/")):
                found.add(path.name)
        return found

    def objects(self) -> set[str]:
        """The hex digests of the objects where this configuration keeps them."""
        if not self.external:
            return self.folder_blobs()
        found = set()
        for key in self.bucket_keys():
            matched = _BLOB.fullmatch(key.removeprefix(self.prefix))
            if key.startswith(self.prefix) and matched:
                found.add(matched.group(2))
        return found

    def check_objects(self, *digests: str) -> set[str]:
        """Check that the objects and the ledger are where this configuration keeps them, and that
        they hold ``digests`` (``sha256:<hex>`` or hex); give every object's hex digest.

        ``postgres+s3``: every object is a blob key under the prefix (nothing else in the bucket
        but the pools' layout files), and the store's folder holds no object, no pool and no
        SQLite ledger. ``embedded``: the objects and ``ledger.sqlite`` are in the folder."""
        stored = self.objects()
        assert stored, f"{self.name}: no object was stored"
        wanted = {d.removeprefix("sha256:") for d in digests}
        assert wanted <= stored, f"{self.name}: objects missing from where they belong: {sorted(wanted - stored)}"
        sqlite = self.store / "ledger.sqlite"
        if not self.external:
            assert sqlite.is_file(), f"no SQLite ledger in {self.store}"
            return stored
        assert not self.folder_blobs(), f"objects in the store's folder {self.store}: {sorted(self.folder_blobs())}"
        assert not (self.store / "versioning").exists(), f"pools in the store's folder {self.store}"
        assert not sqlite.exists(), f"a SQLite ledger in {self.store} beside {self.env['REVIEWTRAIL_DATABASE_URL']}"
        layout = {
            f"{self.prefix}versioning/{pool}/{name}"
            for pool in ("data", "agent-state")
            for name in ("oci-layout", "index.json")
        }
        for key in self.bucket_keys():
            relative = key.removeprefix(self.prefix)
            assert key in layout or (key.startswith(self.prefix) and _BLOB.fullmatch(relative)), f"unexpected key {key}"
        return stored
