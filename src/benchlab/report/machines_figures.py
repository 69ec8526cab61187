"""Seed 004's machine reports as report sections: Figure 2 (variability histograms) and
Figure 3 (application results against the predicted range).

Figure 2: per variability profile (target over base), the speedups of stress-ng's CPU methods
in 0.1-wide right-closed bins, as the paper reads them, with each profile's range [min, max]
marked. Figure 3: each application's measured speedup of the target over the base against the
range the profile predicts for any CPU-bound program; inside in green, outside in red.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from benchlab.report import figures as F
from benchlab.report.model import Section, Table


def variability_figure(items: Sequence[Any]) -> F.Figure:
    """Figure 2: histograms of per-method speedups (0.1 bins) with each range marked."""
    fig = F.Figure("variability_histogram", "Figure 2: variability of stress-ng CPU methods",
                   "speedup of target over base (per method; > 1: faster on the target)",
                   "methods", width=1140, height=340)
    colours = F.Colours()
    for item in items:
        name = f"{item.target} / {item.base}"
        bins = item.histogram()
        fig.layers.append(F.Layer("quad", {"left": [b["low"] for b in bins],
                                           "right": [b["high"] for b in bins],
                                           "bottom": np.zeros(len(bins)),
                                           "top": [b["count"] for b in bins]},
                                  colours(name), alpha=0.55, label=f"{name} ({len(item.ratios)} "
                                                                     f"methods)"))
        lo, hi = item.range
        fig.layers.append(F.Layer("vline", {"x": [lo, hi]}, colours(name), dash="dashed",
                                  label=f"{name} range [{lo:.3g}, {hi:.3g}]"))
    fig.layers.append(F.Layer("vline", {"x": [1.0]}, F.NEUTRAL, label="no change (1)"))
    return fig


def prediction_figure(predictions: Sequence[Any], variability: Any) -> F.Figure | None:
    """Figure 3: measured speedups of applications against the predicted range."""
    measured = [p for p in predictions if p.speedup is not None]
    if not measured:
        return None
    lo, hi = variability.range
    n = len(measured)
    fig = F.Figure("prediction_ranges", "Figure 3: applications against the predicted range",
                   "speedup of target over base", "", width=1140,
                   height=max(220, 70 + 22 * n),
                   y_ticks={float(i): p.name for i, p in enumerate(measured)})
    fig.layers.append(F.Layer("quad", {"left": [lo], "right": [hi], "bottom": [-0.5],
                                       "top": [n - 0.5]}, F.PALETTE[0], alpha=0.15,
                              label=f"predicted range [{lo:.3g}, {hi:.3g}] "
                                    f"({variability.target} / {variability.base})"))
    for inside, colour, label in ((True, F.GOOD, "inside the range"),
                                  (False, F.MARK, "outside the range")):
        idx = [i for i, p in enumerate(measured) if bool(p.inside) == inside]
        if idx:
            fig.layers.append(F.Layer("scatter", {"x": [measured[i].speedup for i in idx],
                                                  "y": idx}, colour, size=9,
                                      label=f"{label} ({len(idx)})", hover=True,
                                      text=[measured[i].name for i in idx]))
    return fig


def machines_section(items: Sequence[Any], predictions: Sequence[Any] = ()) -> Section:
    """Variability profiles (summary table, Figure 2) and, when given, predictions (table,
    Figure 3, against the first profile's range)."""
    rows = []
    for v in items:
        s = v.summary()
        rows.append([v.target, v.base, str(s["n"]), f"{s['min']:.4g}", f"{s['max']:.4g}",
                     f"{s['length']:.4g}", f"{s['median']:.4g}", f"{s['iqr']:.4g}"])
    tables = [Table("Variability profiles (speedup of target over base per method)",
                    ["target", "base", "methods", "min", "max", "range length", "median", "IQR"],
                    rows)]
    figs = [variability_figure(items)]
    if predictions:
        tables.append(Table(
            "Applications: bounds on the target and the measured result",
            ["application", "base result", "predicted low", "predicted high", "target result",
             "speedup", "inside"],
            [[p.name, f"{p.base:.5g}", f"{p.low:.5g}", f"{p.high:.5g}",
              "-" if p.target is None else f"{p.target:.5g}",
              "-" if p.speedup is None else f"{p.speedup:.4g}",
              "-" if p.inside is None else ("yes" if p.inside else "NO")] for p in predictions],
            [p.inside is False for p in predictions]))
        fig3 = prediction_figure(predictions, items[0])
        if fig3 is not None:
            figs.append(fig3)
    outside = sum(1 for p in predictions if p.inside is False)
    text = [f"{len(items)} variability profile(s) (VarSys16 ranges)."]
    if predictions:
        text.append(f"{len(predictions)} application(s) checked against the range of "
                    f"{items[0].target} / {items[0].base}: {outside} outside.")
    return Section("machines", "Machine variability and predictions", text, tables, figs)
