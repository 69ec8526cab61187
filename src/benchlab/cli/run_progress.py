"""The progress bar of ``benchlab run`` (also ``study`` and ``demo``): runs done, the command
running, time left. rich is imported only when the bar is drawn (``run -q`` never loads it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def progress_bar(console: Console | None, *, disable: bool = False) -> Progress:
    """benchlab's one progress bar (run, study, demo, profile): spinner, what is running, a
    bar, done of total, time elapsed and left; it disappears when done."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                    TimeRemainingColumn(), console=console, transient=True, disable=disable)


class ProgressObserver:
    """Draws a rich progress bar: runs done, the current command, ETA."""

    def __init__(self, console: Console | None, enabled: bool):
        self.console = console
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task = None

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

    def run_finished(self, name, run, m, total, done):
        if self.progress is None:
            return
        kind = "warmup" if run.warmup else f"run {run.iteration + 1}"
        self.progress.update(self.task, completed=done, total=total,
                             description=f"{name[:40]} ({kind})")

    def message(self, text):
        if self.enabled:
            self.console.print(f"[dim]{text}[/dim]")
