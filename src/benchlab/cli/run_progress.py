"""The progress bar of ``benchlab run`` (also ``study`` and ``demo``): runs done, the command
running, time left. rich is imported only when the bar is drawn (``run -q`` never loads it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


#: Widths below which the bar drops its elapsed time (then also the bar itself): the counts
#: and the time left are never cut, the command's name is shortened instead.
FULL_WIDTH = 80
BAR_WIDTH = 50


def progress_bar(console: Console | None, *, disable: bool = False) -> Progress:
    """benchlab's one progress bar (run, study, demo, profile): spinner, what is running, a
    bar, done of total, time elapsed and left; it disappears when done. In a terminal
    narrower than :data:`FULL_WIDTH` columns the elapsed time goes, then (below
    :data:`BAR_WIDTH`) the bar, so the counts and the time left stay whole."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    width = console.width if console is not None else FULL_WIDTH
    columns: list = [SpinnerColumn(), TextColumn("{task.description}")]
    if width >= BAR_WIDTH:
        columns.append(BarColumn(bar_width=_bar(width)))
    columns.append(MofNCompleteColumn())
    if width >= FULL_WIDTH:
        columns.append(TimeElapsedColumn())
    columns += [TextColumn("ETA"), TimeRemainingColumn()]
    return Progress(*columns, console=console, transient=True, disable=disable)


def _bar(width: int) -> int:
    """The bar's length at ``width`` columns: 10 to 40 characters."""
    return max(10, min(40, width - 60))


def description_width(console_width: int, total: int) -> int:
    """Characters left for the description (the command and its run) beside the columns that
    :func:`progress_bar` shows at ``console_width`` for ``total`` runs; at least 8."""
    fixed = 2 + 2 * len(str(total)) + 2 + 4 + 8  # spinner, done/total, "ETA", time left
    if console_width >= BAR_WIDTH:
        fixed += _bar(console_width) + 1
    if console_width >= FULL_WIDTH:
        fixed += 8  # elapsed
    return max(8, console_width - fixed - 1)


class ProgressObserver:
    """Draws a rich progress bar: runs done, the current command, ETA."""

    def __init__(self, console: Console | None, enabled: bool):
        self.console = console
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task = None
        self.width = 60  # characters for the description, set when the total is known

    def __enter__(self):
        if self.enabled:
            self.progress = progress_bar(self.console)
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def started(self, session, protocol, total):
        if self.progress is not None:
            self.task = self.progress.add_task(f"session {session.uid}", total=total)
            self.width = description_width(self.progress.console.width, total)

    def run_finished(self, name, run, m, total, done):
        if self.progress is None:
            return
        kind = "warmup" if run.warmup else f"run {run.iteration + 1}"
        room = min(40, self.width - len(kind) - 3)  # the name gives way, not the counts
        short = name if len(name) <= room else name[:max(room - 1, 1)] + "…"
        self.progress.update(self.task, completed=done, total=total,
                             description=f"{short} ({kind})")

    def message(self, text):
        if self.enabled:
            self.console.print(f"[dim]{text}[/dim]")
