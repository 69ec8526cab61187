"""A Markdown summary table in the style of ``hyperfine --export-markdown``::

    | Command | Mean [ms] | Min [ms] | Max [ms] | Relative |
    |:---|---:|---:|---:|---:|
    | `sleep 0.001` | 2.7 ± 0.1 | 2.6 | 2.9 | 1.00 |
    | `sleep 0.002` | 3.7 ± 0.1 | 3.6 | 3.9 | 1.37 ± 0.08 |

Each benchmark's row summarises its harness wall times, or else its program metric (see
:func:`~benchlab.store.formats.gather.primary_series`). Time units are chosen from the fastest
mean (s, ms, µs or ns); ``±`` is the sample standard deviation; Relative is the ratio of means
to the reference (``--reference``, else the fastest), with the error propagated from both
relative standard deviations as hyperfine does; ``--sort mean-time`` orders the rows by mean. A session whose benchmarks summarise different metrics gets one table per metric; with
several sessions each gets a heading.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from benchlab.store.formats.common import TIME_UNIT_TO_NS, markdown_code, markdown_text
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData, primary_series, session_label
from benchlab.store.formats.spread import sample_sd

_DISPLAY_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


def _cell(name: str) -> str:
    return markdown_code(name)


def _display_unit(fastest_ns: float) -> tuple[str, float]:
    for unit, factor in _DISPLAY_UNITS:
        if fastest_ns >= factor:
            return unit, factor
    return "ns", 1.0


def _table(rows: list[tuple[str, np.ndarray | None]], unit: str,
           time_unit: str | None = None, *, sort: str = "auto",
           reference: str | None = None) -> list[str]:
    """Markdown lines for (name, values in ``unit``) rows; None values -> a 'no data' row.
    ``time_unit`` (s, ms, µs or ns) fixes the unit times are shown in (hyperfine's -u);
    ``reference`` (a row's name) is the row the others are relative to (default: the fastest
    positive mean); ``sort`` ``mean-time`` orders rows by mean (hyperfine's --sort)."""
    stats = []
    for name, values in rows:
        if values is None or len(values) == 0:
            stats.append((name, None))
            continue
        mean = float(values.mean())
        sd = sample_sd(values) if len(values) > 1 else None  # finite near 1e300
        stats.append((name, (mean, sd, float(values.min()), float(values.max()))))
    if sort == "mean-time":
        stats.sort(key=lambda s: math.inf if s[1] is None else s[1][0])
    means = [s[1][0] for s in stats if s[1] is not None]
    if unit in TIME_UNIT_TO_NS:
        to_ns = TIME_UNIT_TO_NS[unit]
        shown, factor = _display_unit(min(means) * to_ns if means else 1e6)
        decimals = 1
        if time_unit is not None:  # hyperfine's -u: seconds with 3 decimals, others with 1
            shown, factor = time_unit, dict(_DISPLAY_UNITS)[time_unit]
            decimals = 3 if time_unit == "s" else 1
        scale = to_ns / factor
        suffix = f" [{shown}]"

        def fmt(x: float) -> str:
            return f"{x * scale:.{decimals}f}"
    else:
        suffix = f" [{unit}]" if unit else ""

        def fmt(x: float) -> str:
            return f"{x:.4g}"
    lines = [f"| Command | Mean{suffix} | Min{suffix} | Max{suffix} | Relative |",
             "|:---|---:|---:|---:|---:|"]
    # The reference: --reference's row, else the fastest positive mean (a ratio to zero means
    # nothing).
    given = [s for s in stats if reference is not None and s[0] == reference and s[1] is not None
             and s[1][0] > 0]
    positive = [(s[1][0], i) for i, s in enumerate(stats) if s[1] is not None and s[1][0] > 0]
    ref_at = stats.index(given[0]) if given else (min(positive)[1] if positive else None)
    ref_mean = ref_sd = None
    if ref_at is not None:
        ref_mean, ref_sd = stats[ref_at][1][0], stats[ref_at][1][1]
    for at, (name, st) in enumerate(stats):
        if st is None:
            lines.append(f"| {_cell(name)} | no measured values | | | |")
            continue
        mean, sd, lo, hi = st
        mean_text = fmt(mean) if sd is None else f"{fmt(mean)} ± {fmt(sd)}"
        if ref_mean is None:
            rel = ""
        elif at == ref_at:
            rel = "1.00"
        else:
            ratio = mean / ref_mean
            if sd is None or ref_sd is None or mean == 0:
                rel = f"{ratio:.2f}"
            else:
                err = ratio * math.sqrt((sd / mean) ** 2 + (ref_sd / ref_mean) ** 2)
                rel = f"{ratio:.2f} ± {err:.2f}"
        lines.append(f"| {_cell(name)} | {mean_text} | {fmt(lo)} | {fmt(hi)} | {rel} |")
    return lines


def export_markdown(sessions: Sequence[SessionData], time_unit: str | None = None, *,
                    sort: str = "auto", reference: str | None = None) -> str:
    """Markdown text with one hyperfine-style table per session (and per summarised metric);
    times in ``time_unit`` (s, ms, µs or ns) when given, else chosen from the fastest mean;
    Relative to the benchmark named ``reference`` (default: the fastest); rows by mean with
    ``sort`` ``mean-time`` (see :func:`_table`)."""
    out: list[str] = []
    for s in sessions:
        groups: dict[tuple[str, str], list[tuple[str, np.ndarray | None]]] = {}
        no_data: list[str] = []
        for bench in s.benchmarks:
            series = primary_series(s, bench)
            if series is None:
                no_data.append(bench.name)
            else:
                groups.setdefault((series.metric, series.unit), []).append(
                    (bench.name, series.values))
        if not groups:
            groups[("wall", "ns")] = []
        for name in no_data:
            next(iter(groups.values())).append((name, None))
        if len(sessions) > 1:
            out.append(f"### {markdown_text(session_label(s))}")
            out.append("")
        for (metric, unit), rows in groups.items():
            if len(groups) > 1 or metric != "wall":
                out.append(f"Metric: {markdown_text(metric)}"
                           + (f" \\[{markdown_text(unit)}\\]" if unit else ""))
                out.append("")
            out.extend(_table(rows, unit, time_unit, sort=sort, reference=reference))
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``markdown`` export format (:mod:`benchlab.store.formats.exporters`): hyperfine's
    table, times in ``options.time_unit`` (hyperfine's name) when given."""
    from benchlab.store.formats.asciidoc import TIME_UNITS

    unit = TIME_UNITS[options.time_unit][0] if options.time_unit else None
    return export_markdown(sessions, unit, sort=options.sort, reference=options.reference)
