"""bench/gate_quality.py's replays are the gate's rule: the one-metric replay on recorded looks,
and the A/A simulation's counting form of it, give the decisions ci.gate.decide gives."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np

from benchlab.ci.gate import Looks, decide

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gate_quality.py"


def _bench():
    spec = importlib.util.spec_from_file_location("gate_quality", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _looks(pairs: list[int], budget_pairs: int) -> list[dict]:
    """A recorded schedule: pairs, share of the budget (pairs kept pace), seconds, final."""
    return [{"pairs": p, "spent": min(p / budget_pairs, 1.0), "seconds": p / 100.0,
             "final": p >= budget_pairs} for p in pairs]


def test_the_a_a_simulation_counts_what_decide_decides():
    """Gates of Laplace differences at a true ratio of 1 and of 1 + threshold, on a schedule
    that crosses from the signed-rank interval to the sign test (3,000 pairs): the simulation's
    counts of regressions and equivalents equal decide()'s outcomes gate by gate."""
    gq = _bench()
    rng = np.random.default_rng(8)
    looks = _looks([20, 40, 80, 160, 320, 640, 1280, 2560, 3200, 3600], 3600)
    threshold = 0.005
    for shift in (0.0, math.log1p(threshold), 0.012):
        e = rng.laplace(0.0, 0.03, 3600)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(12, e.size))
        for row in signs:
            slower, equivalent = gq.aa_alarms(e, looks, threshold, shift, row[None, :], 0.01)
            d = row * e + shift
            replay = gq.one_metric(np.full(d.size, 1e7), 1e7 * np.exp(d), looks, "wall",
                                   threshold, 0.01)
            assert (slower, equivalent) == (int(replay["outcome"] == "slower"),
                                            int(replay["outcome"] == "equivalent")), replay


def test_the_one_metric_replay_decides_no_later_than_the_split_rule():
    """alpha unsplit gives a narrower interval at every look than alpha / 2, so a replay on the
    pairs a two-metric job measured is decided by the job's last look, never cut short."""
    gq = _bench()
    rng = np.random.default_rng(9)
    looks = _looks(list(range(20, 1001, 20)), 1000)
    for _ in range(20):
        d = rng.laplace(0.009, 0.03, 1000)
        base, head = np.full(d.size, 1e7), 1e7 * np.exp(d)
        split = Looks(alpha=0.005)
        stop = None
        for lk in looks:
            z = split.critical(lk["pairs"], lk["spent"])
            if decide(base[:lk["pairs"]], head[:lk["pairs"]], benchmark="g", metric="wall",
                      threshold=0.005, critical=z, paired=True).decided:
                stop = lk["pairs"]
                break
        one = gq.one_metric(base, head, looks, "wall", 0.005, 0.01)
        if stop is not None:
            assert one["outcome"] != "truncated" and one["pairs"] <= stop


def test_a_gate_decided_early_is_carried_on_to_its_budget():
    """The simulation's gates spend their whole error: a recorded gate that stopped at 10 s of
    30 gets looks at its pace up to a final one at 30 s, and as many differences as pairs."""
    gq = _bench()
    looks = [{"pairs": p, "spent": p / 3000, "seconds": p / 100, "final": False}
             for p in (20, 100, 500, 1000)]
    e = np.random.default_rng(10).laplace(0, 0.03, 1000)
    out, longer = gq.to_budget(looks, e, 30.0, np.random.default_rng(11))
    pairs = [lk["pairs"] for lk in out]
    assert pairs == sorted(set(pairs)) and out[-1]["final"] and out[-1]["spent"] == 1.0
    assert pairs[-1] == 3000 and longer.size == 3000 and np.array_equal(longer[:1000], e)
    spent = [lk["spent"] for lk in out]
    assert spent == sorted(spent) and all(s < 1.0 for s in spent[:-1])
    final = [{**looks[-1], "final": True}]
    assert gq.to_budget(final, e, 30.0, np.random.default_rng(11))[0] == final


