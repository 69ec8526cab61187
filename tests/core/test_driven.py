"""Caller-driven sessions (machine profiles): placed, spawned and stored by the core."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import tempfile
import time

import pytest

from benchlab.core.driven import DrivenSession
from benchlab.core.plan import Placement
from benchlab.errors import UserError
from benchlab.store import Store
from tests.conftest import BENCHLAB, require_tool


def _start(store, placement=None, **kwargs):
    return DrivenSession.start(
        store, placement or Placement(), kind="profile", name="here",
        benchmarks=[{"name": "t", "argv": ["/bin/true"], "parameters": {"kind": "x"}}],
        metrics=[{"name": "rate", "unit": "ops/s", "origin": "test"}], environment={},
        metadata={"note": 1}, **kwargs)


def test_runs_are_executed_and_stored_and_the_scratch_goes_away(tmp_path):
    with Store.open(tmp_path / "d.db") as store:
        session = _start(store)
        scratch = session.scratch
        try:
            for i in range(3):
                out = os.path.join(session.scratch, "out")
                m, usage = session.execute(["/bin/sh", "-c", "echo 42"], stdout_path=out,
                                           stderr_path=out, timeout_s=10)
                assert m.status == "ok" and m.wall_ns > 0 and usage is None
                with open(out) as fh:
                    assert fh.read().strip() == "42"
                session.record("t", i, {"status": "ok", "wall_ns": m.wall_ns}, {"rate": [42.0]})
            session.finish("done", {"note": 2})
        finally:
            session.close()
        assert not os.path.exists(scratch)
        sess = store.get_session(session.ref.uid)
        assert sess["kind"] == "profile" and sess["status"] == "complete"
        assert sess["metadata"] == {"note": 2}
        assert len(store.runs(session_id=sess["id"])) == 3
        bench = store.benchmarks(sess["id"])[0]
        assert list(store.sample_values(bench["id"], "rate")[0]) == [42.0] * 3


def test_a_session_closed_without_finishing_is_failed_never_running(tmp_path):
    with Store.open(tmp_path / "d.db") as store:
        session = _start(store)
        session.close()
        assert store.get_session(session.ref.uid)["status"] == "failed"


def test_without_a_store_runs_still_execute_and_nothing_is_written(tmp_path):
    session = _start(None)
    try:
        m, _ = session.execute(["/bin/true"], stdout_path=None, stderr_path=None, timeout_s=5)
        assert m.status == "ok"
        session.record("t", 0, {"status": "ok"})
        session.finish("done")
    finally:
        session.close()
    assert session.ref is None


def test_a_placement_this_machine_cannot_have_is_refused_before_any_session(tmp_path):
    with Store.open(tmp_path / "d.db") as store:
        with pytest.raises(UserError, match="CPU"):
            _start(store, Placement(affinity="core:4096"))
        assert store.sessions() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="cgroup accounting needs root")
def test_a_cgroup_placement_gives_the_runs_cpu_accounting(tmp_path):
    session = _start(None, Placement(isolation="cgroup", allow_unconstrained=True))
    try:
        m, usage = session.execute(["/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do "
                                    "i=$((i+1)); done"], stdout_path=None, stderr_path=None,
                                   timeout_s=30)
    finally:
        session.close()
    assert m.status == "ok"
    if not session.execution.use_cgroup:
        pytest.skip(f"no cgroup here: {session.execution.unconstrained_reason}")
    assert usage is not None and usage["cpu_time_ns"] > 0


def test_sigterm_interrupts_a_profile_and_leaves_nothing_running(tmp_path):
    """`benchlab profile` with stress-ng (skipped where stress-ng is not installed)."""
    from benchlab.machines import stressng

    require_tool("stress-ng")
    stressng.find_stress_ng()
    db = tmp_path / "p.db"
    proc = subprocess.Popen([BENCHLAB, "profile", "--methods", "int64", "--repeat", "6",
                             "--duration", "1", "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            with Store.open(db, readonly=True) as store:
                if sum(s["n_runs"] for s in store.sessions()) >= 1:
                    break
        except Exception:
            continue
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "interrupted" in err
    with Store.open(db) as store:
        (sess,) = store.sessions()
        assert sess["status"] == "interrupted" and sess["n_runs"] >= 1
    assert not glob.glob(f"{tempfile.gettempdir()}/benchlab-*-p{proc.pid}-*")
