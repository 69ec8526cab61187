"""``benchlab gate``: a fresh run against a baseline recorded for a branch, on instruction
counts (exact, so the verdicts do not depend on how busy the machine is)."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from tests.ci.conftest import WORK_C
from tests.ci.test_gate import validate_gate_json
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, require_tool
from tests.core.scripted import ScriptedRunner

pytestmark = pytest.mark.slow

# two counted runs each: a deterministic program's count does not vary, and two equal values a
# side are what decide() takes as exact (the ratio with a zero-width interval; one value a side
# shows no spread, so it never decides); the outcomes checked here do not depend on more; each
# counted run is a cachegrind run of ~0.3 s of CPU
GATE = ["-q", "-r", "2", "-w", "0", "--metric", "instructions"]


@pytest.fixture
def programs(tmp_path):
    require_tool("valgrind")
    src = tmp_path / "work.c"
    src.write_text(WORK_C)
    for extra in (0, 300):
        subprocess.run(["cc", "-O2", f"-DEXTRA={extra}", "-o", str(tmp_path / f"w{extra}"),
                        str(src)], check=True)
    return tmp_path


def _gate(cwd, db, *args):
    return run_cli("gate", "--db", str(db), *GATE, *args, cwd=cwd, timeout=120)


def test_record_then_gate_against_the_branch(programs, tmp_path):
    db = tmp_path / "g.db"
    for _ in range(2):
        rec = _gate(programs, db, "--record", "main", "-n", "work", "./w0 20000")
        assert rec.returncode == 0, rec.stderr
    slow = _gate(programs, db, "--baseline", "branch:main", "-n", "work", "./w300 20000",
                 "--json", "-")
    assert slow.returncode == 1, slow.stderr
    doc = json.loads(slow.stdout)
    validate_gate_json(doc)
    assert doc["kind"] == "gate" and doc["benchmarks"][0]["outcome"] == "slower"
    same = _gate(programs, db, "--baseline", "branch:main", "-n", "work", "./w0 20000",
                 "--json", "-")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["benchmarks"][0]["outcome"] == "equivalent"
    # a stored session gated as the candidate: the slow run against the newest baseline
    again = _gate(programs, db, "--baseline", "branch:main", "--candidate", doc["session"])
    assert again.returncode == 1


def test_another_machine_is_refused_in_one_line_unless_forced(tmp_path):
    """A second machine cannot be had here: the baseline's stored CPU model is changed. Both
    sessions are made through the core with a scripted runner (no process: the refusal is the
    point), then gated by the CLI as stored sessions (--candidate)."""
    db = tmp_path / "g.db"
    plan = RunPlan(benchmarks=[BenchmarkSpec("work", "true")], runs=20, warmup=0, min_runs=1,
                   cwd="/tmp", seed=1)
    with Store.open(db) as store:
        uids = [execute(plan, store, Here(ScriptedRunner())).session.uid for _ in range(2)]
        full = store.get_session(uids[0])
        env = full["environment"]
        env["cpu"]["model"] = "Some Other CPU 9000"
        store.update_session(full["id"], environment=env)
    base = ["gate", "--db", str(db), "-q", "--baseline", uids[0], "--candidate", uids[1]]
    res = subprocess.run([BENCHLAB, *base], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "another machine" in lines[0] and "Some Other CPU" in lines[0]
    forced = subprocess.run([BENCHLAB, *base, "--force"], capture_output=True, text=True,
                            timeout=60)
    assert forced.returncode == 0, forced.stderr


def test_bad_baselines_are_one_line(programs, tmp_path):
    db = tmp_path / "g.db"
    for args, words in ((["--baseline", "branch:nope", "./w0 10"], "no baseline of branch"),
                        (["./w0 10"], "--baseline"),
                        (["--baseline", "nosuchsession", "./w0 10"], "nosuchsession")):
        res = _gate(programs, db, *args)
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert words in res.stderr
