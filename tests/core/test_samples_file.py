"""``--samples-csv PATH``: benchlab removes the file before each run, so it refuses a path that
already holds a file (someone's data), and a run that leaves no file there fails in one line.
Real console script, real processes, real SQLite."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.errors import UserError
from benchlab.store import Store
from tests.conftest import assert_one_line_error, run_cli


def _sessions(db: Path) -> list[dict]:
    if not db.exists():
        return []
    with Store.open(db) as store:
        return store.sessions()


def test_an_existing_file_at_the_path_is_refused_and_kept(tmp_path):
    victim = tmp_path / "victim.csv"
    victim.write_text("a,1\nimportant,3\n")
    db = tmp_path / "b.db"
    proc = run_cli("run", "-q", "-r", "2", "true", "--samples-csv", str(victim), db=db,
                   cwd=tmp_path)
    assert_one_line_error(proc, "--samples-csv", "already exists", "move it away")
    assert victim.read_text() == "a,1\nimportant,3\n"
    assert _sessions(db) == []  # refused before the session: nothing stored


def test_a_symbolic_link_at_the_path_is_refused_and_kept(tmp_path):
    target = tmp_path / "data.csv"
    target.write_text("keep\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    proc = run_cli("run", "-q", "-r", "1", "true", "--samples-csv", str(link),
                   db=tmp_path / "b.db")
    assert_one_line_error(proc, "already exists")
    assert link.is_symlink() and target.read_text() == "keep\n"


def test_a_run_that_writes_no_samples_file_fails_in_one_line(tmp_path):
    db = tmp_path / "b.db"
    out = tmp_path / "never.csv"
    proc = run_cli("run", "-q", "-r", "2", "true", "--samples-csv", str(out), db=db)
    assert_one_line_error(proc, "wrote no samples file", str(out))
    (session,) = _sessions(db)
    assert session["status"] == "failed"


def test_the_same_command_runs_again_its_samples_stored_and_the_path_freed(tmp_path):
    db = tmp_path / "b.db"
    out = tmp_path / "s.csv"
    command = f"printf 'lat,5\\nlat,6\\n' > {out}"
    for _ in range(2):
        run_cli("run", "-q", "-r", "2", command, "--samples-csv", str(out), db=db, check=True)
        assert not out.exists()  # stored, then removed: the next session may use the path
    with Store.open(db) as store:
        for session in store.sessions():
            for run in store.runs(session_id=session["id"], include_warmup=False):
                assert store.samples_of_run(run["id"])["lat"].tolist() == [5.0, 6.0]


def test_a_resumed_session_takes_the_file_its_interrupted_run_left(tmp_path):
    """Resuming, a file modified since the session began is the session's own; an older one is
    someone's."""
    out = tmp_path / "s.csv"
    out.write_text("lat,1\n")
    plan = RunPlan(benchmarks=[BenchmarkSpec("t", "true")], samples_csv=str(out))
    plan.validate(None, own_since=time.time() - 60)
    with pytest.raises(UserError, match="already exists"):
        plan.validate(None, own_since=time.time() + 60)
    with pytest.raises(UserError, match="already exists"):
        plan.validate(None)
    assert out.read_text() == "lat,1\n"
    os.unlink(out)
    plan.validate(None)