def _boundary():
    path = BENCH.with_name("gate_boundary.py")
    spec = importlib.util.spec_from_file_location("gate_boundary", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_regression_call_is_the_exact_signed_rank_test_of_the_boundary():
    """bench/gate_boundary.py's process form counts Walsh averages at or below the boundary
    against the look's excluded count; decide() must call "slower" on exactly those draws
    (heavy-tailed and two-speed noise alike), so the process's rate is decide()'s."""
    from benchlab.stats import distributions as special
    from benchlab.stats.paired import excluded_averages

    gb = _boundary()
    rng = np.random.default_rng(11)
    threshold, seen = 0.02, {True: 0, False: 0}
    for noise in ("heavy", "two-speed", "iid"):
        for n, z in ((8, 1.5), (20, 1.0), (40, 2.0), (250, 1.0)):
            for _ in range(15):
                base, head = gb.draw(noise, rng, n)
                d = decide(base, head, benchmark="b", metric="wall", threshold=threshold,
                           critical=z, paired=True)
                x = np.log(head) - np.log(base) - math.log1p(threshold)
                ranks = np.abs(x).argsort().argsort() + 1
                below = int(np.where(x < 0, ranks, 0).sum())
                called = below <= excluded_averages(n, float(special.ndtr(-z)))
                assert (d.outcome == "slower") == called, (noise, n, z, d)
                seen[called] += 1
    assert min(seen.values()) > 5  # both sides of the boundary were exercised


def test_the_boundary_schedule_is_the_ab_clock():
    """Looks of ab's clock on a steady 200-pair budget from 10 pairs: every 10, the last at 200
    spending what is left (a critical value below the fixed-sample 2.58 is impossible)."""
    schedule = _boundary().look_schedule(10, 200)
    assert [n for n, _ in schedule] == list(range(10, 201, 10))
    criticals = [c for _, c in schedule]
    assert criticals == sorted(criticals, reverse=True) and 2.58 < criticals[-1] < 2.8


RECORDED_SUITE = Path(__file__).resolve().parent / "recorded" / "suite200_gbench.json"


def _family():
    path = BENCH.with_name("gate_quality_family.py")
    spec = importlib.util.spec_from_file_location("gate_quality_family", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suite_simulation_calls_what_decide_calls_on_recorded_noise():
    """A simulated A/A suite of 50 from the recorded 200-benchmark Google Benchmark run (50
    pairs, load 15): the counting form's regression calls at ab's looks are decide()'s,
    benchmark by benchmark, at a true ratio of 1 and of 1 + threshold; and over 40 suites the
    pooled false regressions at 1 + threshold stay near alpha / 2 per benchmark."""
    import json

    fam = _family()
    d = np.asarray(json.loads(RECORDED_SUITE.read_text())["d"])
    assert d.shape == (50, 200)
    schedule = _boundary().look_schedule(20, d.shape[0])
    rng = np.random.default_rng(12)
    boundary = math.log1p(fam.THRESHOLD)
    calls = 0
    for suite in range(40):
        noise = fam.suite_noise(d, 50, rng)
        for shift in (0.0, boundary):
            called = fam.false_regressions(noise + shift - boundary, schedule)
            calls += int(called.sum()) if shift else 0
            if suite >= 2:
                continue
            for j in range(50):
                base = np.full(d.shape[0], 1e6)
                head = base * np.exp(noise[:, j] + shift)
                outcomes = [decide(base[:n], head[:n], benchmark="b", metric="real_time",
                                   threshold=fam.THRESHOLD, critical=c, paired=True).outcome
                            for n, c in schedule]
                assert ("slower" in outcomes) == called[j], (suite, shift, j, outcomes)
    assert calls <= 20  # 2,000 benchmark draws at alpha / 2 = 0.5 %: about 10 expected
