"""A failed run is told from bad input by its type (``RunFailed``), not by its message: the
gate's fresh run exits 3 for a failing benchmark and 2 for bad input."""

from __future__ import annotations

import subprocess

import pytest

from benchlab.ci import baseline as bl
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.core.session_types import RunFailed
from benchlab.errors import UserError
from benchlab.store.db import Store
from tests.conftest import BENCHLAB


def test_a_failing_command_raises_run_failed_and_the_gate_reads_it_as_a_failure(tmp_path):
    plan = RunPlan(benchmarks=[BenchmarkSpec(name="f", command="false")], runs=2, warmup=0)
    with Store.open(tmp_path / "s.db") as store:
        from benchlab.core.execute import execute

        with pytest.raises(RunFailed, match="exited with code 1"):
            execute(plan, store)
        session, failure = bl.run_fresh(store, plan, argv=["benchlab"], name=None)
        assert session is None and "exited with code 1" in failure
        with pytest.raises(UserError) as bad:  # bad input is not a failed run
            bl.run_fresh(store, RunPlan(benchmarks=[], runs=2), argv=["benchlab"], name=None)
        assert not isinstance(bad.value, RunFailed)


def test_gate_exits_3_for_a_failing_benchmark_and_2_for_bad_input(tmp_path):
    env_db = ["--db", str(tmp_path / "g.db")]
    res = subprocess.run([BENCHLAB, "gate", "-q", *env_db, "-r", "3", "--record", "main",
                          "false"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 3, res.stderr
    assert "Traceback" not in res.stderr
    res = subprocess.run([BENCHLAB, "gate", "-q", *env_db, "-r", "0", "--record", "main",
                          "true"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
