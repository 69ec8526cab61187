"""A verdict that does not contradict its own numbers at small n with autocorrelation.

The checklist CI at f1c9001 (load ~2) ran `benchlab run -N -r 10 --reference 'sleep 0.1'`
against a command of ~3.5 ms whose first run took 2.3x the median of the others and whose
later runs drifted down; the two commands' runs never overlap, 30x apart. The pooled lag-1
autocorrelation (0.50 over 20 runs) widened the interval to the cap (the runs "count as one")
and the Student t reference took Bartlett's degrees of freedom from that capped inflation
(1.96): "cannot tell new and old apart yet: ratio 0.0321, 95% CI [0.000991, 1.039]
(p = 0.051)". The degrees of freedom now come from the AR(1) factor itself
(:func:`benchlab.stats.verdict_pair.wald_df`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _verdict_coverage import PHIS, SIZES, coverage

from benchlab.report.verdict_text import verdict_lines
from benchlab.stats.distributions import stdtr, stdtrit
from benchlab.stats.verdict_model import verdict_model
from benchlab.stats.verdict_pair import wald_df

#: Wall times (ms), made to the CI log's summary (new: median 3.482, min 2.118, max 11.13,
#: first run 2.4x the median of the others; old: median 102.0, min 101.2, max 108.4), in run
#: order with the CI's pooled lag-1 of 0.50 and neither series beyond its own band.
RECORDED_MS = {
    "old": [108.4, 105.5, 103.0, 102.3, 102.1, 101.9, 101.6, 101.4, 101.3, 101.2],
    "new": [8.0, 11.13, 5.0, 6.6, 3.364, 3.6, 2.4, 2.75, 2.118, 2.2],
}

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "vectors" /
                      "verdict_df_vectors.json").read_text())["cases"]


def _recorded() -> dict[str, np.ndarray]:
    return {k: 1e6 * np.array(v) for k, v in RECORDED_MS.items()}


def test_recorded_thirty_fold_pair_with_a_slow_first_run_decides():
    """Before: undecided, ratio 0.0332, 95 % CI [0.00101, 1.095] (p = 0.052), as in the CI."""
    v = verdict_model(_recorded(), reference="old")
    # the series' own check now reads the bias-corrected lag-1 as the pooled one does, so each
    # series of 10 runs is flagged on its own: the warnings name them
    assert {(n.code, n.data["series"]) for n in v.notes} == {("autocorrelated", "new"),
                                                            ("autocorrelated", "old")}
    c = v.candidate("new")
    assert c.test == "inflated" and c.outcome == "faster"
    assert c.ratio == pytest.approx(3.482 / 102.0, rel=0.03)
    assert c.ratio_low < c.ratio < c.ratio_high < 0.5 and c.p_adjusted < 0.01
    widened = next(n for n in c.notes if n.code == "widened")
    assert widened.data["inflation"] == 10.0  # still counted as about one run each
    assert widened.data["df"] == pytest.approx(wald_df(10, 10, 10.0))
    text = "\n".join(verdict_lines(v))
    assert "new ran" in text and "faster than old" in text and "cannot tell" not in text
    assert "new's runs are autocorrelated" in text  # the dependence is still said, and used


def test_the_same_runs_two_percent_apart_stay_undecided():
    """The widening still works: the recorded drift on a 2 % difference holds 1."""
    new = _recorded()["new"]
    c = verdict_model({"old": new, "new": 1.02 * new}, reference="old").candidate("new")
    assert c.outcome == "undecided" and c.ratio_low < 1 < c.ratio_high


@pytest.mark.parametrize("case", VECTORS, ids=[f"{c['n_a']}-{c['n_b']}-{c['inflation']:.3g}"
                                                for c in VECTORS])
def test_wald_df_matches_scipy_root_finding(case):
    """tests/vectors/make_vectors_verdict_df.py: rho by brentq, Bartlett's information in rho,
    scipy.stats.t quantiles and p."""
    df = wald_df(case["n_a"], case["n_b"], case["inflation"])
    assert df == pytest.approx(case["df"], rel=1e-9)
    assert stdtrit(df, 0.975) == pytest.approx(case["t_975"], rel=1e-9)
    assert stdtrit(df, 0.9875) == pytest.approx(case["t_9875"], rel=1e-9)
    assert 2 * stdtr(df, -2.5) == pytest.approx(case["p_at_2_5"], rel=1e-9)


def test_ar1_runs_keep_nominal_coverage():
    """Coverage of the 95 % interval on A/A pairs of AR(1) runs (300 seeded pairs a cell):
    at least 0.93 at phi 0, 0.3, 0.6 and n 10, 30. Shrinking the lag-1 estimate by 0.84 of its
    standard error instead (which also decides the recorded pair) gave 0.886 at phi 0.6,
    n = 10 (1000 pairs); figures in docs/verdict.md."""
    for n in SIZES:
        for phi in PHIS:
            assert coverage(phi, n, 300) >= 0.93, (phi, n)
