"""Figures as plain data: what to draw, not how.

Every figure of every report (a benchmark's distribution, run sequence, correlogram and CDF; a
comparison's relative speeds; a history; the study's and machine reports' figures) is a
:class:`Figure` of :class:`Layer` s built here from numbers. Two renderers draw the same
specification: :mod:`benchlab.report.html.bokeh_figures` (interactive, for the HTML report) and
:mod:`benchlab.report.plots` (matplotlib PNG/SVG for ``--plots DIR`` and Markdown). One
specification for both keeps the numbers, titles, units and colours identical everywhere.

Large series are reduced here, never in a renderer: sequences to at most ``MAX_POINTS`` buckets
(median line plus the bucket's min..max band), raw points to an evenly spaced subsample, CDFs to
quantiles, densities to a binned Gaussian kernel estimate. A report over a million samples
therefore carries a few thousand points per figure, not a million SVG or JSON nodes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from benchlab.stats.descriptive import scaled_sd
from benchlab.units import time_unit_for

#: Okabe-Ito colour-blind-safe palette; a command keeps its colour in every figure.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
MARK = "#D55E00"     # outliers, level shifts, regressions
GOOD = "#009E73"     # improvements
NEUTRAL = "#777777"  # thresholds, reference lines
#: Most points a figure draws per series (sequence buckets, raw points, CDF quantiles).
MAX_POINTS = 2000
#: The TCP-latency report's percentiles marked on the CDF.
CDF_MARKS = (0.5, 0.9, 0.95, 0.99, 0.999)


@dataclass
class Layer:
    """One glyph group. ``kind`` and its columns (all in display units):

    line/step: x, y; scatter: x, y; quad: left, right, bottom, top; segment: x0, y0, x1, y1;
    vline: x; hline: y; band: x, low, high (filled between). ``label`` goes in the legend
    (None: not listed); ``hover`` names the column shown as a tooltip title.
    """

    kind: str
    data: dict[str, Any]
    color: str
    label: str | None = None
    alpha: float = 1.0
    size: float = 5.0
    dash: str = "solid"
    hover: bool = False
    text: list[str] | None = None  # per-point hover text

    def __post_init__(self) -> None:
        self.data = {k: np.asarray(v, dtype=float) for k, v in self.data.items()}


@dataclass
class Figure:
    """A titled figure with labelled axes (units in the labels) and layers."""

    key: str
    title: str
    x_label: str
    y_label: str
    layers: list[Layer] = field(default_factory=list)
    x_ticks: dict[float, str] | None = None
    y_ticks: dict[float, str] | None = None
    log_x: bool = False
    width: int = 560
    height: int = 300
    caption: str = ""


def slug(text: str) -> str:
    """A file-name-safe key from any text (hostile names cannot escape a directory)."""
    out = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")
    return out[:60] or "figure"


def short_label(text: str, limit: int = 32) -> str:
    """A tick label that leaves room for the data: one line, at most ``limit`` characters
    (tables and hover text keep the full name)."""
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[:limit - 1] + "…"


class Colours:
    """Assigns each command one palette colour, in order of first appearance."""

    def __init__(self) -> None:
        self._by_name: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._by_name:
            self._by_name[name] = PALETTE[len(self._by_name) % len(PALETTE)]
        return self._by_name[name]


def display_unit(values: np.ndarray, unit: str) -> tuple[str, float]:
    """The unit to draw values in (ns -> s/ms/µs/ns by the median) and its divisor."""
    if unit == "ns" and values.size:
        return time_unit_for(float(np.median(values)))
    return unit, 1.0


def axis_label(quantity: str, unit: str) -> str:
    """``quantity (unit)``; says "no unit" rather than printing empty parentheses."""
    return f"{quantity or 'value'} ({unit or 'no unit'})"


def even_subsample(n: int, limit: int = MAX_POINTS) -> np.ndarray:
    """Indices of at most ``limit`` evenly spaced items of ``n`` (all of them when fewer)."""
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


def density(values: np.ndarray, grid_points: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian kernel density on a grid, from a histogram (O(n), not O(n * grid)).

    Bandwidth: Silverman's rule with the robust spread min(sd, IQR/1.34). Returns (x, density)
    with density in 1 / (unit of x); empty arrays when the values are constant.
    """
    x = values[np.isfinite(values)]
    if x.size < 2 or np.ptp(x) == 0:
        return np.empty(0), np.empty(0)
    q1, q3 = np.percentile(x, [25, 75])
    sd = scaled_sd(x)  # values near 1e300 square to inf in np.std
    spread = min(sd, float(q3 - q1) / 1.34) or sd
    bw = 0.9 * spread * x.size ** -0.2
    lo, hi = float(x.min()) - 3 * bw, float(x.max()) + 3 * bw
    counts, edges = np.histogram(x, bins=grid_points, range=(lo, hi))
    centres = (edges[:-1] + edges[1:]) / 2
    step = edges[1] - edges[0]
    half = int(min(grid_points, math.ceil(4 * bw / step)))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) * step / bw) ** 2)
    kernel /= kernel.sum() * step
    smooth = np.convolve(counts, kernel, mode="same") / x.size
    return centres, smooth


