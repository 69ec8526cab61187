"""History alerts a team can trust: change points of the session medians, not consecutive
run-level tests; ``--fail-on-regression`` for nightly jobs. Stores are real SQLite files with
sessions built from recorded-like numbers (the statistics are the point, not the processes)."""

from __future__ import annotations

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.stats.changepoint import change_points
from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.report.storebuild import add_session, environment


def _store(path, levels, runs=30, cv=0.02, seed=1):
    rng = np.random.default_rng(seed)
    with Store.open(path) as store:
        for i, level in enumerate(levels):
            env = environment(**{"git.commit": f"{i:02x}" * 20})
            add_session(store, {"parse": 1e7 * level * rng.lognormal(0, cv, runs)},
                        name=f"nightly-{i}", env=env)


def test_session_offsets_are_not_steps_but_a_5_percent_step_is():
    rng = np.random.default_rng(5)
    offsets = np.exp(rng.normal(0, 0.01, 30))  # 1 % session-to-session offsets, no change
    assert change_points(offsets) == []
    stepped = offsets * np.where(np.arange(30) >= 18, 1.05, 1.0)
    [cp] = change_points(stepped)
    assert cp.index == 18 and cp.regression and cp.ratio_low < 1.05 < cp.ratio_high
    improved = offsets * np.where(np.arange(30) >= 10, 0.95, 1.0)
    assert [c.regression for c in change_points(improved)] == [False]


def test_change_points_are_deterministic_and_refuse_bad_series():
    series = np.r_[np.ones(10), 1.1 * np.ones(10)] * np.exp(np.random.default_rng(1)
                                                             .normal(0, 0.003, 20))
    assert change_points(series) == change_points(series)
    for bad in ([1.0, float("nan"), 1.0], [1.0, -1.0, 2.0], [[1.0, 2.0]]):
        with pytest.raises(UserError):
            change_points(bad)
    assert change_points([1.0] * 12) == []  # constant: no step, no error


def test_history_fails_a_nightly_job_while_the_newest_step_is_a_regression(tmp_path):
    db = tmp_path / "h.db"
    offsets = np.exp(np.random.default_rng(2).normal(0, 0.007, 20))
    _store(db, offsets * np.where(np.arange(20) >= 12, 1.05, 1.0))
    plain = run_cli("history", "parse", db=db)
    assert plain.returncode == 0 and "1 step found" in plain.stdout
    nightly = run_cli("history", "parse", "--fail-on-regression", db=db)
    assert nightly.returncode == 1
    assert "regression since session" in nightly.stderr
    quiet = tmp_path / "q.db"
    _store(quiet, offsets)  # the same offsets, no change: no alarm
    ok = run_cli("history", "parse", "--fail-on-regression", db=quiet)
    assert ok.returncode == 0 and "0 steps found" in ok.stdout


SPEED = "speed:MB/s=codec (\\d+\\.\\d+) MB/s"


def _throughput_history(tmp_path, levels, seed=3):
    """One imported session per level of a program's printed MB/s (5 outputs each, 0.3 % noise),
    oldest first, through ``import --format metric`` as a CI job would keep them."""
    rng = np.random.default_rng(seed)
    db = tmp_path / "speed.db"
    for i, level in enumerate(levels):
        outputs = tmp_path / f"night{i}" / "codec"
        outputs.mkdir(parents=True)
        for k, v in enumerate(level * 100 * rng.lognormal(0, 0.003, 5)):
            (outputs / f"run{k}.txt").write_text(f"codec {v:.3f} MB/s\n")
        res = run_cli("import", str(outputs), "--format", "metric", "--metric", SPEED, db=db)
        assert res.returncode == 0, res.stderr
    return db


def test_a_throughput_that_falls_is_the_regression(tmp_path):
    """MB/s is higher-is-better (from its unit, as the gate reads it): a 5 % fall in a history
    of a program's printed throughput is a regression and fails the nightly job; a 5 % rise is
    an improvement and does not. --metric takes run's NAME:UNIT=REGEX spelling."""
    offsets = np.exp(np.random.default_rng(4).normal(0, 0.004, 12))
    fell = _throughput_history(tmp_path / "fell", offsets * np.where(np.arange(12) >= 7, 0.95, 1))
    res = run_cli("history", "codec", "--metric", SPEED, "--fail-on-regression", db=fell)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 step found. Metric: speed (MB/s), higher is better" in res.stdout
    assert "regression since session" in res.stderr
    rose = _throughput_history(tmp_path / "rose", offsets * np.where(np.arange(12) >= 7, 1.05, 1))
    ok = run_cli("history", "codec", "--metric", "speed", "--fail-on-regression", db=rose)
    assert ok.returncode == 0 and "1 step found" in ok.stdout and "improvement" in ok.stdout
    # a metric stated lower-is-better turns the same rise into the regression
    flipped = run_cli("history", "codec", "--better", "speed=lower", "--fail-on-regression",
                      db=rose)
    assert flipped.returncode == 1, flipped.stdout
    for bad in (["--metric", "speed:ms=codec (\\d+) ms"], ["--better", "wall=higher"],
                ["--better", "speed=up"], ["--metric", "speed:MB/s=codec \\d+"]):
        refused = run_cli("history", "codec", *bad, db=rose)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, bad
        assert "Traceback" not in refused.stderr


GO_OUTPUT = """goos: linux
goarch: amd64
pkg: example.com/tiny
BenchmarkSum-2   \t  300000\t      {sum:.1f} ns/op\t       0 B/op\t       0 allocs/op
BenchmarkSum-2   \t  300000\t      {sum2:.1f} ns/op\t       0 B/op\t       0 allocs/op
BenchmarkProduct-2\t  300000\t      3500.0 ns/op\t       0 B/op\t       0 allocs/op
PASS
ok  \texample.com/tiny\t1.2s
"""


def test_history_of_a_harness_benchmark_reads_its_own_time(tmp_path):
    """Sessions of go test -bench output (imported as a CI job saves them) have no wall
    times: history defaults to the harness's time per operation, ns_per_op."""
    db = tmp_path / "go.db"
    for i, sum_ns in enumerate([3000.0, 3010.0, 2995.0]):
        out = tmp_path / f"bench{i}.txt"
        out.write_text(GO_OUTPUT.format(sum=sum_ns, sum2=sum_ns + 4))
        assert run_cli("import", str(out), "--format", "go", db=db).returncode == 0
    res = run_cli("history", "Sum", db=db)
    assert res.returncode == 0, res.stderr
    assert "Metric: ns_per_op (ns), lower is better" in res.stdout
    assert "3.0020 µs" in res.stdout  # the first session's median of its two values
    allocs = run_cli("history", "Sum", "--metric", "allocs_per_op", db=db)
    assert allocs.returncode == 0 and "Metric: allocs_per_op" in allocs.stdout
