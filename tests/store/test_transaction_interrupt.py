"""A Ctrl-C/SIGTERM that arrives while ``BEGIN IMMEDIATE`` waits for the write lock leaves no
transaction open. It used to: the KeyboardInterrupt was raised as BEGIN returned, outside the
generator's try, so the transaction stayed open; every later write (the session's and the study's
"interrupted") became a savepoint inside it and was rolled back at exit, and a SIGTERMed cluster
study read "crashed" (the flake hunt's CI run, tests/cluster/test_study.py). Real SQLite files, a
real signal to this process while another connection holds the lock."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time

import pytest

from benchlab.store.db import Store
from tests.store.other_connection import count_rows


def _hold_lock_then_interrupt(db: str, hold_s: float = 0.6) -> threading.Thread:
    """Another connection takes the write lock; a signal to this process while it is held (the
    main thread then waits in BEGIN IMMEDIATE); the lock is released after ``hold_s``. SIGUSR1
    with a handler that raises KeyboardInterrupt, as Ctrl-C's does: a pytest-xdist worker
    ignores SIGINT itself."""
    taken = threading.Event()

    def hold():
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        taken.set()
        time.sleep(hold_s / 2)
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(hold_s / 2)
        other.execute("ROLLBACK")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(5)
    return thread


def test_an_interrupt_during_begin_leaves_no_transaction_and_later_writes_commit(tmp_path):
    db = str(tmp_path / "lock.db")
    with Store.open(db) as store:
        store.conn.execute("CREATE TABLE t (x INTEGER)")
        previous = signal.signal(signal.SIGUSR1, signal.default_int_handler)
        try:
            holder = _hold_lock_then_interrupt(db)
            with pytest.raises(KeyboardInterrupt):
                with store.transaction() as conn:
                    conn.execute("INSERT INTO t VALUES (1)")  # not reached: the signal came first
            holder.join()
        finally:
            signal.signal(signal.SIGUSR1, previous)
        assert not store.conn.in_transaction
        # the write an interrupted session makes on its way out ("interrupted") commits
        with store.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
        assert count_rows(db, "t") == 1


def test_a_failed_body_rolls_back_and_a_nested_one_only_its_savepoint(tmp_path):
    db = str(tmp_path / "nest.db")
    with Store.open(db) as store:
        store.conn.execute("CREATE TABLE t (x INTEGER)")
        with pytest.raises(KeyError):
            with store.transaction() as conn:
                conn.execute("INSERT INTO t VALUES (1)")
                raise KeyError("body")
        assert count_rows(db, "t") == 0 and not store.conn.in_transaction
        with store.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            with pytest.raises(KeyError):
                with store.transaction() as inner:
                    inner.execute("INSERT INTO t VALUES (3)")
                    raise KeyError("inner")
            with store.transaction() as inner:
                inner.execute("INSERT INTO t VALUES (4)")
        assert sorted(r[0] for r in store.conn.execute("SELECT x FROM t")) == [2, 4]
        assert store._savepoints == 0
