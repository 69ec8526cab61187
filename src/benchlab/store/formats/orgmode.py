"""hyperfine's Emacs org-mode table (``hyperfine --export-orgmode``)::

    | Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |
    |--+--+--+--+--|
    | =sleep 0.001=  |  2.0 ± 0.0 |  2.0 |  2.0 |  1.00 |

The cells (units, sort order, reference, relative speed) are those of every hyperfine markup
table: see :func:`benchlab.store.formats.asciidoc.markup_table`.
"""

from __future__ import annotations

from typing import Sequence

from benchlab.store.formats.asciidoc import MarkupTable, markup_table
from benchlab.store.formats.common import one_line
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData
from benchlab.store.formats.hyperfine import hyperfine_results


def _row(cells: list[str]) -> str:
    # hyperfine's spacing: two spaces after the first cell, two before each other one
    return f"| {cells[0]}  |  " + " |  ".join(cells[1:]) + " |\n"


def export_orgmode(sessions: Sequence[SessionData], *, time_unit: str | None = None,
                   sort: str = "auto", reference: str | None = None) -> str:
    """org-mode text of hyperfine's table for ``sessions`` (times as ``time_unit``, see
    :func:`~benchlab.store.formats.asciidoc.markup_table`)."""
    return orgmode_text(markup_table(hyperfine_results(sessions), time_unit=time_unit,
                                     sort=sort, reference=reference))


def orgmode_text(table: MarkupTable) -> str:
    """A :class:`~benchlab.store.formats.asciidoc.MarkupTable` as hyperfine writes it in org-mode."""
    out = _row(table.header()) + "|--+--+--+--+--|\n"
    for cells in table.rows:
        out += _row(["=" + one_line(cells[0]).replace("|", "\\|") + "=", *cells[1:]])
    return out


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``orgmode`` export format (:mod:`benchlab.store.formats.exporters`)."""
    return export_orgmode(sessions, time_unit=options.time_unit, sort=options.sort,
                          reference=options.reference)


__all__ = ["export_orgmode", "orgmode_text"]
