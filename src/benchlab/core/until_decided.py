"""``benchlab run --until-decided A B``: measure until the comparison is decided, honestly.

After every ``look_every`` complete interleaved rounds the data so far go to a group-sequential
design (:class:`benchlab.stats.sequential.SequentialDesign`: Lan-DeMets O'Brien-Fleming alpha
spending on the Mann-Whitney statistic, or on the verdict's widened test when the runs show
dependence on one another), which holds the overall false-positive rate at alpha
however many looks are taken — unlike re-running a test after every round ("peeking"). The
session stops when the design decides "different" or "equivalent within ±margin", or when the
budget (``--max-runs`` per command, or ``--max-time``) is spent ("undecided").

The looks are stored with the session; a resumed session replays them on the same data so the
error already spent is accounted for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.sequential import SequentialDesign
from benchlab.store.db import Store


@dataclass
class UntilDecided:
    """Options of a sequential session (stored in the protocol)."""

    alpha: float = 0.01
    margin: float | None = 0.01
    look_every: int = 5
    metric: str = "wall"
    min_samples: int = 20
    looks: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form."""
        return asdict(self)


class SequentialStopper:
    """Decides after each stored run whether the session may stop (see module docstring)."""

    def __init__(self, store: Store, session_id: int, bench_ids: list[int], max_runs: int,
                 options: UntilDecided):
        if len(bench_ids) != 2:
            raise UserError("--until-decided compares exactly two commands; give two")
        self.store = store
        self.session_id = session_id
        self.bench_ids = bench_ids
        self.options = options
        self.design = SequentialDesign(max_samples=max_runs, alpha=options.alpha,
                                       equivalence_margin=options.margin,
                                       min_samples=options.min_samples)
        self.decision = None
        a, b = self._values()
        for n in options.looks:  # replay the looks of an interrupted session
            if n <= min(a.size, b.size):
                self.decision = self.design.look(a[:n], b[:n])

    def _values(self) -> tuple[np.ndarray, np.ndarray]:
        out = []
        for bid in self.bench_ids:
            if self.options.metric in ("wall", "cpu", "user", "sys"):
                vals, _ = self.store.harness_values(bid, self.options.metric)
            else:
                vals, _ = self.store.sample_values(bid, self.options.metric)
            out.append(vals)
        return out[0], out[1]

    def after_run(self) -> bool:
        """Called after each stored run; True when the session should stop now."""
        a, b = self._values()
        # the last whole round both have: on a cluster runs arrive out of order, so the two
        # counts need not be equal at the moment a round completes
        n = min(a.size, b.size)
        n -= n % self.options.look_every
        if n == 0:
            return False
        if self.options.looks and n <= self.options.looks[-1]:
            return False
        if n < self.options.min_samples:
            return False
        self.decision = self.design.look(a[:n], b[:n])
        self.options.looks.append(n)
        return self.decision.stop

    def stop_note(self) -> str:
        """A progress line when the design stops (the verdict's words come at the end, from
        :func:`benchlab.report.verdict_text.sequential_lines`)."""
        d = self.decision
        if d is None:
            return "until decided: no look yet"
        what = {"different": "decided", "equivalent": "decided: equivalent",
                "budget_exhausted": "budget spent, undecided"}.get(d.action, d.action)
        return f"until decided: {what} at look {d.look} ({min(d.n_a, d.n_b)} runs each)"

    def summary(self) -> dict[str, Any]:
        """The design and its looks, for the session's metadata."""
        return {"options": self.options.to_dict(), "design": self.design.to_dict(),
                "decision": self.decision.to_dict() if self.decision else None}
