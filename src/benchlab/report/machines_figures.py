"""Machine reports, all their words and pictures: Figure 2 (variability histograms) and
Figure 3 (application results against the predicted range) as report sections, Figure 2 as a
file (``benchlab variability --plot``), and the plain-text variability and fleet reports.

Figure 2: per variability profile (target over base), the speedups of stress-ng's CPU methods
in 0.1-wide right-closed bins, as the paper reads them, with each profile's range [min, max]
marked. Figure 3: each application's measured speedup of the target over the base against the
range the profile predicts for any CPU-bound program; inside in green, outside in red.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.report import figures as F
from benchlab.report.model import Section, Table


def variability_figure(items: Sequence[Any], labels: Sequence[str] | None = None) -> F.Figure:
    """Figure 2: histograms of per-method speedups (0.1 bins) with each range marked.

    ``labels``: a name per profile (default ``target / base``)."""
    fig = F.Figure("variability_histogram", "Figure 2: variability of stress-ng CPU methods",
                   "speedup of target over base (per method; > 1: faster on the target)",
                   "methods", width=1140, height=340)
    colours = F.Colours()
    for i, item in enumerate(items):
        name = labels[i] if labels and i < len(labels) else f"{item.target} / {item.base}"
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


def write_variability_figure(items: Sequence[Any], path: str | os.PathLike,
                             labels: Sequence[str] | None = None) -> None:
    """Write Figure 2 (:func:`variability_figure`) to ``path``; the format follows its
    extension (.png, .svg, .pdf). UserError for another extension or a file not writable."""
    from benchlab.report.plots import draw

    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg", ".pdf"):
        raise UserError(f"cannot plot to {path}: use a .png, .svg or .pdf file name")
    fig = draw(variability_figure(items, labels))
    try:
        fig.savefig(path, format=suffix[1:], dpi=110)
    except OSError as err:
        raise UserError(f"cannot write plot {path}: {err.strerror}; choose another --plot "
                        f"FILE") from None


def variability_text(v: Any, others: Sequence[Any] = ()) -> str:
    """A variability profile (and ``others`` against the same base) as plain text: summary
    lines and the histogram(s) in 0.1-wide bins with bars."""
    lines = []
    for item in (v, *others):
        s = item.summary()
        lines.append(f"{item.target} / {item.base}: {s['n']} methods ({', '.join(item.kinds)})")
        lines.append(f"  range [{s['min']:.2f}, {s['max']:.2f}]  length {s['length']:.2f}  "
                     f"median {s['median']:.3f}  mean {s['mean']:.3f}  IQR {s['iqr']:.3f} "
                     f"[{s['q1']:.3f}, {s['q3']:.3f}]")
        lo_name = min(item.ratios, key=item.ratios.get)
        hi_name = max(item.ratios, key=item.ratios.get)
        lines.append(f"  slowest-gaining {lo_name} ({item.ratios[lo_name]:.2f}), "
                     f"fastest-gaining {hi_name} ({item.ratios[hi_name]:.2f})")
        if item.only_in_target or item.only_in_base:
            lines.append(f"  left out: {len(item.only_in_base)} only in {item.base}, "
                         f"{len(item.only_in_target)} only in {item.target}")
        lines.append("  histogram (bins (low, high]):")
        for b in item.histogram():
            if b["count"]:
                lines.append(f"    ({b['low']:.1f}, {b['high']:.1f}] {b['count']:3d} "
                             f"{'#' * b['count']}")
    for item in others:
        if item.length > 0:
            lines.append(f"range length {item.target}: {item.length:.2f} "
                         f"({v.length / item.length:.2f}x narrower than {v.target})")
    return "\n".join(lines)


def fleet_matrix_text(matrix: Any) -> str:
    """A fleet's pairwise matrix as text: one row per target machine, one column per base,
    [min, max] of the per-method speedups, then the slowest common base."""
    width = max(12, *(len(n) for n in matrix.names)) + 2
    lines = ["speedup range [min, max] of each row's machine over each column's (per method)",
             " " * width + "".join(f"{n:>{width + 6}}" for n in matrix.names)]
    for t in matrix.names:
        cells = ["-".rjust(width + 6) if t == b else
                 f"[{matrix.ranges[t][b][0]:.2f}, {matrix.ranges[t][b][1]:.2f}]".rjust(width + 6)
                 for b in matrix.names]
        lines.append(f"{t:<{width}}" + "".join(cells))
    lines.append(f"slowest common base: {matrix.base} ({matrix.base_reason})")
    return "\n".join(lines)
