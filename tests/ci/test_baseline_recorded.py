"""The gate against a stored baseline, judged on recorded CPU times (load-independent).

``tests/ci/recorded/baseline_cpu.json`` holds the CPU times of real runs of docs/ci.md's
baseline workflow (``test_docs_ci.py::test_the_baseline_travels_in_a_sqlite_file``): three
sessions recorded on main, an A/A gate, and a pull request doing 30 % more work. They are
replayed into a real SQLite store through the core's executor seam (the scripted runner: the
judgement is the point, not the process) and gated as ``benchlab gate --baseline branch:main
--metric cpu`` gates them, so the 30 % claim of the workflow is checked whatever the machine
is doing now. The end-to-end test runs the same commands on a much larger regression, because
a stored baseline is not paired: a load that comes and goes during one session makes its runs
drift, and the rule then (rightly) widens its interval, as the 'drift' record shows.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchlab.ci import baseline as bl
from benchlab.ci.gate import EQUIVALENT, FASTER, SLOWER, UNDECIDED
from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner

RECORDED = json.loads((Path(__file__).parent / "recorded" / "baseline_cpu.json").read_text())


def _session(store: Store, cpu_us: list[int], branch: str | None = None) -> dict:
    """One stored session of benchmark ``work`` whose runs took ``cpu_us`` (us of CPU, in run
    order), recorded as ``branch``'s baseline when given (as ``gate --record`` does)."""
    # the scripted runner reports half the wall time as user time, no system time
    runner = ScriptedRunner(wall_ns=lambda bench, i: 2_000 * cpu_us[i])
    plan = RunPlan(benchmarks=[BenchmarkSpec("work", "true")], runs=len(cpu_us),
                   warmup=0, min_runs=1, cwd="/tmp", seed=1)
    uid = execute(plan, store, Here(runner)).session.uid
    session = store.get_session(uid)
    if branch:
        store.update_session(session["id"], metadata={"gate": {"branch": branch}})
    return store.get_session(uid)


def _gate(tmp_path: Path, record: dict) -> dict:
    """The decisions of the A/A and the 30 % pull request against branch:main, by name."""
    with Store.open(tmp_path / "b.db") as store:
        for values in record["main"]:
            _session(store, values, branch="main")
        base = bl.find_baseline(store, "branch:main")
        out = {}
        for name in ("a_a", "pr"):
            cand = _session(store, record[name])
            assert list(bl.values_of(store, cand["id"], "work", "cpu")) == \
                [1000.0 * v for v in record[name]], "the replay stores the recorded CPU times"
            [decision], notes = bl.gate_against(store, base, cand, {}, {"work": ["cpu"]},
                                                alpha=0.01)
            assert "learned from 3 sessions" in notes[-1], notes
            out[name] = decision
        return out


def test_recorded_quiet_sessions_fail_30_percent_and_pass_a_a(tmp_path):
    decisions = _gate(tmp_path, RECORDED["quiet"])
    pr, a_a = decisions["pr"], decisions["a_a"]
    assert pr.outcome == SLOWER and 1.1 < pr.low and 1.2 < pr.ratio < 1.3, pr
    assert a_a.outcome in (EQUIVALENT, UNDECIDED) and a_a.low < 1.0 < a_a.high * 1.02, a_a


def test_recorded_drifting_sessions_never_call_the_wrong_direction(tmp_path):
    """Runs that drift as a load comes and goes: the 30 % pull request keeps the quiet
    estimate but a wider interval (the rule widens it for the drift), and is called slower or
    left undecided, never equivalent or faster; the A/A is not called a regression.

    Since 34bd276 (Bartlett's degrees of freedom from the AR(1) factor, no longer counted twice)
    the recorded drift reads 1.25 [1.029, 1.525], 'slower': the right direction, decided. It
    read 'undecided' before; either is honest here, a wrong direction is not."""
    (tmp_path / "quiet").mkdir()
    pr_quiet = _gate(tmp_path / "quiet", RECORDED["quiet"])["pr"]
    decisions = _gate(tmp_path, RECORDED["drift"])
    pr, a_a = decisions["pr"], decisions["a_a"]
    assert pr.outcome in (UNDECIDED, SLOWER) and pr.low < 1.2 < pr.ratio < 1.35 < pr.high, pr
    assert (pr.outcome == SLOWER) == (pr.low > 1.02), pr  # the call follows its own interval
    assert pr.high - pr.low > 1.5 * (pr_quiet.high - pr_quiet.low), (pr, pr_quiet)
    assert a_a.outcome not in (SLOWER, FASTER), a_a

