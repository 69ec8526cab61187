"""The correlogram draws each autocorrelation at its own lag (lag 0 at 0, not at 1)."""

from __future__ import annotations

import numpy as np

from benchlab.report.figures import acf_figure
from benchlab.stats.independence import independence_and_acf


def test_each_stem_sits_at_its_lag():
    rng = np.random.default_rng(2)
    x = np.empty(200)
    x[0] = 0.0
    for t in range(1, x.size):
        x[t] = 0.7 * x[t - 1] + rng.normal()
    _, r = independence_and_acf(x)
    fig = acf_figure("k", "a", r, "#000000")
    points = next(layer for layer in fig.layers if layer.kind == "scatter").data
    assert points["x"][0] == 0 and points["y"][0] == 1.0
    assert points["x"][1] == 1 and points["y"][1] == r[1] > 0.5
