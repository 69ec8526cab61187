"""The stability study's figures as figure specifications (HTML, PNG and SVG alike).

- per-worker scatter: CPU time of every run by cell, one colour per worker (the seed's
  "worker 0 in red" with a legend instead of a sentence in the title);
- box plots of CPU time by number of workers and by isolation, per workload;
- the interval-comparison summary: per family, how many groups came out higher / lower /
  same / overlapping (stacked bars, the seed's summary figure);
- harness vs program: harness wall time against the program's own, with y = x;
- parallel-run ratios: histogram over cells with several workers;
- correlations with CPU time: Spearman's rho per metric, one point per cell (never pooled
  across cells), one figure per workload.
The numbers come from :mod:`benchlab.report.study` (one analysis for Markdown, CSV and HTML).
Tick labels are shortened without losing which is which (long container levels lose their
registry and tag; otherwise numbered with a key in the caption): a figure never cuts them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlab.report import figures as F
from benchlab.report.study_cells import level_replacements, tick_names

_RESULT_COLOURS = {"higher": F.MARK, "lower": F.GOOD, "same": F.PALETTE[0],
                   "overlap": F.NEUTRAL}


def _replacements(groups: list[Any]) -> dict[str, str]:
    return level_replacements(sorted({str(g.cell["isolation"]) for g in groups}))


def worker_scatter(workload: str, groups: list[Any], key: str = "") -> F.Figure:
    """CPU time per run by cell (x) for one workload, one colour per worker."""
    gs = sorted((g for g in groups if g.workload == workload), key=lambda g: g.label)
    ticks, caption = tick_names([g.label for g in gs], {**_replacements(groups), "iso=": ""})
    fig = F.Figure(f"cpu_by_cell-{key}{F.slug(workload)}", f"{workload}: CPU time per run by cell",
                   "cell (isolation / workers / affinity / load)", "CPU time (ms)", width=1140,
                   x_ticks={float(k): t for k, t in enumerate(ticks)}, caption=caption)
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


def factor_boxes(workload: str, groups: list[Any], factor: str, key: str = "") -> F.Figure:
    """Box plots of CPU time per level of ``factor`` (e.g. workers, isolation), pooled over
    the other factors, for one workload."""
    gs = [g for g in groups if g.workload == workload]
    levels = sorted({str(g.cell[factor]) for g in gs})
    ticks, caption = tick_names(levels, _replacements(groups))
    fig = F.Figure(f"box_{factor}-{key}{F.slug(workload)}", f"{workload}: CPU time by {factor}",
                   factor, "CPU time (ms)", x_ticks={float(i): t for i, t in enumerate(ticks)},
                   caption=caption)
    samples = [np.concatenate([g.values["cpu"] for g in gs if str(g.cell[factor]) == lv]) / 1e6
               for lv in levels]
    fig.layers.extend(F.box_layers(range(len(levels)), samples, F.PALETTE[0],
                                   "quartiles; whiskers 1.5 IQR"))
    return fig


def _unique_slug(text: str) -> str:
    """A file-name key for ``text`` that a cut cannot make alike: a slug longer than
    :func:`benchlab.report.figures.slug` keeps ends in a digest of the whole text."""
    import hashlib

    name = F.slug(text)
    if len(name) < 60:
        return name
    return f"{name[:50]}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def comparison_summary(families: list[dict], key: str = "",
                       replace: dict[str, str] | None = None) -> list[F.Figure]:
    """Stacked bars per family (one figure each): per metric and statistic, counts of
    higher/lower/same/overlap, so a row's label is its metric alone and never cut."""
    out = []
    for family in dict.fromkeys(r["family"] for r in families):
        mine = [r for r in families if r["family"] == family]
        rows = [f"{r['metric']} {r['statistic']}" for r in mine]
        ticks, key_text = tick_names(rows)
        shown = family
        for long, short in (replace or {}).items():
            shown = shown.replace(long, short)
        fig = F.Figure(f"interval_comparisons-{key}{_unique_slug(shown)}",
                       shown, "groups (interval comparisons)", "", width=760,
                       height=max(200, 90 + 26 * len(rows)),
                       y_ticks={float(i): t for i, t in enumerate(ticks)})
        left = np.zeros(len(rows))
        for result, colour in _RESULT_COLOURS.items():
            counts = np.array([r[result] for r in mine], dtype=float)
            fig.layers.append(F.Layer("quad", {"left": left, "right": left + counts,
                                               "bottom": np.arange(len(rows)) - 0.35,
                                               "top": np.arange(len(rows)) + 0.35}, colour,
                                      alpha=0.8, label=result))
            left = left + counts
        fig.caption = (f"{family}: the second level vs the first. Disjoint intervals are "
                       "higher/lower, one inside the other is the same, otherwise they overlap "
                       "(no conclusion). " + key_text).strip()
        out.append(fig)
    return out