def bucket_sequence(values: np.ndarray, limit: int = MAX_POINTS) -> dict[str, np.ndarray]:
    """A run sequence reduced to at most ``limit`` buckets: index, median, min, max per bucket."""
    n = values.size
    if n <= limit:
        idx = np.arange(n, dtype=float)
        return {"x": idx, "y": values, "low": values, "high": values}
    edges = np.linspace(0, n, limit + 1).astype(np.int64)
    med = np.array([np.median(values[a:b]) for a, b in zip(edges[:-1], edges[1:])])
    low = np.minimum.reduceat(values, edges[:-1])
    high = np.maximum.reduceat(values, edges[:-1])
    return {"x": (edges[:-1] + edges[1:] - 1) / 2, "y": med, "low": low, "high": high}


def distribution_figure(key: str, series: Sequence[tuple[str, np.ndarray]], unit: str,
                        colours: Colours, metric: str = "") -> Figure:
    """Histogram (as density) + kernel density + raw points of one or more series.

    ``series`` are (command name, values in ``unit``); all share bins and a display unit. Raw
    points (a subsample when long) sit in a strip below zero, one row per command.
    """
    pooled = np.concatenate([v for _, v in series]) if series else np.empty(0)
    name_u, div = display_unit(pooled, unit)
    fig = Figure(key, f"Distribution of {metric or 'values'}" + (
        f": {series[0][0]}" if len(series) == 1 else ""), axis_label(metric, name_u),
        f"density (1/{name_u})" if name_u else "density (1/value)")
    if pooled.size == 0:
        return fig
    lo, hi = float(pooled.min()) / div, float(pooled.max()) / div
    bins = min(60, max(10, int(math.sqrt(pooled.size))))
    edges = np.linspace(lo, hi if hi > lo else lo + 1, bins + 1)
    peak = 0.0
    for name, values in series:
        v = values / div
        counts, _ = np.histogram(v, bins=edges, density=True)
        peak = max(peak, float(counts.max()) if counts.size else 0.0)
        fig.layers.append(Layer("quad", {"left": edges[:-1], "right": edges[1:], "bottom":
                                         np.zeros(bins), "top": counts}, colours(name),
                                alpha=0.35 if len(series) > 1 else 0.5, label=f"{name} histogram"))
        gx, gy = density(v)
        if gx.size:
            peak = max(peak, float(gy.max()))
            fig.layers.append(Layer("line", {"x": gx, "y": gy}, colours(name),
                                    label=f"{name} density", hover=True))
    strip = max(peak, 1e-300) * 0.08
    rng = np.random.default_rng(0)  # fixed jitter: the same report every time
    for row, (name, values) in enumerate(series):
        pick = even_subsample(values.size, MAX_POINTS // max(1, len(series)))
        y = -strip * (row + 1) + rng.uniform(-0.35, 0.35, pick.size) * strip
        fig.layers.append(Layer("scatter", {"x": values[pick] / div, "y": y}, colours(name),
                                alpha=0.4, size=3, label=f"{name} runs"
                                + (f" ({pick.size} of {values.size})" if pick.size < values.size
                                   else "")))
    return fig


def sequence_figure(key: str, name: str, values: np.ndarray, unit: str, colour: str, *,
                    metric: str = "", warmup: np.ndarray | None = None, steady: Any = None,
                    outliers: np.ndarray | None = None) -> Figure:
    """Values in run order with stored warm-up runs, detected warm-up, level shifts, outliers.

    ``warmup``: values of runs stored as warm-up (drawn before run 0). ``steady``: a
    :class:`benchlab.stats.steady.SteadyState` (segments drawn as their medians; the detected
    warm-up shaded; level shifts as vertical lines). ``outliers``: a boolean mask.
    """
    name_u, div = display_unit(values, unit)
    fig = Figure(key, f"Run sequence: {name}", "run (measurement order)",
                 axis_label(metric, name_u), width=1140)
    if values.size == 0:
        return fig
    b = bucket_sequence(values)
    if values.size > MAX_POINTS:
        fig.layers.append(Layer("band", {"x": b["x"], "low": b["low"] / div,
                                         "high": b["high"] / div}, colour, alpha=0.25,
                                label="min..max per bucket"))
        fig.caption = (f"{values.size} values in {b['x'].size} buckets of "
                       f"{math.ceil(values.size / b['x'].size)}: line = bucket median.")
    fig.layers.append(Layer("line" if values.size > MAX_POINTS else "scatter",
                            {"x": b["x"], "y": b["y"] / div}, colour, size=3, alpha=0.8,
                            label=name, hover=True))
    if warmup is not None and warmup.size:
        fig.layers.append(Layer("scatter", {"x": np.arange(-warmup.size, 0), "y": warmup / div},
                                NEUTRAL, size=5, label="stored warm-up runs", hover=True))
    if steady is not None:
        if steady.warmup_end > 0:
            fig.layers.append(Layer("vline", {"x": [steady.warmup_end - 0.5]}, NEUTRAL,
                                    dash="dashed", label=f"detected warm-up ends (run "
                                                         f"{steady.warmup_end})"))
        if steady.level_shifts:
            fig.layers.append(Layer("vline", {"x": np.asarray(steady.level_shifts) - 0.5}, MARK,
                                    dash="dotted", label="level shift (PELT)"))
        segs = steady.segments
        fig.layers.append(Layer("segment", {
            "x0": [s.start for s in segs], "x1": [s.stop - 1 for s in segs],
            "y0": [s.median / div for s in segs], "y1": [s.median / div for s in segs]},
            "#000000", size=2, label="segment median"))
    if outliers is not None and outliers.any():
        idx = np.flatnonzero(outliers)
        shown = idx[even_subsample(idx.size, MAX_POINTS // 4)]
        fig.layers.append(Layer("scatter", {"x": shown, "y": values[shown] / div}, MARK, size=6,
                                label=f"outlier, MAD rule ({idx.size})", hover=True))
    return fig


def acf_figure(key: str, name: str, acf_values: np.ndarray, colour: str,
               threshold: float = 0.05) -> Figure:
    """Correlogram: ``acf_values`` at lags 0..k (lag 0 is 1, as R's ``acf`` plot draws it) as
    stems, with the JayBeams ±0.05 line."""
    lags = np.arange(acf_values.size)  # acf_values[0] is lag 0: from 1, every stem sat one right
    fig = Figure(key, f"Autocorrelation: {name}", "lag (runs)", "autocorrelation")
    fig.layers.append(Layer("segment", {"x0": lags, "x1": lags, "y0": np.zeros(lags.size),
                                        "y1": acf_values}, colour, size=2, label="ACF"))
    fig.layers.append(Layer("scatter", {"x": lags, "y": acf_values}, colour, size=4, hover=True))
    fig.layers.append(Layer("hline", {"y": [threshold, -threshold]}, MARK, dash="dashed",
                            label=f"±{threshold:g} (JayBeams' independence limit)"))
    return fig


def cdf_figure(key: str, series: Sequence[tuple[str, np.ndarray]], unit: str,
               colours: Colours, metric: str = "") -> Figure:
    """Empirical CDF per command (quantiles when long) with the TCP-latency report's percentiles marked."""
    pooled = np.concatenate([v for _, v in series]) if series else np.empty(0)
    name_u, div = display_unit(pooled, unit)
    fig = Figure(key, "Cumulative distribution" + (f": {series[0][0]}" if len(series) == 1
                                                    else ""),
                 axis_label(metric, name_u), "fraction of runs ≤ x")
    for name, values in series:
        if values.size == 0:
            continue
        s = np.sort(values)
        pick = even_subsample(s.size)
        fig.layers.append(Layer("step", {"x": s[pick] / div, "y": (pick + 1) / s.size},
                                colours(name), label=name, hover=True))
        qs = np.quantile(s, CDF_MARKS, method="inverted_cdf") / div
        fig.layers.append(Layer("scatter", {"x": qs, "y": CDF_MARKS}, colours(name), size=8,
                                hover=True, text=[f"p{100 * p:g}" for p in CDF_MARKS],
                                label=f"{name} p50/p90/p95/p99/p99.9"))
    return fig


def interval_figure(key: str, title: str, x_label: str, rows: Sequence[dict],
                    reference: float | None = None, reference_label: str = "") -> Figure:
    """Point estimates with intervals, one row per item (``name``, ``estimate``, ``low``,
    ``high``, ``colour``); a vertical reference line (e.g. ratio 1) when given."""
    fig = Figure(key, title, x_label, "", height=max(160, 60 + 40 * len(rows)),
                 y_ticks={float(i): r["name"] for i, r in enumerate(rows)})
    for i, r in enumerate(rows):
        fig.layers.append(Layer("segment", {"x0": [r["low"]], "x1": [r["high"]], "y0": [i],
                                            "y1": [i]}, r["colour"], size=3))
        fig.layers.append(Layer("scatter", {"x": [r["estimate"]], "y": [i]}, r["colour"],
                                size=9, label=r.get("label", r["name"]), hover=True))
    if reference is not None:
        fig.layers.append(Layer("vline", {"x": [reference]}, NEUTRAL, dash="dashed",
                                label=reference_label or None))
    return fig


def box_layers(positions: Sequence[float], samples: Sequence[np.ndarray], colour: str,
               label: str | None, width: float = 0.6) -> list[Layer]:
    """Tukey box plots at ``positions``: IQR box, median bar, whiskers to the furthest value
    within 1.5 IQR, and the values beyond as points (R type 7 quartiles, as boxplot())."""
    left, right, q1s, q3s, meds = [], [], [], [], []
    wx, wlo, whi, ox, oy = [], [], [], [], []
    for pos, x in zip(positions, samples):
        x = np.asarray(x, dtype=float)
        x = x[np.isfinite(x)]
        if x.size == 0:
            continue
        q1, med, q3 = np.percentile(x, [25, 50, 75])
        fence_lo, fence_hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        inside = x[(x >= fence_lo) & (x <= fence_hi)]
        left.append(pos - width / 2)
        right.append(pos + width / 2)
        q1s.append(q1)
        q3s.append(q3)
        meds.append(med)
        wx.append(pos)
        wlo.append(inside.min())
        whi.append(inside.max())
        beyond = x[(x < fence_lo) | (x > fence_hi)]
        ox.extend([pos] * beyond.size)
        oy.extend(beyond.tolist())
    layers = [Layer("segment", {"x0": wx, "x1": wx, "y0": wlo, "y1": whi}, colour, size=1.5),
              Layer("quad", {"left": left, "right": right, "bottom": q1s, "top": q3s}, colour,
                    alpha=0.45, label=label),
              Layer("segment", {"x0": left, "x1": right, "y0": meds, "y1": meds}, "#000000",
                    size=2)]
    if ox:
        layers.append(Layer("scatter", {"x": ox, "y": oy}, colour, size=4, alpha=0.7))
    return layers
