"""The ``ab`` job's pairing, stopping and storing through the core's Runner seam with a scripted
runner (tests/core/scripted.py: no process), into a real SQLite store. Real builds and
processes are covered end to end by test_ab.py and test_docs_ci.py."""

from __future__ import annotations

import zlib

import numpy as np

from benchlab.ci.ab import AbBenchmark, AbOptions, run_ab
from benchlab.ci.revisions import Revision
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner


def _rev(label: str) -> Revision:
    return Revision(label=label, requested=label, commit=label * 8, subject=label, dirty=False,
                    root="/bin", build_command=None)


def _walls(ratio: float, noise: float = 0.01):
    """Wall ns by (benchmark index, iteration): head (odd index) ``ratio`` times base, each run
    with its own reproducible noise and a machine offset shared by the pair."""
    def wall(index: int, iteration: int) -> int:
        own = np.random.default_rng(zlib.crc32(f"{index}/{iteration}".encode())).normal()
        shared = np.random.default_rng(iteration).normal()
        scale = ratio if index % 2 else 1.0
        return int(1e7 * scale * np.exp(noise * own + 0.2 * shared))
    return wall


def _ab(db_path, runner, *benches, **opts):
    options = AbOptions(**{"warmup": 1, "min_pairs": 10, "look_every": 5, "max_time_s": 60.0,
                           "max_pairs": 400, **opts})
    with Store.open(db_path) as store:
        result = run_ab(store, list(benches) or [AbBenchmark("b", "{root}/true")],
                        _rev("base"), _rev("head"), options, repo="(test)", runner=runner)
        runs = store.runs(session_id=store.get_session(result.session.uid)["id"])
        status = store.get_session(result.session.uid)["status"]
    return result, runs, status


def test_pairs_in_random_order_after_warmups_stop_when_a_regression_is_decided(db_path):
    runner = ScriptedRunner(wall_ns=_walls(1.10))
    result, runs, status = _ab(db_path, runner)
    [d] = result.decisions
    assert d.outcome == "slower" and d.regression and 1.08 < d.ratio < 1.12
    log = [e for e in runner.log if e[0] == "run"]
    assert [e[2] for e in log[:2]] == [True, True] and not any(e[2] for e in log[2:])
    pairs = [tuple(e[1] for e in log[i:i + 2]) for i in range(2, len(log), 2)]
    assert set(pairs) == {(0, 1), (1, 0)}, "the order within pairs is not randomized"
    assert len(pairs) == result.pairs["b"] and result.pairs["b"] % 5 == 0  # stopped at a look
    assert result.pairs["b"] < 400  # decided early, not at the budget
    assert len(runs) == len(log) and status == "complete"


def test_a_a_is_equivalent_and_the_order_is_the_seed_s(db_path, tmp_path):
    a = ScriptedRunner(wall_ns=_walls(1.0, noise=0.002))
    result, _, _ = _ab(db_path, a, seed=3)
    assert [d.outcome for d in result.decisions] == ["equivalent"]
    b = ScriptedRunner(wall_ns=_walls(1.0, noise=0.002))
    _ab(tmp_path / "other.db", b, seed=3)
    assert a.log == b.log


def test_the_budget_ends_an_undecided_benchmark_and_the_next_one_runs(db_path):
    runner = ScriptedRunner(wall_ns=_walls(1.02, noise=0.05))
    result, _, _ = _ab(db_path, runner, AbBenchmark("u", "{root}/true", thresholds={"wall": 0.02}),
                       AbBenchmark("v", "{root}/true"), max_pairs=30)
    assert result.pairs == {"u": 30, "v": result.pairs["v"]} and result.decisions[0].outcome \
        == "undecided"
    assert {e[1] for e in runner.log if e[0] == "run"} == {0, 1, 2, 3}


def test_a_failing_run_ends_the_job_with_one_line_and_a_failed_session(db_path):
    runner = ScriptedRunner(fail=lambda b, i: 3 if (b, i) == (1, 4) else None)
    result, runs, status = _ab(db_path, runner)
    assert result.failure and "b@head" in result.failure and "exited with code 3" in result.failure
    assert status == "failed" and len(runs) == len([e for e in runner.log if e[0] == "run"])


def test_instructions_are_counted_through_the_runner_and_gated(db_path):
    runner = ScriptedRunner(counts=lambda index: 1_000_000.0 * (1.001 if index % 2 else 1.0))
    bench = AbBenchmark("c", "{root}/true", thresholds={"instructions": 0.0005},
                        metrics=["instructions"])
    result, _, _ = _ab(db_path, runner, bench, count_runs=2)
    [d] = [d for d in result.decisions if d.metric == "instructions"]
    assert d.outcome == "slower" and abs(d.ratio - 1.001) < 1e-9
    assert [e for e in runner.log if e[0] == "count"] == [("count", 0), ("count", 1)] * 2


def test_the_gate_decides_on_the_values_the_store_holds(db_path):
    """The job keeps each run's timed values as it stores them (reading every run back at every
    look grew quadratically): a decision made again from the store with the last look's
    critical value is the job's, number for number, wall and CPU time alike."""
    from benchlab.ci.gate import decide

    runner = ScriptedRunner(wall_ns=_walls(1.004, noise=0.01))
    bench = AbBenchmark("k", "{root}/true", thresholds={"wall": 0.01, "cpu": 0.01},
                        metrics=["wall", "cpu"])
    with Store.open(db_path) as store:
        result = run_ab(store, [bench], _rev("base"), _rev("head"),
                        AbOptions(warmup=1, min_pairs=10, look_every=5, max_pairs=300),
                        repo="(test)", runner=runner)
        base, head = store.benchmarks(store.get_session(result.session.uid)["id"])
        critical = result.looks["k"][-1]["critical"]
        for made in result.decisions:
            again = decide(store.harness_values(base["id"], made.metric)[0],
                           store.harness_values(head["id"], made.metric)[0], benchmark="k",
                           metric=made.metric, threshold=0.01, critical=critical, paired=True,
                           alpha=0.005)  # the job's alpha, shared by wall and CPU time
            assert again == made
    assert {d.metric for d in result.decisions} == {"wall", "cpu"}


def test_looks_thin_out_as_pairs_grow_and_the_last_spends_the_budget(db_path):
    """Every ``look_every`` pairs at first, then only after 2 % more pairs; the share of the
    budget each look has spent grows, and the look at the end of the budget spends all of it."""
    runner = ScriptedRunner(wall_ns=_walls(1.0, noise=0.05))
    result, _, _ = _ab(db_path, runner, AbBenchmark("u", "{root}/true",
                                                    thresholds={"wall": 0.001}),
                       max_pairs=2000)
    looks = result.looks["u"]
    pairs = [lk["pairs"] for lk in looks]
    assert pairs[:3] == [10, 15, 20] and all(p % 5 == 0 for p in pairs)
    late = [(a, b) for a, b in zip(pairs, pairs[1:-1]) if a >= 500]  # the budget's end aside
    assert late and all(b >= 1.02 * a for a, b in late)
    assert len(pairs) < 2000 / 5 / 2  # far fewer than a look every 5 pairs
    spent = [lk["spent"] for lk in looks]
    assert spent == sorted(spent) and spent[-1] == 1.0 and looks[-1]["final"]
    assert result.pairs["u"] == 2000 and result.decisions[0].outcome == "undecided"
