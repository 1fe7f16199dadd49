"""The tamper campaign on PostgreSQL + S3: a populated store whose ledger is a PostgreSQL database and
whose objects are in an S3 bucket (SeaweedFS), copied once per case and damaged by an attacker with
raw database or bucket access.

:func:`build_template` populates one store through the real ``reviewtrail`` executable
(:func:`support.campaign.populate`, then writer keys declared, signatures required and a signed
tail), and anchors it with a signed checkpoint kept outside the store. :meth:`Template.clone` makes
an independent copy: a database made with ``CREATE DATABASE … TEMPLATE``, the objects copied to a
new key prefix (``copy_object``), the project folder copied. The attacks are in
``support.campaign_scale_attacks``.
"""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from support.campaign import Facts, Project, populate, save_trace
from support.pgserver import PgServer
from support.seaweed import SeaweedServer

__all__ = ["PLAIN_TAIL", "POOLS", "ScaleProject", "Template", "build_template"]

POOLS = ("data", "agent-state")
#: Plain records at the very end of the template (no object, no query row): a cut of up to this
#: many leaves nothing behind but the signed checkpoint to tell.
PLAIN_TAIL = 6


class ScaleProject(Project):
    """A project whose store's ledger is ``database_url`` and whose objects are at ``cas_url``."""

    def __init__(self, root: Path, database_url: str, cas_url: str, aws: dict[str, str]) -> None:
        super().__init__(root)
        self.database_url = database_url
        self.cas_url = cas_url
        self.aws = aws
        self.signing_key: Path | None = None  # REVIEWTRAIL_SIGNING_KEY of every command, when set

    @property
    def bucket(self) -> str:
        return self.cas_url.removeprefix("s3://").split("/", 1)[0]

    @property
    def prefix(self) -> str:
        return self.cas_url.removeprefix("s3://").split("/", 1)[1]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = super().env()
        env.update(self.aws, REVIEWTRAIL_DATABASE_URL=self.database_url, REVIEWTRAIL_CAS_URL=self.cas_url)
        env.update(XDG_CONFIG_HOME=str(self.root / ".user-config"))  # no user configuration read
        if self.signing_key is not None:
            env["REVIEWTRAIL_SIGNING_KEY"] = str(self.signing_key)
        env.update(extra or {})
        return env

    def connect_pg(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.database_url)

    def empty_query_tables(self) -> list[str]:
        with psycopg.connect(self.database_url) as conn:
            names = [name for (name,) in conn.execute(_QUERY_TABLES)]
            return [n for n in names if conn.execute(f'SELECT count(*) FROM "{n}"').fetchone() == (0,)]


_QUERY_TABLES = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_name LIKE 'rt\\_p\\_%' ORDER BY table_name"
)


def _ok(result: Any, what: str) -> Any:
    if result.code != 0:
        raise AssertionError(f"building the template: {what} failed: {result.describe()}")
    return result


@dataclass
class Template:
    """The populated store every case copies, and the anchors kept outside it."""

    project: ScaleProject
    facts: Facts
    pg: PgServer
    s3: SeaweedServer
    work: Path
    checkpoint: Path  # signed by checkpoint_key, written after the last record
    checkpoint_public: Path
    trusted: Path  # the writer's public key: the trusted-keys file
    writer_key_id: str
    attacker_key: Path  # an Ed25519 key no record declares
    required_at: int
    head: int
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _client: Any = None

    @property
    def client(self) -> Any:
        """One boto3 client for every thread (a client is thread-safe once made; making one is not)."""
        with self._lock:
            if self._client is None:
                self._client = self.s3.client()
            return self._client

    @property
    def db_name(self) -> str:
        return self.project.database_url.rsplit("/", 1)[1]

    def verify_args(self, *, trusted_keys: bool = True) -> list[str]:
        anchor = ["--checkpoint", str(self.checkpoint), "--public-key", str(self.checkpoint_public)]
        return [*anchor, "--trusted-keys", str(self.trusted)] if trusted_keys else anchor

    def clone(self, name: str) -> ScaleProject:
        """An independent copy: its own database, key prefix and project folder."""
        db = f"c_{uuid.uuid4().hex[:16]}"
        with self._lock, psycopg.connect(self.pg.url, autocommit=True) as conn:  # one copy of the template at a time
            conn.execute(f'CREATE DATABASE "{db}" TEMPLATE "{self.db_name}"')  # type: ignore[arg-type]
        prefix = f"case-{name}-{uuid.uuid4().hex[:8]}"
        client = self.client
        src = self.project
        for key in _keys(client, src.bucket, src.prefix):
            dest = f"{prefix}/{key.removeprefix(src.prefix + '/')}"
            client.copy_object(Bucket=src.bucket, Key=dest, CopySource={"Bucket": src.bucket, "Key": key})
        root = self.work / prefix
        shutil.copytree(src.root, root, symlinks=True)
        url = f"{self.project.database_url.rsplit('/', 1)[0]}/{db}"
        return ScaleProject(root, url, f"s3://{src.bucket}/{prefix}", src.aws)

    def discard(self, project: ScaleProject) -> None:
        """Drop a copy's database, objects and folder."""
        db = project.database_url.rsplit("/", 1)[1]
        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')  # type: ignore[arg-type]
        client = self.client
        keys = list(_keys(client, project.bucket, project.prefix))
        for i in range(0, len(keys), 500):
            client.delete_objects(Bucket=project.bucket, Delete={"Objects": [{"Key": k} for k in keys[i : i + 500]]})
        shutil.rmtree(project.root, ignore_errors=True)


