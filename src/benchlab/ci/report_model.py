"""The gate's result as data (:class:`GateReport`): what ``ab``, ``gate`` and ``bisect`` decided,
rendered by :mod:`benchlab.report.ci_outputs` into Markdown, JUnit XML, JSON and a table, so the
outputs cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchlab.ci.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_PASS, EXIT_REGRESSION
from benchlab.ci.gate import GateDecision

_VERDICT = {EXIT_PASS: "passed", EXIT_REGRESSION: "regression", EXIT_BAD_INPUT: "bad input",
            EXIT_FAILED: "failed"}


@dataclass
class GateReport:
    """A gate's result as data: ``kind`` (``ab``, ``gate`` or ``bisect``), the session uid,
    revisions by label (plain dicts: commit, subject, ...), decisions, pairs and seconds per
    benchmark, the failure line (None), the exit status, whether undecided fails, notes, and
    how the error level was spent."""

    kind: str
    session: str | None
    revisions: dict[str, dict[str, Any]]
    decisions: list[GateDecision]
    exit_status: int
    pairs: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    failure: str | None = None
    fail_undecided: bool = False
    notes: list[str] = field(default_factory=list)
    #: how ``--alpha`` was spent (``AbOptions.alpha_spending``: alpha, scope, decisions, each,
    #: statement); None: not said (a bisect's report)
    alpha: dict[str, Any] | None = None

    @property
    def verdict(self) -> str:
        """passed, regression, bad input or failed."""
        return _VERDICT.get(self.exit_status, "failed")
