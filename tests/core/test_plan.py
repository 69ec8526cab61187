"""The run plan: plain data that survives JSON, and every bad value refused before a session."""

from __future__ import annotations

import json
import math
import os

import pytest

from benchlab.core.parameters import scan_values
from benchlab.core.plan import BenchmarkSpec, MetricSpec, Placement, RunPlan, parse_memory
from benchlab.core.planner import RunPlanner
from benchlab.errors import UserError
from benchlab.store import Store


def _plan(**kwargs) -> RunPlan:
    kwargs.setdefault("benchmarks", [BenchmarkSpec("t", "true")])
    return RunPlan(**kwargs)


def test_a_full_plan_survives_a_json_round_trip_unchanged():
    plan = RunPlan(
        benchmarks=[BenchmarkSpec("a", "sleep 0.01", {"n": "1"}, prepare="sync", setup="echo s",
                                  cleanup="echo c"),
                    BenchmarkSpec("b", "true")],
        runs=None, warmup=2, min_runs=4, max_runs=40, min_time_s=0.5, max_time_s=60.0,
        order="sequential", seed=17, timeout_s=2.5, ignore_failure=True, shell="/bin/sh",
        metrics=[MetricSpec("lat", r"took (\d+) ns", "ns")], samples_csv="/tmp/x-{worker}.csv",
        cwd="/tmp", placement=Placement(affinity="cores-rr:0,1", workers=2, isolation="cgroup",
                                        cpu_quota_us=50_000, cpu_period_us=100_000,
                                        cpu_weight=100, cpuset="0-1",
                                        memory_limit_bytes=1 << 30, load="cpu:1",
                                        perf_events="cycles", worker_label="w0", host="h1"),
        until_decided={"alpha": 0.01, "looks": [20]}, planned_runs={"a": 12})
    text = json.dumps(plan.to_dict())  # nothing in it may be a live object
    back = RunPlan.from_dict(json.loads(text))
    assert back == plan
    assert back.to_dict() == plan.to_dict()


def test_a_plan_stored_before_the_core_is_read_with_its_hooks_and_control():
    old = {"benchmarks": [{"name": "a", "command": "true", "parameters": {}},
                          {"name": "b", "command": "false", "parameters": {}}],
           "runs": 3, "prepare": ["p1", "p2"], "setup": ["s"], "cleanup": [],
           "control": {"affinity": "core:0", "workers": 1, "cpu_quota_us": 20000},
           "metrics": [{"name": "m", "regex": "(\\d+)", "unit": None}]}
    plan = RunPlan.from_dict(old)
    assert [b.prepare for b in plan.benchmarks] == ["p1", "p2"]
    assert [b.setup for b in plan.benchmarks] == ["s", "s"]
    assert [b.cleanup for b in plan.benchmarks] == [None, None]
    assert plan.placement.affinity == "core:0" and plan.placement.cpu_quota_us == 20000


@pytest.mark.parametrize("kwargs,needle", [
    ({"timeout_s": math.nan}, "--timeout"),
    ({"timeout_s": math.inf}, "--timeout"),
    ({"timeout_s": -1.0}, "--timeout"),
    ({"timeout_s": 0.0}, "positive"),
    ({"timeout_s": 1e12}, "more than a year"),
    ({"runs": 10**23}, "--runs"),
    ({"runs": 1e23}, "--runs"),
    ({"runs": 0}, "--runs"),
    ({"runs": 2.5}, "whole number"),
    ({"warmup": -1}, "--warmup"),
    ({"min_runs": math.nan}, "--min-runs"),
    ({"max_runs": 1, "min_runs": 5}, "--max-runs"),
    ({"min_time_s": math.inf}, "--min-time"),
    ({"min_time_s": -0.5}, "--min-time"),
    ({"max_time_s": math.nan}, "--max-time"),
    ({"order": "random"}, "--order"),
    ({"seed": -3}, "--seed"),
    ({"benchmarks": [BenchmarkSpec("x", "no-such-program-xyz")]}, "not found"),
    ({"benchmarks": [BenchmarkSpec("x", "./no/such/file")]}, "does not exist"),
    ({"benchmarks": [BenchmarkSpec("x", "/")]}, "not an executable"),
    ({"benchmarks": [BenchmarkSpec("x", "true"), BenchmarkSpec("x", "false")]}, "repeat"),
    ({"benchmarks": []}, "no command"),
    ({"shell": "/no/such/shell"}, "does not exist"),
    ({"placement": Placement(workers=0)}, "--workers"),
    ({"placement": Placement(cpu_quota_us=math.inf)}, "--cpu-quota"),
    ({"placement": Placement(cpu_period_us=100_000)}, "needs --cpu-quota"),
    ({"placement": Placement(memory_limit_bytes=10**30)}, "--memory-limit"),
    ({"placement": Placement(smt="sideways")}, "--smt"),
    ({"samples_csv": "/tmp/s.csv", "placement": Placement(workers=2)}, "{worker}"),
    ({"until_decided": {"alpha": 0.01}}, "exactly two"),
    ({"until_decided": {"alpha": 0.01}, "placement": Placement(workers=2),
      "benchmarks": [BenchmarkSpec("a", "true"), BenchmarkSpec("b", "true")]}, "--workers"),
])
def test_bad_values_are_one_line_user_errors(kwargs, needle):
    with pytest.raises(UserError) as info:
        _plan(**kwargs).validate()
    message = str(info.value)
    assert "\n" not in message and needle.lower() in message.lower(), message


