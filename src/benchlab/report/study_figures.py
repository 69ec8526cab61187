"""The stability study's figures as figure specifications (HTML, PNG and SVG alike).

- per-worker scatter: CPU time of every run by cell, one colour per worker (the seed's
  "worker 0 in red" with a legend instead of a sentence in the title);
- box plots of CPU time by number of workers and by isolation, per workload;
- the interval-comparison summary: per family, how many groups came out higher / lower /
  same / overlapping (stacked bars, the seed's summary figure);
- harness vs program: harness wall time against the program's own, with y = x;
- parallel-run ratios: histogram over cells with several workers;
- correlations with CPU time: Spearman's rho per metric and workload.
The numbers come from :mod:`benchlab.report.study` (one analysis for Markdown, CSV and HTML).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlab.report import figures as F

_RESULT_COLOURS = {"higher": F.MARK, "lower": F.GOOD, "same": F.PALETTE[0],
                   "overlap": F.NEUTRAL}


def worker_scatter(workload: str, groups: list[Any]) -> F.Figure:
    """CPU time per run by cell (x) for one workload, one colour per worker."""
    gs = sorted((g for g in groups if g.workload == workload), key=lambda g: g.label)
    fig = F.Figure(f"cpu_by_cell-{F.slug(workload)}", f"{workload}: CPU time per run by cell",
                   "cell (isolation / workers / affinity / load)", "CPU time (ms)", width=1140,
                   x_ticks={float(k): g.label for k, g in enumerate(gs)})
    workers = sorted({r["worker"] for g in gs for r in g.runs})
    rng = np.random.default_rng(0)
    for w in workers:
        xs, ys = [], []
        for k, g in enumerate(gs):
            mask = np.array([r["worker"] == w for r in g.runs])
            y = g.values["cpu"][mask] / 1e6
            xs.append(k + rng.uniform(-0.25, 0.25, y.size))
            ys.append(y)
        fig.layers.append(F.Layer("scatter", {"x": np.concatenate(xs), "y": np.concatenate(ys)},
                                  F.PALETTE[w % len(F.PALETTE)], size=4, alpha=0.7,
                                  label=f"worker {w}", hover=True))
    return fig


def factor_boxes(workload: str, groups: list[Any], factor: str) -> F.Figure:
    """Box plots of CPU time per level of ``factor`` (e.g. workers, isolation), pooled over
    the other factors, for one workload."""
    gs = [g for g in groups if g.workload == workload]
    levels = sorted({str(g.cell[factor]) for g in gs})
    fig = F.Figure(f"box_{factor}-{F.slug(workload)}", f"{workload}: CPU time by {factor}",
                   factor, "CPU time (ms)", x_ticks={float(i): lv for i, lv in enumerate(levels)})
    samples = [np.concatenate([g.values["cpu"] for g in gs if str(g.cell[factor]) == lv]) / 1e6
               for lv in levels]
    fig.layers.extend(F.box_layers(range(len(levels)), samples, F.PALETTE[0],
                                   "quartiles; whiskers 1.5 IQR"))
    return fig


def comparison_summary(families: list[dict]) -> F.Figure:
    """Stacked bars: per family/metric/statistic, counts of higher/lower/same/overlap."""
    rows = [f"{r['family']} · {r['metric']} {r['statistic']}" for r in families]
    fig = F.Figure("interval_comparisons", "Interval comparisons per family (groups)",
                   "groups", "", width=1140, height=max(200, 70 + 26 * len(rows)),
                   y_ticks={float(i): r for i, r in enumerate(rows)})
    left = np.zeros(len(rows))
    for result, colour in _RESULT_COLOURS.items():
        counts = np.array([r[result] for r in families], dtype=float)
        fig.layers.append(F.Layer("quad", {"left": left, "right": left + counts,
                                           "bottom": np.arange(len(rows)) - 0.35,
                                           "top": np.arange(len(rows)) + 0.35}, colour,
                                  alpha=0.8, label=result))
        left = left + counts
    fig.caption = ("Second level vs first: disjoint intervals are higher/lower, one inside the "
                   "other is the same, otherwise they overlap (no conclusion).")
    return fig


def harness_vs_program(groups: list[Any]) -> F.Figure | None:
    """Harness wall time against the program's own wall time per run, per workload, with y=x."""
    pairs = [(g.workload, g.values["wall"], g.values["self_wall"]) for g in groups
             if "self_wall" in g.values]
    if not pairs:
        return None
    fig = F.Figure("harness_vs_program", "Harness vs program wall time per run",
                   "program's own wall time (ms)", "harness wall time (ms)")
    colours = F.Colours()
    for workload in sorted({w for w, _, _ in pairs}):
        h = np.concatenate([p[1] for p in pairs if p[0] == workload]) / 1e6
        s = np.concatenate([p[2] for p in pairs if p[0] == workload]) / 1e6
        fig.layers.append(F.Layer("scatter", {"x": s, "y": h}, colours(workload), size=4,
                                  alpha=0.6, label=workload, hover=True))
    lim = max(max(p[1].max(), p[2].max()) for p in pairs) / 1e6
    fig.layers.append(F.Layer("line", {"x": [0, lim], "y": [0, lim]}, "#000000", dash="dashed",
                              label="y = x (no harness overhead)"))
    return fig


def parallel_ratios(ratios: list[dict]) -> F.Figure | None:
    """Histogram of the parallel-run ratio over cells with several workers (1 = all parallel)."""
    if not ratios:
        return None
    values = np.array([r["parallel_run_ratio"] for r in ratios])
    counts, edges = np.histogram(values, bins=np.linspace(0, 1, 21))
    fig = F.Figure("parallel_ratios", "Parallel-run ratio of multi-worker cells",
                   "parallel-run ratio (1 = workers ran entirely in parallel)", "cells")
    fig.layers.append(F.Layer("quad", {"left": edges[:-1], "right": edges[1:],
                                       "bottom": np.zeros(counts.size), "top": counts},
                              F.PALETTE[0], alpha=0.7, label=f"{values.size} cells"))
    return fig


def correlation_figure(corr: list[dict]) -> F.Figure | None:
    """Spearman's rho of each metric with CPU time, one row per workload and metric."""
    if not corr:
        return None
    colours = F.Colours()
    rows = [{"name": f"{r['workload']} · {r['metric']}", "estimate": r["spearman_rho"],
             "low": r["spearman_rho"], "high": r["spearman_rho"],
             "colour": colours(r["workload"]), "label": r["workload"]} for r in corr]
    fig = F.interval_figure("perf_correlations", "Correlation with CPU time (Spearman)",
                            "Spearman's rho with harness CPU time", rows, reference=0.0)
    seen: set[str] = set()
    for layer in fig.layers:  # one legend entry per workload, not per row
        if layer.label in seen:
            layer.label = None
        elif layer.label:
            seen.add(layer.label)
    return fig


def study_figures(groups: list[Any], families: list[dict], ratios: list[dict],
                  corr: list[dict], factors_with_levels: list[str]) -> list[F.Figure]:
    """Every study figure, in report order (None-producing ones left out)."""
    out: list[F.Figure | None] = []
    for workload in sorted({g.workload for g in groups}):
        out.append(worker_scatter(workload, groups))
        for factor in factors_with_levels:
            out.append(factor_boxes(workload, groups, factor))
    if families:
        out.append(comparison_summary(families))
    out += [harness_vs_program(groups), parallel_ratios(ratios), correlation_figure(corr)]
    return [f for f in out if f is not None]
