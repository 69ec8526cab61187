"""A nested transaction whose outer transaction is already gone (a SIGTERM's exit rolled it back,
or the connection closed before an abandoned thread's generator was finalised) re-raises the
original exception. It printed "Exception ignored ... no such savepoint: sp1" with a traceback
after SIGTERM to a cluster study (CI, tests/cluster/test_study.py)."""

import sqlite3

import pytest

from benchlab.store.db import Store


def _nested_then(db_path, undo_outer):
    with Store.open(db_path) as store:
        with pytest.raises(SystemExit):
            with store.transaction():
                with store.transaction():
                    undo_outer(store.conn)
                    raise SystemExit(143)


def test_outer_transaction_rolled_back_under_the_savepoint(tmp_path):
    _nested_then(tmp_path / "a.db", lambda conn: conn.execute("ROLLBACK"))


def test_a_real_savepoint_is_still_undone(tmp_path):
    db = tmp_path / "b.db"
    with Store.open(db) as store:
        store.conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        with store.transaction():
            store.conn.execute("INSERT INTO t VALUES (1)")
            with pytest.raises(KeyError):
                with store.transaction():
                    store.conn.execute("INSERT INTO t VALUES (2)")
                    raise KeyError("inner")
        assert [r[0] for r in store.conn.execute("SELECT x FROM t")] == [1]


def test_connection_closed_under_the_savepoint(tmp_path):
    db = tmp_path / "c.db"
    store = Store.open(db)
    with pytest.raises(SystemExit):
        with store.transaction():
            with store.transaction():
                store.conn.close()
                raise SystemExit(143)
    with pytest.raises(sqlite3.ProgrammingError):
        store.conn.execute("SELECT 1")
