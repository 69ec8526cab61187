"""Per-benchmark summaries of a stored session, with the warnings a careful reader needs.

Reads the store, computes with :mod:`benchlab.stats`, returns plain data; rendering is separate
(:func:`render_summary_table` for the terminal, ``to_dict`` for ``--json``).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from benchlab.units import format_kib, format_value, time_unit_for
from benchlab.stats.descriptive import summarize
from benchlab.store.db import Store

#: A process shorter than this is dominated by the cost of spawning it (fork+exec ~0.3-1 ms).
SHORT_RUN_NS = 5_000_000
#: The first run counts as "much slower" when it exceeds the median of the rest by this factor.
FIRST_RUN_FACTOR = 2.0
#: Relative spread (MAD/median) above which results deserve suspicion.
HIGH_SPREAD = 0.05
#: Load per core at start above which other work competes for the CPU.
HIGH_LOAD_PER_CORE = 0.5


@dataclass
class SeriesSummary:
    """Summary of one series (a harness metric or a program-reported one) of a benchmark."""

    metric: str
    unit: str
    n: int
    median: float | None = None
    mad: float | None = None
    mean: float | None = None
    sd: float | None = None
    min: float | None = None
    max: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass
class BenchmarkSummary:
    """What ``benchlab run`` prints per benchmark."""

    name: str
    command: str | None
    runs_by_status: dict[str, int]
    wall: SeriesSummary
    user: SeriesSummary | None
    sys: SeriesSummary | None
    max_rss_kib: float | None
    program: list[SeriesSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (values in their units: ns, KiB, or the metric's unit)."""
        return asdict(self)


def summarize_series(values: np.ndarray, metric: str, unit: str) -> SeriesSummary:
    """Robust and classic summary of one series; tolerant of n < 3 (fewer fields)."""
    vals = np.asarray(values, dtype=float)
    vals = vals[np.isfinite(vals)]
    n = int(vals.size)
    if n == 0:
        return SeriesSummary(metric, unit, 0)
    if n < 3:
        med = float(np.median(vals))
        return SeriesSummary(metric, unit, n, median=med,
                             mad=float(np.median(np.abs(vals - med))), mean=float(vals.mean()),
                             sd=float(vals.std(ddof=1)) if n > 1 else None,
                             min=float(vals.min()), max=float(vals.max()))
    s = summarize(vals)
    return SeriesSummary(metric, unit, n, median=s.median, mad=s.mad_raw, mean=s.mean, sd=s.sd,
                         min=s.min, max=s.max, p95=s.p95, p99=s.p99)


def session_summaries(store: Store, session_id: int) -> list[BenchmarkSummary]:
    """Summaries (with warnings) of every benchmark in a session."""
    session = next(s for s in store.sessions() if s["id"] == session_id)
    cores = os.cpu_count() or 1
    load = session.get("load_before")
    load_warning = None
    if isinstance(load, list) and load and load[0] / cores > HIGH_LOAD_PER_CORE:
        load_warning = (f"load average was {load[0]:.2f} at start ({load[0] / cores:.2f} per core): "
                        f"other work competed for the CPU; results may be noisy")
    out = []
    for bench in store.benchmarks(session_id):
        runs = store.runs(benchmark_id=bench["id"], include_warmup=False)
        by_status: dict[str, int] = {}
        for r in runs:
            by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        wall, _ = store.harness_values(bench["id"], "wall")
        user, _ = store.harness_values(bench["id"], "user")
        sys_, _ = store.harness_values(bench["id"], "sys")
        rss, _ = store.harness_values(bench["id"], "max_rss")
        summary = BenchmarkSummary(
            name=bench["name"], command=bench["command"], runs_by_status=by_status,
            wall=summarize_series(wall, "wall", "ns"),
            user=summarize_series(user, "user", "ns") if user.size else None,
            sys=summarize_series(sys_, "sys", "ns") if sys_.size else None,
            max_rss_kib=float(np.median(rss)) if rss.size and np.isfinite(rss).any() else None)
        for metric in store.sample_metrics(bench["id"]):
            vals, _ = store.sample_values(bench["id"], metric)
            summary.program.append(summarize_series(vals, metric,
                                                    store.metric_unit(session_id, metric)))
        summary.warnings = _warnings(store, bench, runs, wall, summary, load_warning)
        out.append(summary)
    return out


