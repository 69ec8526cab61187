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
