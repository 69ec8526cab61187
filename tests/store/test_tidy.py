"""Keeping a store tidy: ``benchlab delete`` / ``rename`` / ``store vacuum`` on a real
SQLite file through the console script, and the same store functions on the throwaway
PostgreSQL cluster the store tests use. Nothing but the named sessions is ever deleted, and a
session whose writer is still alive never is."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from benchlab.errors import UserError
from benchlab.store import SessionWriter, Store
from benchlab.store.tidy import delete_sessions, rename_session, sessions_to_delete, vacuum
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error

ENV = {"digest": "tidy-env", "host": {"hostname": "test"}}


def _session(store: Store, name: str, runs: int = 3, finish: bool = True) -> SessionWriter:
    w = SessionWriter.create(store, "run", name=name, environment=ENV)
    bench = w.add_benchmark("true", position=0, command="true")
    for i in range(runs):
        w.add_run(bench, iteration=i, fields={"status": "ok", "wall_ns": 1000 + i},
                  samples={"latency": [1.0, 2.0, 3.0]})
    if finish:
        w.finish("done")
    return w


def _counts(path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("sessions", "benchmarks", "runs", "sample_blocks", "environments")}


def test_delete_rename_and_vacuum_through_the_cli(db_path):
    with Store.open(db_path) as store:
        for name in ("keep", "drop-a", "drop-b"):
            _session(store, name, runs=200)
    before = _counts(db_path)
    assert before["sessions"] == 3 and before["runs"] == 600

    asked = run_cli("delete", "drop-a", db=db_path)  # no terminal to ask: refuses, deletes nothing
    assert_one_line_error(asked, "--yes")
    assert _counts(db_path) == before

    done = run_cli("delete", "drop-a", "drop-b", "--yes", db=db_path, check=True)
    assert "deleted 2 sessions (400 runs)" in done.stdout
    after = _counts(db_path)
    assert after["sessions"] == 1 and after["runs"] == 200 and after["benchmarks"] == 1
    assert after["sample_blocks"] < before["sample_blocks"]
    assert after["environments"] == before["environments"]  # shared, not named: kept

    renamed = run_cli("rename", "keep", "baseline", db=db_path, check=True)
    assert "keep -> baseline" in renamed.stdout
    assert "baseline" in run_cli("list", db=db_path, check=True).stdout
    assert_one_line_error(run_cli("rename", "baseline", "42", db=db_path), "number")
    assert_one_line_error(run_cli("delete", "no-such-session", "--yes", db=db_path),
                          "no session")

    vac = run_cli("store", "vacuum", db=db_path, check=True)
    assert "vacuumed" in vac.stdout and "MB ->" in vac.stdout
    assert _counts(db_path)["runs"] == 200


def test_older_than_selects_by_age_and_nothing_else(db_path):
    with Store.open(db_path) as store:
        old = _session(store, "old")
        _session(store, "new")
        long_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=40)).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ")
        store.conn.execute("UPDATE sessions SET created_utc = ? WHERE id = ?",
                           (long_ago, old.ref.id))
        store.conn.commit()
    assert_one_line_error(run_cli("delete", "--older-than", "30", "--yes", db=db_path), "age")
    none = run_cli("delete", "--older-than", "60d", "--yes", db=db_path, check=True)
    assert "nothing deleted" in none.stdout
    done = run_cli("delete", "--older-than", "30d", "--yes", db=db_path, check=True)
    assert "deleted 1 session (" in done.stdout
    names = [r[0] for r in sqlite3.connect(db_path).execute("SELECT name FROM sessions")]
    assert names == ["new"]


def _running_session_is_kept_until_its_writer_dies(store: Store) -> None:
    live = _session(store, "live", finish=False)  # owned by this (alive) process
    _session(store, "done")
    with pytest.raises(UserError, match="still running"):
        sessions_to_delete(store, ["live", "done"])
    assert len(store.sessions()) == 2  # nothing deleted, not even the finished one
    # the writer died without finishing (a recycled pid can never match its start time)
    store.conn.execute("UPDATE sessions SET owner_start = 'gone' WHERE id = ?", (live.ref.id,))
    if store.backend.name != "postgres":
        store.conn.commit()
    rows = sessions_to_delete(store, ["live"])
    assert delete_sessions(store, rows).runs == 3
    assert [s["name"] for s in store.sessions()] == ["done"]


def test_a_running_session_is_never_deleted(db_path):
    with Store.open(db_path) as store:
        _running_session_is_kept_until_its_writer_dies(store)


def test_delete_rename_vacuum_on_postgres(pg_url):
    with Store.open(pg_url) as store:
        _running_session_is_kept_until_its_writer_dies(store)
        row, old = rename_session(store, "done", "renamed")
        assert old == "done" and store.get_session("renamed")["id"] == row["id"]
        assert vacuum(store).bytes_before is None
        deleted = delete_sessions(store, sessions_to_delete(store, ["renamed"]))
        assert [s["name"] for s in deleted.sessions] == ["renamed"] and deleted.runs == 3
        assert store.sessions() == []
        assert store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
