"""Lanes of a cluster session: a planner, the machines that may serve it, the runs in flight.

A lane hands out one planned run per free slot. A run counts as done for planning the moment it
is sent (:meth:`~benchlab.core.planner.RunPlanner.reserve`), so the planner does not hand it out
twice; a lost run goes back to
its lane's ``retry`` list with its sequence number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchlab.core.planner import PlannedRun, RunPlanner


@dataclass
class Lane:
    """A planner and the machines that may serve it (one slot each at a time)."""

    index: int
    planner: RunPlanner
    machines: list[str]
    capacity: int
    retry: list[tuple[PlannedRun, int]] = field(default_factory=list)
    inflight: int = 0
    abandoned: bool = False


@dataclass
class Inflight:
    """A run sent to a machine slot, neither stored nor lost yet (its sequence number kept)."""

    lane: Lane
    planned: PlannedRun
    seq: int
    machine: str
    address: str
    slot: int