def _keys(client: Any, bucket: str, prefix: str) -> Iterator[str]:
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for item in page.get("Contents", []):
            yield str(item["Key"])


def build_template(work: Path, pg: PgServer, s3: SeaweedServer) -> Template:
    """Populate a store on PostgreSQL + S3 through the CLI, declare a writer key, require
    signatures, append a signed tail (objects in both pools, a trace, plain records) and write a
    signed checkpoint of the head outside the store."""
    keys = work / "keys"
    keys.mkdir(parents=True)
    url = pg.new_database()
    bucket = s3.new_bucket()
    cas_url = f"s3://{bucket}/template"
    project, facts = populate(work / "template", lambda root: ScaleProject(root, url, cas_url, s3.env()))
    key_ids = {
        name: str(
            _ok(project.cli("key", "new", str(keys / f"{name}.pem"), "--json"), f"key new {name}").json()["keyId"]
        )
        for name in ("writer", "checkpoint", "attacker")
    }
    _ok(project.cli("key", "add", str(keys / "writer.pem.pub"), "--name", "writer"), "key add")
    project.signing_key = keys / "writer.pem"  # every record from here on is signed by the writer
    required = _ok(project.cli("key", "require", "--json"), "key require").json()
    root = project.root
    for i, pool in enumerate((*POOLS, *POOLS)):
        (root / f"signed-{i}.txt").write_text(f"signed object {i} in {pool}\n")
        ref = _ok(project.cli("cas", "put", f"signed-{i}.txt", "--pool", pool, "--json"), "cas put")
        payload = json.dumps({"file": ref.json(), "n": i})
        _ok(project.cli("ledger", "append", "--type", "eval.signed@1", "--actor", "writer", "--privacy", "private",
                        "--payload", payload), "ledger append (signed)")  # fmt: skip
    _ok(save_trace(project, "round-3-review", "Score: 8/10\nVerdict: ready"), "trace save (signed)")
    for i in range(PLAIN_TAIL + 2):
        _ok(project.cli("ledger", "append", "--type", "eval.note@1", "--actor", "writer", "--privacy", "private",
                        "--payload", json.dumps({"note": i})), "ledger append (plain tail)")  # fmt: skip
    checkpoint = work / "anchors" / "checkpoint.json"
    checkpoint.parent.mkdir()
    _ok(project.cli("ledger", "checkpoint", "--key", str(keys / "checkpoint.pem"), "--out", str(checkpoint)),
        "ledger checkpoint")  # fmt: skip
    trusted = work / "anchors" / "writers.pem"
    shutil.copy(keys / "writer.pem.pub", trusted)
    template = Template(
        project=project,
        facts=facts,
        pg=pg,
        s3=s3,
        work=work,
        checkpoint=checkpoint,
        checkpoint_public=keys / "checkpoint.pem.pub",
        trusted=trusted,
        writer_key_id=key_ids["writer"],
        attacker_key=keys / "attacker.pem",
        required_at=int(required["seq"]),
        head=int(json.loads(checkpoint.read_text())["seq"]),
    )
    result, _ = project.verify(*template.verify_args())
    if result.code != 0:
        raise AssertionError(f"building the template: it does not verify: {result.describe()}")
    return template