def harness_vs_program(groups: list[Any], key: str = "") -> F.Figure | None:
    """Harness wall time against the program's own wall time per run, per workload, with y=x."""
    pairs = [(g.workload, g.values["wall"], g.values["self_wall"]) for g in groups
             if "self_wall" in g.values]
    if not pairs:
        return None
    fig = F.Figure(f"harness_vs_program{'-' + key.rstrip('-') if key else ''}", "Harness vs program wall time per run",
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


def parallel_ratios(ratios: list[dict], key: str = "") -> F.Figure | None:
    """Histogram of the parallel-run ratio over cells with several workers (1 = all parallel)."""
    if not ratios:
        return None
    values = np.array([r["parallel_run_ratio"] for r in ratios])
    counts, edges = np.histogram(values, bins=np.linspace(0, 1, 21))
    fig = F.Figure(f"parallel_ratios{'-' + key.rstrip('-') if key else ''}", "Parallel-run ratio of multi-worker cells",
                   "parallel-run ratio (1 = workers ran entirely in parallel)", "cells")
    fig.layers.append(F.Layer("quad", {"left": edges[:-1], "right": edges[1:],
                                       "bottom": np.zeros(counts.size), "top": counts},
                              F.PALETTE[0], alpha=0.7, label=f"{values.size} cells"))
    return fig


def correlation_figures(corr: list[dict], key: str = "") -> list[F.Figure]:
    """Spearman's rho of each metric with CPU time within each cell: one figure per workload,
    one row per metric, one point per cell (coloured by isolation level)."""
    out = []
    replace = level_replacements(sorted({str(r["isolation"]) for r in corr}))
    for workload in sorted({r["workload"] for r in corr}):
        rows = [r for r in corr if r["workload"] == workload]
        metrics = sorted({r["metric"] for r in rows})
        ticks, caption = tick_names(metrics)
        fig = F.Figure(f"perf_correlations-{key}{F.slug(workload)}",
                       f"{workload}: Spearman's rho with CPU time, per cell",
                       "Spearman's rho with harness CPU time", "", width=760,
                       height=max(200, 70 + 34 * len(metrics)),
                       y_ticks={float(i): t for i, t in enumerate(ticks)},
                       caption=("Each point is one cell (isolation x workers x affinity x "
                                "load); cells are never pooled. " + caption).strip())
        colours = F.Colours()
        for level in sorted({str(r["isolation"]) for r in rows}):
            mine = [r for r in rows if str(r["isolation"]) == level]
            ys = np.array([metrics.index(r["metric"]) for r in mine], dtype=float)
            fig.layers.append(F.Layer("scatter", {"x": [r["spearman_rho"] for r in mine],
                                                  "y": ys}, colours(level), size=7, alpha=0.8,
                                      label=replace.get(level, level), hover=True,
                                      text=[r["cell"] for r in mine]))
        fig.layers.append(F.Layer("vline", {"x": [0.0]}, F.NEUTRAL, dash="dashed"))
        out.append(fig)
    return out


def study_figures(groups: list[Any], families: list[dict], ratios: list[dict],
                  corr: list[dict], factors_with_levels: list[str],
                  key: str = "") -> list[F.Figure]:
    """Every study figure, in report order (None-producing ones left out). ``key``: a prefix
    of every figure's file name (two studies' figures side by side in one directory)."""
    key = f"{F.slug(key)}-" if key else ""
    out: list[F.Figure | None] = []
    for workload in sorted({g.workload for g in groups}):
        out.append(worker_scatter(workload, groups, key))
        for factor in factors_with_levels:
            out.append(factor_boxes(workload, groups, factor, key))
    out += comparison_summary(families, key, _replacements(groups))
    out += [harness_vs_program(groups, key), parallel_ratios(ratios, key),
            *correlation_figures(corr, key)]
    return [f for f in out if f is not None]
