"""The figure data reductions: densities against scipy's exact kernel estimate, sequences and
CDFs reduced without losing what the reader must see (extremes, quantiles, shifts)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from benchlab.report import figures as F


def test_binned_density_matches_scipy_gaussian_kde():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(10, 1, 3000), rng.normal(14, 0.5, 1000)])
    gx, gy = F.density(x)
    q1, q3 = np.percentile(x, [25, 75])
    bw = 0.9 * min(np.std(x, ddof=1), (q3 - q1) / 1.34) * x.size ** -0.2
    exact = sps.gaussian_kde(x, bw_method=bw / np.std(x, ddof=1))(gx)
    assert np.trapezoid(gy, gx) == pytest.approx(1.0, abs=2e-3)
    # binning moves each point by at most half a bin (~0.03 bandwidths): tiny error
    assert np.max(np.abs(gy - exact)) < 0.01 * exact.max()


def test_density_of_constant_or_tiny_samples_is_empty_not_an_error():
    assert F.density(np.full(10, 3.0))[0].size == 0
    assert F.density(np.array([1.0]))[0].size == 0


def test_bucketed_sequence_keeps_extremes_and_level_shift():
    x = np.ones(1_000_000)
    x[500_000:] = 2.0
    x[123_456] = 50.0  # one spike must survive the reduction
    b = F.bucket_sequence(x)
    assert b["x"].size == F.MAX_POINTS
    assert b["high"].max() == 50.0 and b["low"].min() == 1.0
    assert set(np.unique(b["y"])) == {1.0, 2.0}
    assert b["x"][0] >= 0 and b["x"][-1] <= x.size - 1


def test_figures_of_a_million_values_stay_small():
    x = np.random.default_rng(2).lognormal(0, 0.1, 1_000_000) * 1e4
    colours = F.Colours()
    figs = [F.distribution_figure("d", [("a", x)], "ns", colours, "latency"),
            F.sequence_figure("s", "a", x, "ns", colours("a"), metric="latency"),
            F.cdf_figure("c", [("a", x)], "ns", colours, "latency")]
    for fig in figs:
        points = sum(v.size for layer in fig.layers for v in layer.data.values())
        assert points < 20_000, (fig.key, points)
    assert figs[0].x_label == "latency (µs)" and figs[2].y_label == "fraction of runs ≤ x"
    # the CDF's marked percentiles are the data's own (inverted CDF), in display units
    marks = next(l for l in figs[2].layers if l.kind == "scatter")
    np.testing.assert_allclose(marks.data["x"] * 1e3,
                               np.quantile(x, F.CDF_MARKS, method="inverted_cdf"))


def test_colours_are_stable_per_command_and_keys_are_safe_file_names():
    c = F.Colours()
    assert c("a") == c("a") != c("b")
    assert F.slug("../../etc/passwd <script>") == "etc-passwd-script"
    assert F.axis_label("latency", "") == "latency (no unit)"
