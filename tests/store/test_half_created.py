"""A session killed while it was being created (its row stored, its
benchmarks not) could not be resumed: ``--resume`` died with IndexError in the planner. Such a
session (left by a store written before creation became one transaction) is now refused in one
line; a session whose creation fails leaves nothing behind."""

from __future__ import annotations

import pytest

from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from benchlab.store.writer import SessionWriter
from tests.conftest import assert_one_line_error, run_cli


def _dead_pid() -> int:
    import os

    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


def _half_created(db, n_stored: int) -> str:
    """A run session as a crash between the row and its benchmarks left it: two benchmarks
    planned, ``n_stored`` stored, status running, its owner dead."""
    plan = RunPlan(benchmarks=[BenchmarkSpec("true", "true"), BenchmarkSpec("false", "false")],
                   runs=2, warmup=0, min_runs=1, cwd="/tmp")
    with Store.open(db) as store:
        writer = SessionWriter.create(store, "run", name="half", protocol=plan.to_dict(),
                                      environment=None, command_line=["benchlab", "run"])
        for pos in range(n_stored):
            writer.add_benchmark(plan.benchmarks[pos].name, position=pos,
                                 command=plan.benchmarks[pos].command)
        store.conn.execute("UPDATE sessions SET owner_pid = ?, owner_start = NULL WHERE id = ?",
                           (_dead_pid(), writer.ref.id))
        store.conn.commit()
        return writer.ref.uid


@pytest.mark.parametrize("n_stored", [0, 1])
def test_resume_of_a_half_created_session_is_one_line(tmp_path, n_stored):
    db = tmp_path / "h.db"
    uid = _half_created(db, n_stored)
    proc = run_cli("run", "--resume", uid, db=db)
    assert_one_line_error(proc, "being created", "run its command again")
    with Store.open(db, readonly=True) as store:
        assert store.runs(session_id=store.get_session(uid)["id"]) == []


@pytest.mark.parametrize("failure", [KeyboardInterrupt, RuntimeError])
def test_session_creation_is_one_transaction(tmp_path, failure):
    """Ctrl-C (or any failure) after the session row, before its benchmarks: nothing is left
    (it was a 'crashed' session without benchmarks that --resume could not continue)."""
    from benchlab.core.session import create_session

    plan = RunPlan(benchmarks=[BenchmarkSpec("true", "true")], runs=2, warmup=0, min_runs=1,
                   cwd="/tmp")

    def setup():
        raise failure("between the row and the benchmarks")

    with Store.open(tmp_path / "t.db") as store:
        with pytest.raises(failure):
            create_session(store, plan, setup=lambda: setup(), environment={"x": 1})
        assert store.sessions() == []
        assert store.conn.execute("SELECT COUNT(*) FROM benchmarks").fetchone()[0] == 0
        writer = create_session(store, plan, setup=lambda: None, environment={"x": 1})
        assert [b["name"] for b in store.benchmarks(writer.ref.id)] == ["true"]
