"""The gate's false-regression rate at exactly 1 + threshold stays within alpha / 2: no look
decides before the signed-rank interval exists at that look's level."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np

from benchlab.ci.gate import DEFAULT_ALPHA, Looks, decide

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("gate_boundary", ROOT / "bench" /
                                                  "gate_boundary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_look_at_ten_pairs_cannot_call_a_regression():
    """ab's schedule with --min-pairs 10: the first look's critical value (|z| ~ 4.6 for 10 of
    200 pairs at alpha 0.01) is beyond any order statistic of 10 pairs' 55 Walsh averages.
    Before, the rank index was clamped to 0 and [min, max] used: ten pairs each a little above
    1.02 (probability 2^-10 at a true 1.02, against the ~2e-6 this look may spend) failed the
    job."""
    looks = Looks(alpha=DEFAULT_ALPHA)
    critical = looks.critical(10, 10 / 200)
    assert critical > 4
    base = np.full(10, 1e6)
    head = base * 1.02 * np.exp(np.linspace(0.001, 0.03, 10))
    d = decide(base, head, benchmark="b", metric="wall", threshold=0.02, critical=critical,
               paired=True)
    assert d.outcome == "undecided" and d.low == 0.0 and d.high == math.inf
    assert d.ratio > 1.02 and d.to_dict()["high"] is None


def test_a_later_look_with_enough_pairs_still_decides():
    looks = Looks(alpha=DEFAULT_ALPHA)
    for n in (10, 20, 30, 40):
        critical = looks.critical(n, n / 200)
    base = np.full(40, 1e6)
    head = base * 1.10 * np.exp(np.random.default_rng(1).normal(0, 0.01, 40))
    d = decide(base, head, benchmark="b", metric="wall", threshold=0.02, critical=critical,
               paired=True)
    assert d.outcome == "slower" and d.low > 1.02


def test_false_regressions_at_the_boundary_by_simulation():
    """ab's look schedule through decide() on three kinds of paired noise, true ratio exactly
    1.02, threshold 2 %, alpha 0.01: at most alpha / 2 = 0.5 % called slower. 200 benchmarks per
    noise here, to keep the test short (the bound is the 0.5 % rate's one-sided 99.6 % binomial
    limit, 4 of 200); bench/gate_boundary.py gives the figures with thousands per noise
    (docs/verdict.md)."""
    bench = _bench()
    for i, noise in enumerate(bench.NOISES):
        assert bench.false_regressions(noise, 200, seed=40 + i) <= 4, noise
