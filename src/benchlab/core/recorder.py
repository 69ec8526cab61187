"""The one object that stores a session's runs, wherever they executed.

A session's runs execute on this machine (worker threads, :mod:`benchlab.core.local`) or on a
Dask cluster (lanes, :mod:`benchlab.core.cluster.dispatch`); either way every finished run goes
through :class:`RunRecorder`, which

- restores the planners from what a resumed session already stored (:func:`restore_planners`);
- writes the run (its sequence number given when it was sent, or the next free one), unless that
  sequence number is stored already (a run re-sent after a lost worker is never stored twice);
- counts it by benchmark and status, updates the planners' estimates and the stored protocol;
- lets the sequential design (``--until-decided``) look at the data, on this process, as runs
  arrive, and asks every lane to stop once it decides;
- notes the first failure (the session stops, then fails with that one line);
- records runs lost with their worker (``lost_runs`` in the session's metadata);
- writes counted runs (``--count instructions``) with the same accounting.

It never executes anything, so tests of storing, counting and stopping need no process.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from benchlab.core.counted import COUNT_METHOD
from benchlab.core.plan import RunPlan
from benchlab.core.planner import PlannedRun, RunPlanner
from benchlab.core.run_one import MeasuredRun, run_fields
from benchlab.core.session_types import Observer, RunFailed, SessionResult, merge_metadata
from benchlab.errors import UserError
from benchlab.store.connection import utc_now
from benchlab.store.writer import SessionWriter


def failure_text(plan: RunPlan, run: MeasuredRun, uid: str) -> str | None:
    """The one line a run's failure ends its session with (None: the plan tolerates it)."""
    m = run.measurement
    if run.failure:
        return f"{run.failure}; the run is stored in session {uid}"
    if plan.tolerates(m.status, m.exit_code):
        return None
    what = {"failed": f"exited with code {m.exit_code}",
            "signaled": f"was killed by signal {m.signal}",
            "timeout": f"timed out after {plan.timeout_s} s",
            "error": f"could not start ({m.error})",
            "interrupted": "was interrupted"}.get(m.status, m.status)
    command = plan.benchmarks[run.planned.benchmark].command
    return (f"command {command!r} {what}; the run is stored in session {uid}; use "
            f"--ignore-failure (-i, or -i={m.exit_code or 'CODES'} for this exit code only) to "
            f"keep measuring failing commands")


def restore_planners(plan: RunPlan, stored_runs: list[dict[str, Any]], bench_ids: list[int],
                     lanes: int, lane_of: Callable[[dict[str, Any]], int]) -> list[RunPlanner]:
    """One planner per lane that continues from the runs already stored (a resumed session).

    ``lane_of(run_row)`` names the lane a stored run belongs to. Counted runs
    (``--count``) are not timed runs and are left out. Elapsed time is in seconds.
    """
    n = len(bench_ids)
    done_w = [[0] * n for _ in range(lanes)]
    done_r = [[0] * n for _ in range(lanes)]
    elapsed = [0.0] * lanes
    first_wall: list[float | None] = [None] * n
    for run in stored_runs:
        if run["spawn_method"] == COUNT_METHOD:
            continue
        i = bench_ids.index(run["benchmark_id"])
        lane = min(lane_of(run), lanes - 1)
        if run["warmup"]:
            done_w[lane][i] += 1
        else:
            done_r[lane][i] += 1
            if first_wall[i] is None and run["status"] == "ok" and run["wall_ns"]:
                first_wall[i] = run["wall_ns"] / 1e9
        elapsed[lane] += (run["wall_ns"] or 0) / 1e9
    planners = []
    for k in range(lanes):
        planner = RunPlanner(plan, done_w[k], done_r[k], elapsed[k], worker=k)
        planner.first_wall_s = list(first_wall)
        planners.append(planner)
    return planners


