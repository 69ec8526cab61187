"""Sessions whose runs the caller chooses one at a time (machine profiles, calibration trials).

A machine profile decides its next run from the results so far (extra rounds for noisy methods
while a time budget lasts) and reads each run's result from a file the program wrote; it does
not fit a fixed :class:`~benchlab.core.plan.RunPlan`. It still executes the way every run does:
placed by a :class:`~benchlab.core.plan.Placement` (prepared and checked once, before the
session exists), spawned and measured by the core, written through the one session writer.
The caller only says which benchmark runs next and what its run reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchlab.core.placement import Execution, prepare_execution
from benchlab.core.plan import Placement
from benchlab.core.scratch import make_scratch, remove_scratch, sweep_dead_scratch
from benchlab.measure.spawn import RunMeasurement
from benchlab.store import session_metadata
from benchlab.store.db import SessionRef, Store
from benchlab.store.writer import SessionWriter


def placement_for_limits(limits: Any, cpus: Sequence[int] | None, *,
                         accounting: bool = True) -> Placement:
    """The placement for runs under ``limits`` (a :class:`benchlab.control.cgroups.CgroupLimits`
    or None) pinned to ``cpus``: limits in a cgroup of their own (required), or without limits a
    cgroup for CPU accounting only (optional: dropped where cgroups cannot be made) when
    ``accounting``, else no cgroup. Quota and period in microseconds, memory in bytes."""
    from benchlab.units import format_cpu_list

    limited = limits is not None and not limits.unconstrained
    return Placement(
        affinity=f"cores:{format_cpu_list(cpus)}" if cpus else "none",
        isolation="cgroup" if limited or accounting else "bare",
        cpu_quota_us=limits.cpu_quota_us if limited else None,
        cpu_period_us=limits.cpu_period_us if limited else None,
        cpu_weight=limits.cpu_weight if limited else None,
        cpuset=format_cpu_list(limits.cpuset_cpus) if limited and limits.cpuset_cpus else None,
        memory_limit_bytes=limits.memory_limit_bytes if limited else None,
        allow_unconstrained=not limited)


class DrivenSession:
    """Execute and store the runs a caller asks for, under one placement.

    End with :meth:`finish` and then :meth:`close` (in a ``finally``): the scratch directory is
    removed and the session never stays ``running``.
    """

    def __init__(self, execution: Execution, writer: SessionWriter | None,
                 bench_ids: dict[str, int], label: str):
        self.execution = execution
        self.writer = writer
        self.bench_ids = bench_ids
        self.scratch = make_scratch(label)
        self.seq = 0
        self.finished = False

    @classmethod
    def start(cls, store: Store | None, placement: Placement, *, kind: str, name: str,
              benchmarks: Sequence[Mapping[str, Any]], metrics: Sequence[Mapping[str, Any]] = (),
              environment: Mapping[str, Any] | None = None,
              metadata: Mapping[str, Any] | None = None,
              source: str | None = None) -> "DrivenSession":
        """Check ``placement`` on this machine, then (with a store) create the session.

        ``benchmarks``: ``{"name", "argv", "parameters"}`` each; ``metrics``: ``{"name", "unit",
        "origin"}`` each. Raises UserError before anything is stored when the placement cannot
        be had (e.g. no permission for a CPU quota).
        """
        sweep_dead_scratch()
        execution = prepare_execution(placement, session_label=kind)
        if store is None:
            return cls(execution, None, {}, kind)
        writer = SessionWriter.create(store, kind, name=name, environment=environment or None,
                                      metadata=dict(metadata or {}),
                                      protocol={"placement": placement.to_dict()},
                                      source=source)
        try:
            for spec in metrics:
                writer.add_metric(spec["name"], unit=spec.get("unit"), origin=spec["origin"])
            bench_ids = {}
            for position, bench in enumerate(benchmarks):
                argv = list(bench["argv"]) if bench.get("argv") else None
                bench_ids[bench["name"]] = writer.add_benchmark(
                    bench["name"], position=position, argv=argv,
                    command=" ".join(argv) if argv else None, parameters=bench.get("parameters"))
        except BaseException:
            writer.finish("failed")
            raise
        return cls(execution, writer, bench_ids, writer.ref.uid)

    @property
    def ref(self) -> SessionRef | None:
        """The stored session (None when no store was given)."""
        return self.writer.ref if self.writer is not None else None

    def execute(self, argv: list[str], *, stdout_path: str | None, stderr_path: str | None,
                timeout_s: float | None) -> tuple[RunMeasurement, dict[str, float] | None]:
        """Run ``argv`` once under the placement; return the measurement and, when the run had
        its own cgroup, its accounting by name (``cpu_time_ns``, ``nr_throttled``, ...)."""
        m, measurements, _notes = self.execution.run(
            list(argv), worker=0, cwd=None, timeout_s=timeout_s, stdout_path=stdout_path,
            stderr_path=stderr_path, scratch=self.scratch)
        usage = {r["name"]: r["value"] for r in measurements
                 if r.get("source") == "cgroup" and r.get("value") is not None}
        return m, (usage or None) if self.execution.use_cgroup else None

    def record(self, benchmark: str, iteration: int, fields: Mapping[str, Any],
               samples: Mapping[str, Sequence[float]] | None = None) -> None:
        """Store one finished run of ``benchmark`` (no-op without a store)."""
        if self.writer is None:
            return
        self.writer.add_run(self.bench_ids[benchmark], seq=self.seq, iteration=iteration,
                            fields=dict(fields), samples=samples or {})
        self.seq += 1

    def finish(self, status: str, metadata: Mapping[str, Any] | None = None) -> None:
        """End the session (``done``, ``interrupted`` or ``failed``) with its final metadata."""
        if self.writer is not None and not self.finished:
            if metadata is not None:
                session_metadata.merge(self.writer.store, self.writer.ref.id, **metadata)
            self.writer.finish(status)
        self.finished = True

    def close(self) -> None:
        """Remove the scratch directory; a session not finished yet is marked ``failed``."""
        remove_scratch(self.scratch)
        if not self.finished:
            self.finish("failed")
