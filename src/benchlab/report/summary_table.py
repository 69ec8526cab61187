"""The summary of a run as text: one table per benchmark in a terminal (its columns wrapped
into blocks that fit the width, never a digit cut), one plain aligned table in a pipe (every
digit, one line per row), and the warnings said once.
"""

from __future__ import annotations

import math
from typing import Any

from benchlab.units import format_kib, time_unit_for

#: A :class:`benchlab.report.run_summary.BenchmarkSummary` (not imported: that module imports
#: this one to name its tables).
BenchmarkSummary = Any


def _num(value: float | None, scale: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = value / scale
    if v == 0:
        return "0"
    if not math.isfinite(v) or not 1e-3 <= abs(v) < 1e15:  # 1e300 in 9 characters, not 301
        return f"{v:.4g}"
    digits = 4 - max(1, int(math.floor(math.log10(abs(v)))) + 1)
    return f"{v:.{max(0, digits)}f}"


#: Columns of a summary table after the row label (the metric and its unit).
COLUMNS = ("n", "median", "MAD", "mean ± sd", "min", "max", "p95", "p99")


def _rows(s: BenchmarkSummary) -> list[tuple[str, list[str]]]:
    """(label with unit, cells under :data:`COLUMNS`) for each series of a benchmark."""
    rows = [("wall", s.wall)] + [(x.metric, x) for x in (s.user, s.sys) if x is not None]
    rows += [(p.metric, p) for p in s.program]
    if s.wall.n == 0 and s.program:  # an import: its tool's series, no wall time to show
        rows = rows[1:]
    out = []
    for label, x in rows:
        if x.n == 0:
            out.append((label, ["0", *["-"] * (len(COLUMNS) - 1)]))
            continue
        if x.unit == "ns":
            uname, scale = time_unit_for(x.median or x.mean or x.max or 0.0)
        else:
            uname, scale = x.unit, 1.0
        fmt = (lambda v, k=scale: _num(v, k))
        mean_sd = fmt(x.mean) + (" ± " + fmt(x.sd) if x.sd is not None and not
                                 math.isnan(x.sd) else "")
        out.append((f"{label} [{uname}]" if uname else label,
                    [str(x.n), fmt(x.median), fmt(x.mad), mean_sd, fmt(x.min), fmt(x.max),
                     fmt(x.p95), fmt(x.p99)]))
    return out


def _status_text(s: BenchmarkSummary) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(s.runs_by_status.items()))


def shared_warnings(summaries: list[BenchmarkSummary]) -> list[str]:
    """Warnings every benchmark carries (the machine's load at start): said once per session,
    not once per command."""
    if len(summaries) < 2:
        return []
    first = summaries[0].warnings
    return [w for w in first if all(w in x.warnings for x in summaries[1:])]


def render_summary_table(summaries: list[BenchmarkSummary], console, *,
                         plain: bool | None = None) -> None:
    """Print the summaries and their warnings (a warning every benchmark shares, once).

    ``plain`` (default: when ``console`` is not a terminal) prints one aligned text table for
    all benchmarks, as wide as its widest cell: a pipe or a CI log gets every digit and one
    line per row, however narrow it is. Otherwise one rich table per benchmark.
    """
    if plain is None:
        plain = not console.is_terminal
    shared = shared_warnings(summaries)
    if plain:
        _render_plain(summaries, shared, console)
    else:
        _render_rich(summaries, shared, console)
    for warning in shared:
        console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    if shared or plain:
        console.print()


def _render_plain(summaries: list[BenchmarkSummary], shared: list[str], console) -> None:
    from benchlab.report.text_table import aligned_lines, printable

    rows = []
    for s in summaries:
        status = _status_text(s)
        rss = format_kib(s.max_rss_kib) if s.max_rss_kib else "-"
        for i, (label, cells) in enumerate(_rows(s)):
            rows.append([printable(s.name) if i == 0 else "", label, *cells,
                         status if i == 0 else "", rss if i == 0 else ""])
    header = ["command", "metric", *COLUMNS, "runs", "peak RSS"]
    lines = aligned_lines(header, rows, right=range(2, 2 + len(COLUMNS)))
    console.print(lines[0], markup=False, highlight=False, soft_wrap=True, style="bold")
    for line in lines[1:]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for s in summaries:
        for warning in s.warnings:
            if warning not in shared:
                console.print(f"warning: {printable(s.name)}: {warning}", markup=False,
                              highlight=False, soft_wrap=True)


def _render_rich(summaries: list[BenchmarkSummary], shared: list[str], console) -> None:
    from rich.markup import escape
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    from benchlab.report.text_table import column_blocks

    for s in summaries:
        title = f"[bold]{escape(s.name)}[/bold]"
        if s.command and s.command != s.name:
            title += f"  [dim]{escape(s.command)}[/dim]"
        rows = _rows(s)
        blocks = column_blocks([label for label, _ in rows],
                               [[cells[i] for _, cells in rows] for i in range(len(COLUMNS))],
                               COLUMNS, console.width, COLUMN_PRIORITY)
        for b, block in enumerate(blocks):
            table = Table(title=title if b == 0 else None, title_justify="left",
                          show_edge=False, pad_edge=False)
            table.add_column("", justify="left", no_wrap=True)
            for i in block:
                table.add_column(COLUMNS[i], justify="right", no_wrap=True)
            for label, cells in rows:
                table.add_row(escape(label), *(cells[i] for i in block))
            console.print(table)
        rss = f"; peak RSS {format_kib(s.max_rss_kib)} (median)" if s.max_rss_kib else ""
        console.print(f"  [dim]runs: {_status_text(s)}{rss}[/dim]")
        for warning in s.warnings:
            if warning not in shared:  # wrapped lines stay indented under their warning
                console.print(Padding(Text.from_markup(
                    f"[yellow]warning:[/yellow] {escape(warning)}"), (0, 0, 0, 2)))
        console.print()


#: The order in which a narrow terminal keeps the summary's columns (indices into COLUMNS):
#: the median and its spread first, then n and the mean, then the tails.
COLUMN_PRIORITY = (1, 2, 0, 3, 4, 5, 6, 7)