@pytest.mark.parametrize("regex,needle", [("(a)(b)", "exactly one"), ("no group", "exactly one"),
                                          ("(unclosed", "not a valid regular expression")])
def test_metric_regexes_need_exactly_one_group_even_from_a_stored_plan(regex, needle):
    stored = _plan().to_dict()
    stored["metrics"] = [{"name": "x", "regex": regex, "unit": "ns"}]
    with pytest.raises(UserError, match=needle):
        RunPlan.from_dict(stored)


def test_a_plain_file_is_not_an_executable(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("not a program")
    data.chmod(0o644)
    with pytest.raises(UserError, match="not an executable"):
        _plan(benchmarks=[BenchmarkSpec("x", str(data))]).validate()


@pytest.mark.parametrize("text", ["1e26G", "inf", "nan", "-infM", "1e400", "2000000T"])
def test_memory_sizes_that_are_not_finite_or_absurd_are_refused(text):
    with pytest.raises(UserError, match="--memory-limit"):
        parse_memory(text)


def test_memory_sizes_in_range_are_bytes():
    assert parse_memory("512M") == 512 * 1024 ** 2
    assert parse_memory("2GiB") == 2 * 1024 ** 3


@pytest.mark.parametrize("args", [("n", "1", "inf", None), ("n", "nan", "3", None),
                                  ("n", "1", "3", "nan")])
def test_parameter_scans_refuse_non_finite_bounds(args):
    with pytest.raises(UserError, match="parameter"):
        scan_values(*args)


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_samples_csv_that_is_the_store_or_its_wal_is_refused(tmp_path, suffix):
    db = tmp_path / "x.db"
    with Store.open(db) as store:
        plan = _plan(samples_csv=str(db) + suffix)
        with pytest.raises(UserError, match="is the store"):
            plan.validate(store)
        link = tmp_path / "alias.csv"
        os.symlink(db, link)
        with pytest.raises(UserError, match="is the store"):
            _plan(samples_csv=str(link)).validate(store)
        _plan(samples_csv=str(tmp_path / "ok.csv")).validate(store)  # another file is fine
    assert db.stat().st_size > 0


def test_planner_interleaves_rounds_and_resumes_from_stored_counts():
    plan = _plan(benchmarks=[BenchmarkSpec("a", "true"), BenchmarkSpec("b", "true")], runs=4,
                 warmup=1, seed=5)
    planner = RunPlanner(plan, [0, 0], [0, 0])
    order = []
    while (run := planner.next()) is not None:
        order.append((run.benchmark, run.warmup))
        planner.record(run, 0.001)
    assert order[:2] == [(0, True), (1, True)]
    measured = [b for b, w in order if not w]
    assert len(measured) == 8
    for k in range(0, 8, 2):  # every round has each benchmark once
        assert sorted(measured[k:k + 2]) == [0, 1]
    resumed = RunPlanner(plan, [1, 1], [3, 2])
    rest = []
    while (run := resumed.next()) is not None:
        rest.append(run.benchmark)
        resumed.record(run, 0.001)
    assert sorted(rest) == [0, 1, 1]
