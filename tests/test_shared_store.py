"""Many writers, many hosts: several store folders (one per host) pointing at one PostgreSQL
ledger and one S3 bucket, written by 4 processes at once, keep one gap-free chain that every
folder verifies; and the PostgreSQL roles of docs/deploy.md (owner, writer, reader) do what the
guide says they do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from support.pgserver import PgServer
from support.seaweed import SeaweedServer

pytestmark = pytest.mark.slow

WRITERS = 4
BATCHES = 5
PER_BATCH = 50

# One writer process (a "host"): its own store folder, the shared database and bucket; it puts an
# object and appends records that point at it, batch after batch, and prints what was acknowledged.
_WORKER = textwrap.dedent(
    """
    import json, sys
    from reviewtrail.app import open_store
    from reviewtrail.config import load_settings
    from reviewtrail.ledger import NewRecord

    writer = int(sys.argv[1])
    acked = []
    with open_store(load_settings()) as store:
        for batch in range(int(sys.argv[2])):
            ref = store.cas.put(f"writer {writer} batch {batch}".encode(), media_type="text/plain")
            records = [
                NewRecord.make(
                    type="demo.shared@1", actor=f"host-{writer}", privacy="private",
                    subject=f"w{writer}", payload={"writer": writer, "batch": batch, "i": i, "blob": ref.to_json()},
                )
                for i in range(int(sys.argv[3]))
            ]
            acked += [env.id for env in store.append(records)]
    print(json.dumps(acked))
    """
)


def _env(store: Path, database: str, cas: str, seaweed: SeaweedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
    return {
        **env,
        **seaweed.env(),
        "REVIEWTRAIL_STORE": str(store),
        "REVIEWTRAIL_DATABASE_URL": database,
        "REVIEWTRAIL_CAS_URL": cas,
    }


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reviewtrail", *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_four_writers_on_four_hosts_keep_one_chain(tmp_path: Path, pg_url: str, seaweed: SeaweedServer) -> None:
    cas = f"s3://{seaweed.new_bucket()}/team/"
    envs = [_env(tmp_path / f"host-{w}" / "store", pg_url, cas, seaweed) for w in range(WRITERS)]
    first = _cli(envs[0], "init", "--json")
    assert first.returncode == 0, first.stderr
    store_id = json.loads(first.stdout)["storeId"]
    for env in envs[1:]:  # every other host's folder joins the same store
        joined = _cli(env, "init", "--json")
        assert joined.returncode == 0, joined.stderr
        assert json.loads(joined.stdout)["storeId"] == store_id
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(w), str(BATCHES), str(PER_BATCH)],
            env=envs[w],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    acked: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        acked += json.loads(out)
    assert len(acked) == len(set(acked)) == WRITERS * BATCHES * PER_BATCH
    for env in envs:  # each host verifies the whole shared store: one chain, every object in the bucket
        done = _cli(env, "verify", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["ok"] is True
        assert report["head"]["seq"] == 1 + len(acked)  # the identity record, then every acknowledged one
        assert report["objectsChecked"] == WRITERS * BATCHES  # read back from the bucket
    listed = _cli(envs[2], "ledger", "tail", "-n", str(len(acked) + 1), "--json")
    assert listed.returncode == 0, listed.stderr
    records: list[dict[str, Any]] = json.loads(listed.stdout)
    seqs = [r["seq"] for r in records]
    assert seqs == list(range(1, len(acked) + 2))  # gap-free
    assert {r["id"] for r in records if r["type"] == "demo.shared@1"} == set(acked)
    for w in range(WRITERS):  # no object landed in any host's folder
        assert not list((tmp_path / f"host-{w}" / "store" / "versioning").rglob("sha256/*"))


def _grant_sql(schema: str) -> list[str]:
    """The grants of docs/deploy.md ("PostgreSQL role and schema"), run by the owner."""
    return [
        f"GRANT USAGE ON SCHEMA {schema} TO rt_writer, rt_reader",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO rt_reader",
        f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {schema} TO rt_writer",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO rt_reader",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE ON TABLES TO rt_writer",
    ]


def test_the_deploy_guides_roles(tmp_path: Path, pg_server: PgServer) -> None:
    import psycopg

    database = pg_server.new_database()
    name = database.rsplit("/", 1)[1]
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        for role in ("rt_owner", "rt_writer", "rt_reader"):
            admin.execute(f"CREATE ROLE {role}_{name} LOGIN")
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA reviewtrail AUTHORIZATION rt_owner_{name}")
        for role in ("rt_owner", "rt_writer", "rt_reader"):
            admin.execute(f"ALTER ROLE {role}_{name} IN DATABASE {name} SET search_path = reviewtrail")

    def url(role: str) -> str:
        return f"postgresql://{role}_{name}@127.0.0.1:{pg_server.port}/{name}"

    def env(role: str, host: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
        return {**base, "REVIEWTRAIL_STORE": str(tmp_path / host), "REVIEWTRAIL_DATABASE_URL": url(role)}

    assert _cli(env("rt_owner", "admin"), "init").returncode == 0  # the owner creates the tables
    with psycopg.connect(url("rt_owner"), autocommit=True) as owner:
        for sql in _grant_sql("reviewtrail"):
            owner.execute(sql.replace("rt_writer", f"rt_writer_{name}").replace("rt_reader", f"rt_reader_{name}"))
        tables = {r[0] for r in owner.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'reviewtrail'")}
    assert "rt_records" in tables and "rt_signatures" in tables
    append = ["ledger", "append", "--type", "demo.x@1", "--actor", "a", "--privacy", "private", "--payload", "{}"]
    writer = env("rt_writer", "host-a")
    assert _cli(writer, "init").returncode == 0  # a writer's folder joins the store
    done = _cli(writer, *append)
    assert done.returncode == 0, done.stderr
    reader = env("rt_reader", "host-b")
    assert _cli(reader, "init").returncode == 0
    verified = _cli(reader, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    refused = _cli(reader, *append)
    assert refused.returncode == 5
    assert refused.stderr.startswith("error: database: PostgreSQL: the role 'rt_reader_"), refused.stderr
    assert "permission denied" in refused.stderr and "Traceback" not in refused.stderr
    assert "pipeline" not in refused.stderr  # no warning of the driver's before the message
    with psycopg.connect(url("rt_writer")) as conn, pytest.raises(psycopg.Error, match="append-only"):
        conn.execute("UPDATE rt_records SET actor = 'x' WHERE seq = 1")
