"""Custody attacks on PostgreSQL, a lost connection mid-append, and verify while others write."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import psycopg
import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.errors import BackendUnavailableError, ConfigError, IntegrityError, LedgerMissingError
from reviewtrail.ledger import NewRecord
from reviewtrail.verify import verify_store


def _init(root: Path, url: str) -> Settings:
    settings = Settings(store=root, database_url=url)
    with init_store(settings) as store:
        ref = store.cas.put(b"on postgres")
        store.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"f": ref.to_json()})])
    return settings


def _sql(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for stmt in statements:
            conn.execute(stmt)  # type: ignore[arg-type]


@pytest.mark.postgres
def test_an_empty_or_dropped_postgres_ledger_is_an_integrity_failure(tmp_path: Path, pg_server: object) -> None:
    url = pg_server.new_database()  # type: ignore[attr-defined]
    settings = _init(tmp_path / "s", url)
    empty = Settings(store=settings.store, database_url=pg_server.new_database())  # type: ignore[attr-defined]
    with pytest.raises(LedgerMissingError, match="no records table"):
        open_store(empty)
    with psycopg.connect(empty.database_url) as conn:  # and nothing was created there
        assert conn.execute("SELECT to_regclass('rt_records')").fetchone() == (None,)
    _sql(url, "DROP TABLE rt_records CASCADE")
    with pytest.raises(LedgerMissingError, match="rt_records"):
        open_store(settings)


@pytest.mark.postgres
def test_emptied_postgres_records_and_disabled_triggers_are_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(pg_url, "ALTER TABLE rt_records DISABLE TRIGGER rt_records_no_change")
    with open_store(settings) as store:
        problems = verify_store(store).problems
    assert any("rt_records_no_change" in p and "disabled" in p for p in problems), problems
    _sql(pg_url, "DELETE FROM rt_records")
    with pytest.raises(LedgerMissingError, match="emptied or replaced"):
        open_store(settings)
    with open_store(settings, check_identity=False) as store:
        problems = verify_store(store).problems
    assert any("identity record" in p for p in problems)
    _sql(pg_url, "DROP TRIGGER rt_records_no_truncate ON rt_records")
    with open_store(settings, check_identity=False) as store:
        assert any("rt_records_no_truncate" in p and "dropped" in p for p in verify_store(store).problems)


@pytest.mark.postgres
def test_query_rows_edited_on_postgres_are_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(pg_url, "UPDATE rt_p_cas_refs SET size = 1")
    with open_store(settings) as store:
        problems = verify_store(store).problems
        assert any("query table cas_refs" in p and "edited" in p for p in problems), problems
        store.ledger.rebuild_projections()
        assert verify_store(store).ok


@pytest.mark.postgres
def test_a_lost_connection_mid_append_is_retried_once(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    with open_store(settings) as store:
        pid = store.ledger.recorder._conn.info.backend_pid  # type: ignore[attr-defined]
        _sql(pg_url, f"SELECT pg_terminate_backend({pid})")
        [env] = store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": 1})])
        assert env.seq == 3 and store.ledger.get(env.id) == env
        assert verify_store(store).ok


@pytest.mark.postgres
def test_a_server_that_stays_down_is_exit_5_with_nothing_written(tmp_path: Path) -> None:
    from support.pgserver import PgServer

    server = PgServer()
    server.start()
    try:
        url = server.new_database()
        settings = _init(tmp_path / "s", url)
        store = open_store(settings)
        server.stop()
        with pytest.raises(BackendUnavailableError) as err:
            store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": 1})])
        assert err.value.exit_code == 5 and "nothing was written" in str(err.value)
    finally:
        server.stop()


def _writer(root: str, url: str, stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    settings = Settings(store=Path(root), database_url=url)
    with open_store(settings) as store:
        n = 0
        while not stop.is_set():
            n += 1
            ref = store.cas.put(f"object {n} {id(store)}".encode())
            store.append([NewRecord(type="t.w@1", actor="w", privacy="private", payload={"f": ref.to_json(), "n": n})])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_verify_while_others_write_has_no_false_alarms(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    root = tmp_path / "s"
    url = request.getfixturevalue("pg_url") if backend == "postgres" else f"sqlite:///{root / 'ledger.sqlite'}"
    settings = _init(root, url)
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    writers = [ctx.Process(target=_writer, args=(str(root), url, stop)) for _ in range(2)]
    for w in writers:
        w.start()
    alarms: list[str] = []
    seen: list[int] = []
    try:
        with open_store(settings) as store:
            while store.ledger.head().seq < 5:  # type: ignore[union-attr]
                threading.Event().wait(0.05)
            for _ in range(20):
                report = verify_store(store)
                alarms.extend(report.problems)
                seen.append(report.records_checked)
    finally:
        stop.set()
        for w in writers:
            w.join(30)
    assert alarms == []
    assert seen[-1] > seen[0], "the writers really wrote while verify ran"
    with open_store(settings) as store:
        final = verify_store(store)
    assert final.ok, final.problems
    assert json.dumps(final.to_json())


@pytest.mark.postgres
def test_a_foreign_trigger_on_postgres_is_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(
        pg_url,
        "CREATE FUNCTION drop_rows() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
        "CREATE TRIGGER sneaky BEFORE INSERT ON rt_p_cas_refs FOR EACH ROW EXECUTE FUNCTION drop_rows()",
    )
    with open_store(settings) as store:
        problems = verify_store(store).problems
    assert any("trigger sneaky on rt_p_cas_refs is not reviewtrail's own" in p for p in problems), problems


def _append(settings: Settings, n: int) -> None:
    with open_store(settings) as store:
        store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": n})])


@pytest.mark.postgres
def test_a_rule_that_swallows_appends_fails_the_append_and_is_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(pg_url, "CREATE RULE swallow AS ON INSERT TO rt_records DO INSTEAD NOTHING")
    with open_store(settings) as store:
        head = store.ledger.head()
        with pytest.raises(IntegrityError, match="was not stored as sealed") as err:
            store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": 1})])
        assert err.value.exit_code == 4 and store.ledger.head() == head
        problems = verify_store(store).problems
    assert any("rule swallow on rt_records" in p for p in problems), problems


@pytest.mark.postgres
def test_a_rule_that_swallows_query_rows_fails_the_append(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(pg_url, "CREATE RULE swallow AS ON INSERT TO rt_p_cas_refs DO INSTEAD NOTHING")
    with open_store(settings) as store:
        head = store.ledger.head()
        ref = store.cas.put(b"more")
        with pytest.raises(IntegrityError, match="query table rt_p_cas_refs, 0 stored"):
            store.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"f": ref.to_json()})])
        assert store.ledger.head() == head
        assert any("rule swallow on rt_p_cas_refs" in p for p in verify_store(store).problems)


@pytest.mark.postgres
def test_a_trigger_function_replaced_by_a_no_op_is_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(
        pg_url,
        "CREATE OR REPLACE FUNCTION rt_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN IF false THEN RAISE EXCEPTION 'ledger records are append-only'; END IF; RETURN OLD; END $$",
    )
    with open_store(settings) as store:
        problems = verify_store(store).problems
    assert any("function rt_append_only behind trigger rt_records_no_change was replaced" in p for p in problems)


@pytest.mark.postgres
def test_a_trigger_that_never_fires_is_reported(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(
        pg_url,
        "CREATE FUNCTION let_it() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION 'ledger records are append-only'; END $$",
        "DROP TRIGGER rt_records_no_change ON rt_records",
        "CREATE TRIGGER rt_records_no_change BEFORE UPDATE OR DELETE ON rt_records "
        "FOR EACH ROW WHEN (false) EXECUTE FUNCTION let_it()",
    )
    with open_store(settings) as store:
        problems = verify_store(store).problems
    assert any("trigger rt_records_no_change on rt_records was replaced" in p for p in problems), problems


@pytest.mark.postgres
@pytest.mark.parametrize("where", ["database", "role"])
def test_a_stored_replica_role_is_reported_and_refuses_appends(tmp_path: Path, pg_url: str, where: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        database, role = conn.execute("SELECT current_database(), current_user").fetchone()  # type: ignore[misc]
    target = f'DATABASE "{database}"' if where == "database" else f'ROLE "{role}"'
    _sql(pg_url, f"ALTER {target} SET session_replication_role = replica")
    try:
        with open_store(settings) as store:
            problems = verify_store(store).problems
            with pytest.raises(IntegrityError, match="session_replication_role is 'replica'") as err:
                store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": 1})])
            assert err.value.exit_code == 4
        assert any("session_replication_role=replica is set for" in p for p in problems), problems
        assert any("in this session" in p for p in problems), problems
    finally:
        _sql(pg_url, f"ALTER {target} RESET session_replication_role")
    _append(settings, 2)


@pytest.mark.postgres
def test_a_replica_role_in_the_session_is_reported_and_refuses_appends(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    with open_store(settings) as store:
        store.ledger.recorder._conn.execute("SET session_replication_role = replica")  # type: ignore[attr-defined]
        assert any("'replica' in this session" in p for p in verify_store(store).problems)
        with pytest.raises(IntegrityError, match="refusing to write"):
            store.append([NewRecord(type="t.b@1", actor="x", privacy="private", payload={"n": 1})])


@pytest.mark.postgres
def test_a_dropped_query_table_on_postgres_is_an_integrity_failure(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(pg_url, "DROP TABLE rt_p_cas_refs")
    with open_store(settings) as store:
        problems = verify_store(store).problems
        assert any("rt_p_cas_refs was dropped" in p for p in problems), problems
        with pytest.raises(IntegrityError, match="rt_p_cas_refs") as err:
            store.ledger.rows("cas_refs")
        assert err.value.exit_code == 4
        store.ledger.rebuild_projections()
        assert verify_store(store).ok


@pytest.mark.postgres
@pytest.mark.parametrize("table", ["rt_records", "rt_signatures"])
def test_a_row_level_security_policy_hiding_a_record_from_verify_is_refused(
    tmp_path: Path, pg_server: object, table: str
) -> None:
    """A policy that hides the last record from the role verify runs as: that role sees a chain
    that is whole, only shorter; verify refuses (exit 5) naming the table and the policy, for the
    owner (who sees every row) as well."""
    from support.signed import cli

    url = pg_server.new_database()  # type: ignore[attr-defined]
    settings = _init(tmp_path / "s", url)
    _append(settings, 1)
    with open_store(settings) as store:
        head = store.ledger.head_seq()
    name = url.rsplit("/", 1)[1]
    role = f"rt_verify_{name}"
    _sql(pg_server.url, f"CREATE ROLE {role} LOGIN")  # type: ignore[attr-defined]
    _sql(
        url,
        f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY rt_hide_last ON {table} FOR SELECT TO {role} USING (seq < {head})",
    )
    verifier = Settings(store=settings.store, database_url=url.replace("postgres@", f"{role}@"))
    with psycopg.connect(verifier.database_url) as conn:  # the role is shown one record fewer
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (head - 1 if table == "rt_records" else 0,)
    for who in (verifier, settings):
        with open_store(who, check_identity=False) as store, pytest.raises(ConfigError) as refused:
            verify_store(store)
        assert refused.value.exit_code == 5
        assert (
            f"row-level security is enabled on {table} with policy rt_hide_last (SELECT to {role} using (seq < {head}))"
            in str(refused.value)
        ), str(refused.value)
    code, _, err = cli("verify", "--json", env={"REVIEWTRAIL_STORE": str(settings.store),
                                                "REVIEWTRAIL_DATABASE_URL": verifier.database_url})  # fmt: skip
    assert code == 5 and "rt_hide_last" in err and "verify refuses" in err, err
    _sql(url, f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")  # the policy stays, inert: every row is seen
    with open_store(verifier, check_identity=False) as store:
        report = verify_store(store)
    assert report.ok and report.head_seq == head, report.problems


@pytest.mark.postgres
def test_row_level_security_with_no_policy_is_refused(tmp_path: Path, pg_url: str) -> None:
    settings = _init(tmp_path / "s", pg_url)
    _sql(
        pg_url,
        "ALTER TABLE rt_p_cas_refs ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE rt_p_cas_refs FORCE ROW LEVEL SECURITY",
    )
    with (
        open_store(settings) as store,
        pytest.raises(ConfigError, match="rt_p_cas_refs \\(forced on its owner too\\) with no policy"),
    ):
        verify_store(store)