def _warnings(store: Store, bench: dict, runs: list[dict], wall: np.ndarray,
              summary: BenchmarkSummary, load_warning: str | None) -> list[str]:
    w: list[str] = []
    bad = {k: v for k, v in summary.runs_by_status.items() if k not in ("ok", "imported")}
    if bad:
        parts = ", ".join(f"{v} {k}" for k, v in sorted(bad.items()))
        w.append(f"{sum(bad.values())} of {len(runs)} runs did not succeed ({parts}); "
                 f"only ok runs are summarised")
    if wall.size >= 3:
        rest = float(np.median(wall[1:]))
        if rest > 0 and wall[0] > FIRST_RUN_FACTOR * rest:
            w.append(f"the first run took {wall[0] / rest:.1f}x the median of the others: "
                     f"caches or lazy loading; consider --warmup 1 or more")
    if summary.wall.median is not None and summary.wall.median < SHORT_RUN_NS:
        shell = any(r.get("shell_overhead_ns") for r in runs)
        w.append(f"runs take {format_value(summary.wall.median, 'ns')} (< 5 ms): the cost of "
                 f"starting a process dominates; measure more work per run"
                 + ("; the shell's start-up, subtracted, is not known more precisely than "
                    "this: run without a shell (-N)" if shell else ""))
    med, mad = summary.wall.median, summary.wall.mad
    if med and mad is not None and summary.wall.n >= 3 and mad / med > HIGH_SPREAD:
        w.append(f"high relative spread: MAD is {100 * mad / med:.1f}% of the median; "
                 f"check for background load, frequency scaling or a bimodal program")
    if load_warning:
        w.append(load_warning)
    return w


def _num(value: float | None, scale: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = value / scale
    if v == 0:
        return "0"
    digits = 4 - max(1, int(math.floor(math.log10(abs(v)))) + 1)
    return f"{v:.{max(0, digits)}f}"


def render_summary_table(summaries: list[BenchmarkSummary], console) -> None:
    """Print one rich table per benchmark (wall, user, sys and program metrics) and warnings."""
    from rich.table import Table

    for s in summaries:
        title = f"[bold]{s.name}[/bold]"
        if s.command and s.command != s.name:
            title += f"  [dim]{s.command}[/dim]"
        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        for col in ("", "n", "median", "MAD", "mean ± sd", "min", "max", "p95", "p99"):
            table.add_column(col, justify="right" if col else "left")
        rows = [("wall", s.wall)] + [(x.metric, x) for x in (s.user, s.sys) if x is not None]
        rows += [(p.metric, p) for p in s.program]
        for label, x in rows:
            if x.n == 0:
                table.add_row(label, "0", *["-"] * 7)
                continue
            if x.unit == "ns":
                uname, scale = time_unit_for(x.median or x.mean or x.max or 0.0)
            else:
                uname, scale = x.unit, 1.0
            fmt = (lambda v, k=scale: _num(v, k))
            mean_sd = fmt(x.mean) + (" ± " + fmt(x.sd) if x.sd is not None and not
                                     math.isnan(x.sd) else "")
            table.add_row(rf"{label} \[{uname}]" if uname else label, str(x.n), fmt(x.median),
                          fmt(x.mad), mean_sd, fmt(x.min), fmt(x.max), fmt(x.p95), fmt(x.p99))
        console.print(table)
        status = ", ".join(f"{v} {k}" for k, v in sorted(s.runs_by_status.items()))
        rss = f"; peak RSS {format_kib(s.max_rss_kib)} (median)" if s.max_rss_kib else ""
        console.print(f"  [dim]runs: {status}{rss}[/dim]")
        for warning in s.warnings:
            console.print(f"  [yellow]warning:[/yellow] {warning}")
        console.print()