class RunRecorder:
    """Stores, counts and judges a session's runs (see the module docstring).

    Thread-safe: local worker threads call :meth:`record` concurrently.
    """

    def __init__(self, writer: SessionWriter, plan: RunPlan, observer: Observer):
        self.writer = writer
        self.store = writer.store
        self.plan = plan
        self.observer = observer
        self.uid = writer.ref.uid
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.failure: str | None = None
        self.result = SessionResult(session=writer.ref, status="running")
        benches = self.store.benchmarks(writer.ref.id)
        self.bench_ids = [b["id"] for b in benches]
        self.setup_ids = [b["setup_id"] for b in benches]
        self.stored_runs = self.store.runs(session_id=writer.ref.id)
        self.written = {r["seq"] for r in self.stored_runs}
        self.seq = self.store.next_seq(writer.ref.id)
        self.done = 0
        self.planners: list[RunPlanner] = []
        self.total_of: Callable[[], int | None] = self._planned_total
        self.stopper = self._stopper()

    def _stopper(self):
        if self.plan.until_decided is None:
            return None
        from benchlab.core.until_decided import SequentialStopper, UntilDecided

        if self.plan.placement.workers != 1:
            raise UserError("--until-decided runs one worker; drop --workers")
        return SequentialStopper(self.store, self.writer.ref.id, self.bench_ids,
                                 self.plan.runs or self.plan.max_runs or 1000,
                                 UntilDecided(**self.plan.until_decided))

    def restore(self, lanes: int, lane_of: Callable[[dict[str, Any]], int]) -> list[RunPlanner]:
        """The planners of ``lanes`` lanes, continued from the stored runs; kept for estimates."""
        self.planners = restore_planners(self.plan, self.stored_runs, self.bench_ids, lanes,
                                         lane_of)
        return self.planners

    def _planned_total(self) -> int | None:
        totals = [p.total() for p in self.planners]
        return None if None in totals else sum(totals)  # type: ignore[arg-type]

    def total(self) -> int | None:
        """Measured runs of the whole session, or None while a count is still unknown."""
        return self.total_of()

    def take_seq(self) -> int:
        """The next sequence number, for a run sent now (the cluster numbers runs as it sends)."""
        with self.lock:
            self.seq += 1
            return self.seq - 1

    def record(self, run: MeasuredRun, planner: RunPlanner, *, seq: int | None = None,
               setup_id: int | None = None, shell_overhead_ns: int | None = None,
               machine: str | None = None, sent: bool = False) -> bool:
        """Write one run and account for it; False when ``seq`` was stored already.

        ``planner``: the lane's planner (``sent``: it counted the run when the run was sent).
        ``setup_id``: the run's setup (default: its benchmark's). ``machine``: the cluster
        machine it ran on (named in a failure). ``shell_overhead_ns`` (ns): subtracted from wall.
        """
        plan, planned, m = self.plan, run.planned, run.measurement
        i = planned.benchmark
        with self.lock:
            if seq is None:
                seq = self.take_seq()
            if seq in self.written:
                return False
            self.writer.add_run(self.bench_ids[i], seq=seq, iteration=planned.iteration,
                                warmup=planned.warmup, worker=run.worker,
                                setup_id=setup_id if setup_id is not None else self.setup_ids[i],
                                fields=run_fields(m, run.extra, shell_overhead_ns),
                                samples=run.samples, measurements=run.measurements)
            self.written.add(seq)
            self.done += 1
            self._count(plan.benchmarks[i].name, m.status)
            planner.record(planned, m.wall_ns / 1e9 if m.status == "ok" else None,
                           counted=sent)
            for other in self.planners:  # the first measured run sets every lane's estimate
                if other.first_wall_s[i] is None:
                    other.first_wall_s[i] = planner.first_wall_s[i]
            if planned.iteration == 0 and not planned.warmup and plan.runs is None:
                self.total()  # fixes planned_runs in the plan before it is stored
                self.writer.update(protocol=plan.to_dict())
            self.observer.run_finished(plan.benchmarks[i].name, planned, m, self.total(),
                                       self.done)
            if self.stopper is not None and not planned.warmup:
                self._look()
            # an ok run reporting no failure of its own ends nothing (failure_text: None)
            failure = (failure_text(plan, run, self.uid) if run.failure or m.status != "ok"
                       else None)
            if failure and self.failure is None:
                self.fail(f"on {machine}: {failure}" if machine else failure)
            return True

    def _count(self, name: str, status: str) -> None:
        counts = self.result.counts.setdefault(name, {})
        counts[status] = counts.get(status, 0) + 1

    def fail(self, text: str) -> None:
        """Note the session's failure (the first one wins) and stop every lane."""
        with self.lock:
            if self.failure is None:
                self.failure = text
            self.stop.set()

    def _look(self) -> None:
        """Let the sequential design look at the data; store its looks so a resume replays them."""
        looks_before = len(self.stopper.options.looks)
        if self.stopper.after_run():
            self.observer.message(self.stopper.stop_note())
            self.stop.set()
        if len(self.stopper.options.looks) != looks_before:
            self.plan.until_decided = self.stopper.options.to_dict()
            self.writer.update(protocol=self.plan.to_dict())
            merge_metadata(self.writer, {"until_decided": self.stopper.summary()})

    def lost(self, seq: int, planned: PlannedRun, *, machine: str, address: str, reason: str,
             requeued: bool) -> None:
        """Record a run lost with its worker in the session's ``lost_runs`` metadata."""
        name = self.plan.benchmarks[planned.benchmark].name
        entry = {"seq": seq, "benchmark": name, "iteration": planned.iteration,
                 "warmup": planned.warmup, "machine": machine, "address": address,
                 "reason": reason, "at_utc": utc_now(), "requeued": requeued}
        from benchlab.store import session_metadata  # only on a cluster that lost a worker

        with self.lock:  # the store's connection is shared by the lanes' threads
            session_metadata.append(self.writer.store, self.writer.ref.id, "lost_runs", entry)
        self.observer.message(f"run {seq} of {name} on {machine} lost: {reason}"
                              f"{'; re-queued' if requeued else ''}")

    def counted_done(self, machine: str | None = None) -> dict[int, int]:
        """Counted runs stored by benchmark index (on ``machine`` only, when given)."""
        done: dict[int, int] = {}
        for row in self.store.runs(session_id=self.writer.ref.id):
            if row["spawn_method"] != COUNT_METHOD:
                continue
            if machine is not None and (row.get("extra") or {}).get("machine") != machine:
                continue
            i = self.bench_ids.index(row["benchmark_id"])
            done[i] = done.get(i, 0) + 1
        return done

    def record_counted(self, index: int, iteration: int, fields: dict[str, Any],
                       samples: dict[str, list[float]], *, worker: int = 0,
                       setup_id: int | None = None, machine: str | None = None) -> None:
        """Write one counted run (``--count instructions``); UserError when it failed and the
        plan does not tolerate it (the run is stored first, as a timed run's would be)."""
        plan = self.plan
        with self.lock:
            if not any(m["name"] == "instructions" for m in self.store.metrics(self.writer.ref.id)):
                self.writer.add_metric("instructions", unit="count", origin=COUNT_METHOD)
            if machine is not None:
                fields = {**fields, "extra": {**(fields.get("extra") or {}), "machine": machine}}
            self.writer.add_run(self.bench_ids[index], iteration=iteration, warmup=False,
                                worker=worker,
                                setup_id=setup_id if setup_id is not None
                                else self.setup_ids[index], fields=fields, samples=samples)
            self._count(plan.benchmarks[index].name, fields["status"])
        if not plan.tolerates(fields["status"], fields.get("exit_code")):
            why = fields.get("error") or f"exited with code {fields.get('exit_code')}"
            where = f" on {machine}" if machine else ""
            raise RunFailed(f"command {plan.benchmarks[index].command!r} {why} when counted "
                            f"under valgrind{where}; the run is stored in session {self.uid}; "
                            f"use --ignore-failure (-i) to keep going")
