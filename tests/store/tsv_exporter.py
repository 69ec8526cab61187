"""An export format the tests add through the registry, as a new format would be added: one
module with its ``export`` function (tab-separated: benchmark, its number of runs)."""

from __future__ import annotations

from collections.abc import Sequence

from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """One line per benchmark: its name, a tab, its number of stored runs."""
    lines = []
    for session in sessions:
        for bench in session.benchmarks:
            lines.append(f"{bench.name}\t{len(bench.runs)}")
    return "\n".join(lines) + "\n"
