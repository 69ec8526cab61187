"""A run's row is committed the moment ``add_run`` returns, whichever way it is written (a plain
run's row is one self-committing INSERT, not a BEGIN IMMEDIATE ... COMMIT):
another connection (another process's) sees it at once; inside an outer transaction it still
commits with that transaction or not at all; a busy store still ends in the one-line UserError.
Real SQLite files."""

from __future__ import annotations

import sqlite3

import pytest

from benchlab.errors import UserError
from benchlab.store import SessionWriter, Store
from benchlab.store.db import BUSY_TIMEOUT_MS
from tests.store.other_connection import count_rows


def test_a_plain_run_is_visible_to_another_connection_as_add_run_returns(db_path):
    db = str(db_path)
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", environment=None)
        bench = w.add_benchmark("b")
        for seq in range(3):
            store.add_run(w.ref.id, bench, seq=seq, iteration=seq,
                          fields={"status": "ok", "wall_ns": 10, "extra": {"k": [1, 2]}})
            assert count_rows(db, "runs") == seq + 1
            assert not store.conn.in_transaction  # nothing left open between runs
        row = store.runs(session_id=w.ref.id)[-1]
        assert row["extra"] == {"k": [1, 2]} and row["wall_ns"] == 10
        with pytest.raises(ValueError, match="unknown run fields"):
            store.add_run(w.ref.id, bench, seq=9, iteration=9, fields={"bogus": 1})
        with pytest.raises(sqlite3.IntegrityError):  # a seq stored twice: as before
            store.add_run(w.ref.id, bench, seq=0, iteration=0, fields={"status": "ok"})


def test_a_run_inside_an_outer_transaction_commits_with_it_or_not_at_all(db_path):
    db = str(db_path)
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", environment=None)
        bench = w.add_benchmark("b")
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.add_run(w.ref.id, bench, seq=0, iteration=0, fields={"status": "ok"})
                raise RuntimeError("mid-import failure")
        assert count_rows(db, "runs") == 0
        with store.transaction():
            store.add_run(w.ref.id, bench, seq=0, iteration=0, fields={"status": "ok"})
            assert count_rows(db, "runs") == 0  # not before the outer commit
        assert count_rows(db, "runs") == 1


def test_a_run_on_a_store_locked_by_another_writer_is_a_one_line_error(db_path, monkeypatch):
    db = str(db_path)
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", environment=None)
        bench = w.add_benchmark("b")
        store.conn.execute("PRAGMA busy_timeout = 50")  # not BUSY_TIMEOUT_MS: a fast test
        assert BUSY_TIMEOUT_MS > 50
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(UserError, match="locked by another process"):
                store.add_run(w.ref.id, bench, seq=0, iteration=0, fields={"status": "ok"})
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert not store.conn.in_transaction
