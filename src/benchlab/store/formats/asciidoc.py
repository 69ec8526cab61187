"""hyperfine's AsciiDoc table (``hyperfine --export-asciidoc``), and the cells every hyperfine
markup table shares (org-mode renders the same cells, :mod:`.orgmode`)::

    [cols="<,>,>,>,>"]
    |===
    | Command 
    | Mean [ms] 
    ...
    | Relative 

    | `sleep 0.001` 
    | 2.0 ± 0.0 
    ...
    |===

(each cell line ends with a space, as hyperfine writes it). The numbers come from the same
per-benchmark results as the hyperfine JSON export (:func:`.hyperfine.hyperfine_results`:
harness wall times in seconds, shell start-up subtracted), formatted as hyperfine formats them:
seconds with 3 decimals, milliseconds and microseconds with 1; the unit is ``time_unit`` when
given, else chosen from the first row's mean (ms below 1 s, else s). Relative is the mean over
the reference's mean — the fastest, or the ``reference`` benchmark — with hyperfine's error
propagation ``r * sqrt((sd/mean)^2 + (sd_ref/mean_ref)^2)``; the reference row shows ``1.00``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from benchlab.errors import UserError
from benchlab.store.formats.common import one_line
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData
from benchlab.store.formats.hyperfine import hyperfine_results

#: hyperfine's ``--time-unit`` values -> (short name, seconds per unit, decimals shown)
TIME_UNITS: dict[str, tuple[str, float, int]] = {
    "second": ("s", 1.0, 3),
    "millisecond": ("ms", 1e-3, 1),
    "microsecond": ("µs", 1e-6, 1),
}
SORT_ORDERS = ("auto", "command", "mean-time")


@dataclass
class MarkupTable:
    """A hyperfine summary table: the unit's short name and rows of five text cells
    (command, mean ± sd, min, max, relative), commands unescaped."""

    unit: str
    rows: list[list[str]]

    def header(self) -> list[str]:
        """The header cells, e.g. ``Mean [ms]``."""
        u = f"[{self.unit}]"
        return ["Command", f"Mean {u}", f"Min {u}", f"Max {u}", "Relative"]


def _relative(entry: dict[str, Any], ref: dict[str, Any], is_ref: bool) -> str:
    if is_ref:
        return "1.00"
    if ref["mean"] <= 0:
        return "N/A"  # a ratio to a zero time means nothing
    ratio = entry["mean"] / ref["mean"]
    sd, ref_sd = entry["stddev"], ref["stddev"]
    if sd is None or ref_sd is None or entry["mean"] <= 0:
        return f"{ratio:.2f}"
    err = ratio * math.sqrt((sd / entry["mean"]) ** 2 + (ref_sd / ref["mean"]) ** 2)
    return f"{ratio:.2f} ± {err:.2f}"


def markup_table(results: Sequence[dict[str, Any]], *, time_unit: str | None = None,
                 sort: str = "auto", reference: str | None = None) -> MarkupTable:
    """The cells of hyperfine's markup tables from hyperfine ``results`` entries (seconds).

    Parameters
    ----------
    results : sequence of dict
        Entries as in hyperfine's JSON (``command``, ``mean``, ``stddev``, ``min``, ``max``; s).
    time_unit : {'second', 'millisecond', 'microsecond'}, optional
        hyperfine's ``--time-unit``; default: from the first entry's mean.
    sort : {'auto', 'command', 'mean-time'}
        hyperfine's ``--sort``: tables keep the command order unless ``mean-time``.
    reference : str, optional
        The command (name) the others are relative to; default the fastest mean.
    """
    if not results:
        raise UserError("no benchmark has measured times to tabulate; see `benchlab show`")
    if sort not in SORT_ORDERS:
        raise UserError(f"unknown sort order {sort!r}; choose one of {', '.join(SORT_ORDERS)}")
    entries = list(results)
    if sort == "mean-time":
        entries.sort(key=lambda e: e["mean"])
    if time_unit is None:
        time_unit = "millisecond" if entries[0]["mean"] < 1.0 else "second"
    if time_unit not in TIME_UNITS:
        raise UserError(f"unknown time unit {time_unit!r}; choose one of "
                        f"{', '.join(TIME_UNITS)}")
    short, per_unit, decimals = TIME_UNITS[time_unit]
    if reference is None:
        ref = min(entries, key=lambda e: e["mean"])
    else:
        matches = [e for e in entries if e["command"] == reference]
        if not matches:
            raise UserError(f"reference {reference!r} is not among the results "
                            f"({', '.join(e['command'] for e in entries)}); name one of them")
        ref = matches[0]

    def fmt(seconds: float) -> str:
        return f"{seconds / per_unit:.{decimals}f}"

    rows = []
    for e in entries:
        mean = fmt(e["mean"]) + ("" if e["stddev"] is None else f" ± {fmt(e['stddev'])}")
        rows.append([e["command"], mean, fmt(e["min"]), fmt(e["max"]),
                     _relative(e, ref, e is ref)])
    return MarkupTable(unit=short, rows=rows)


def export_asciidoc(sessions: Sequence[SessionData], *, time_unit: str | None = None,
                    sort: str = "auto", reference: str | None = None) -> str:
    """AsciiDoc text of hyperfine's table for ``sessions`` (see :func:`markup_table`)."""
    return asciidoc_text(markup_table(hyperfine_results(sessions), time_unit=time_unit,
                                      sort=sort, reference=reference))


def asciidoc_text(table: MarkupTable) -> str:
    """A :class:`MarkupTable` as hyperfine writes it in AsciiDoc."""
    def row(cells: list[str]) -> str:
        return "\n| " + " \n| ".join(cells) + " \n"

    out = '[cols="<,>,>,>,>"]\n|==='
    out += row(table.header())
    for cells in table.rows:
        out += row(["`" + one_line(cells[0]).replace("|", "\\|") + "`", *cells[1:]])
    return out + "|===\n"


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``asciidoc`` export format (:mod:`benchlab.store.formats.exporters`)."""
    return export_asciidoc(sessions, time_unit=options.time_unit, sort=options.sort,
                           reference=options.reference)


__all__ = ["TIME_UNITS", "SORT_ORDERS", "MarkupTable", "markup_table", "export_asciidoc",
           "asciidoc_text"]
