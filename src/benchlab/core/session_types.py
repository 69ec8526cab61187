"""What every execution path shares with its callers: the progress observer, the session's
result, the interruption it raises, and the one merge of session metadata.

Kept apart from the executors so the local path (:mod:`benchlab.core.executor`), the cluster
path (:mod:`benchlab.core.cluster`) and the recorder (:mod:`benchlab.core.recorder`) all
import it without importing each other.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any
from typing import Protocol as TypingProtocol

from benchlab.errors import UserError
from benchlab.measure.spawn import RunMeasurement
from benchlab.records import record
from benchlab.store.db import SessionRef
from benchlab.store.writer import SessionWriter


def merge_metadata(writer: SessionWriter, extra: dict[str, Any]) -> None:
    """Add keys to a session's metadata, keeping what is there, in one transaction
    (:func:`benchlab.store.session_metadata.merge`)."""
    from benchlab.store import session_metadata  # only sessions that record something extra

    session_metadata.merge(writer.store, writer.ref.id, **extra)


class RunFailed(UserError):
    """A measured run (or counted run) failed and ended its session: the run is stored, the
    session marked failed. Callers that gate (``gate``'s fresh run) tell it from bad input by
    its type: a failed run is exit 3 for them, bad input exit 2."""


class SessionInterrupted(Exception):
    """Raised after Ctrl-C or SIGTERM once the session is safely marked interrupted."""

    def __init__(self, session: SessionRef, runs_stored: int, signum: int = 2):
        super().__init__(f"interrupted: {runs_stored} runs stored in session {session.uid}")
        self.session = session
        self.runs_stored = runs_stored
        self.signum = signum


class Observer(TypingProtocol):
    """Receives progress events (the CLI draws a progress bar from them)."""

    def started(self, session: SessionRef, plan: Any, total: int | None) -> None: ...
    def run_finished(self, name: str, run: Any, m: RunMeasurement,
                     total: int | None, done: int) -> None: ...
    def message(self, text: str) -> None: ...


class Silent:
    """An observer that shows nothing."""

    def started(self, session, plan, total):
        pass

    def run_finished(self, name, run, m, total, done):
        pass

    def message(self, text):
        pass


@record
class SessionResult:
    """Outcome of a session: its reference, final status and run counts by benchmark and status.

    ``shell_overhead_ns`` (ns): the shell's start-up cost subtracted from wall times (None:
    no shell, or one per machine on a cluster). ``decision``: ``--until-decided``'s summary.
    """

    session: SessionRef
    status: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    shell_overhead_ns: int | None = None
    decision: dict | None = None
