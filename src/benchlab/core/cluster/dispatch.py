"""The client's loop of a cluster session: planned runs out, results into the store as they come.

*Lanes*: with ``--on`` every chosen machine runs the whole protocol, so each (machine, slot)
is a lane with its own :class:`~benchlab.core.planner.RunPlanner` that only that machine
serves; with ``--spread`` (machines declared identical) one lane's planner feeds every slot of
every machine. A planned run gets its sequence number when it is sent; a run is written only
if its sequence number is not stored yet, so a run re-sent after a lost worker is never stored
twice. Runs are written through the session's :class:`~benchlab.core.recorder.RunRecorder` (the
same one a session on this machine uses: counts, ``--until-decided``'s looks on the client,
failures) the moment their future completes (``as_completed``); ``runs.worker`` is the lane index (machine index ×
slots + slot) and the run's setup row names the machine, its host and its environment.

Faults. A worker that dies mid-run (kill -9, a lost machine) shows up as a ``KilledWorker``
error or as its address leaving the scheduler: the run is recorded as lost in the session's
metadata (``lost_runs``: sequence number, benchmark, iteration, machine, reason, time) and
re-queued, on the same machine when it comes back (Dask's nanny restarts a killed worker under
its name) or on any machine with ``--spread``. A machine that stays away longer than
``machine_grace_s`` is given up: the other machines finish and the session ends
``interrupted`` with a one-line error naming it and the resume command. A scheduler that goes
away ends the session ``interrupted`` with everything received kept.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from benchlab.core.cluster.address import SLOT, Machine, machines_of
from benchlab.core.cluster.lanes import Inflight, Lane
from benchlab.core.cluster.worker_side import run_one
from benchlab.core.planner import PlannedRun
from benchlab.core.recorder import RunRecorder
from benchlab.core.run_one import MeasuredRun
from benchlab.core.session_types import RunFailed, SessionResult
from benchlab.errors import UserError
from benchlab.measure.spawn import RunMeasurement
from benchlab.store.writer import environment_fingerprint

POLL_S = 0.05
CHECK_MACHINES_S = 0.5


class SchedulerGone(Exception):
    """The Dask scheduler stopped answering; everything received is stored."""


class ClusterDispatch:
    """One cluster session's execution (see the module docstring). Call :meth:`run`."""

    def __init__(self, client: Any, recorder: RunRecorder, machines: list[Machine],
                 *, spread: bool, setup_ids: dict[str, int], machine_grace_s: float = 60.0,
                 machine_plans: dict[str, dict[str, Any]] | None = None):
        self.client, self.recorder = client, recorder
        self.plan, self.observer = recorder.plan, recorder.observer
        self.store = recorder.store
        self.uid = recorder.uid
        self.plan_dict = self.plan.to_dict()
        # a machine's own placement (its calibrated quota), else the plan's
        self.machine_plans = machine_plans or {}
        self.slots = self.plan.placement.workers
        self.labels = [m.label for m in machines]
        self.address: dict[str, str | None] = {m.label: m.address for m in machines}
        self.host = {m.label: m.host for m in machines}
        self.busy: dict[str, set[int]] = {m.label: set() for m in machines}
        self.down_since: dict[str, float] = {}
        self.dead: set[str] = set()  # addresses of workers that died (never sent to again)
        self.env_known: set[str] = {m.address for m in machines}  # probed before the session
        self.setup_ids = dict(setup_ids)
        self.shell_ns: dict[str, int | None] = {}
        self.grace_s = machine_grace_s
        self.spread = spread
        self.inflight: dict[str, Inflight] = {}
        self.lanes = self._restore_lanes()
        recorder.total_of = self.total
        self.done_by_machine: dict[str, int] = {label: 0 for label in self.labels}
        self.failed_machines: dict[str, str] = {}

    @property
    def done(self) -> int:
        """Runs stored by this dispatch."""
        return self.recorder.done

    # -- planning ------------------------------------------------------------------------

    def _restore_lanes(self) -> list[Lane]:
        """Lanes that continue from the runs already stored (a resumed session)."""
        count = 1 if self.spread else len(self.labels) * self.slots
        planners = self.recorder.restore(count, lambda run: 0 if self.spread else run["worker"])
        return [Lane(k, planner, self.labels if self.spread else [self.labels[k // self.slots]],
                     len(self.labels) * self.slots if self.spread else 1)
                for k, planner in enumerate(planners)]

    def total(self) -> int | None:
        """Measured runs of the whole session, or None while a count is unknown."""
        totals = [lane.planner.total() for lane in self.lanes if not lane.abandoned]
        return None if any(t is None for t in totals) else sum(totals)  # type: ignore[arg-type]

    def _next_for(self, lane: Lane) -> tuple[PlannedRun, int] | None:
        if lane.retry:
            return lane.retry.pop(0)
        planned = lane.planner.next()
        if planned is None:
            return None
        lane.planner.reserve(planned)
        return planned, self.recorder.take_seq()

    def _free_slot(self, lane: Lane) -> tuple[str, int] | None:
        for label in sorted(lane.machines, key=lambda lb: len(self.busy[lb])):
            if self.address.get(label) is None:
                continue
            free = [s for s in range(self.slots) if s not in self.busy[label]]
            if free:
                return label, free[0]
        return None

    def _dispatch(self) -> None:
        if self.recorder.stop.is_set():  # a failure, or --until-decided decided
            return
        for lane in self.lanes:
            while not lane.abandoned and lane.inflight < lane.capacity:
                where = self._free_slot(lane)
                if where is None:
                    break
                nxt = self._next_for(lane)
                if nxt is None:
                    break
                self._submit(lane, nxt[0], nxt[1], *where)

    def _submit(self, lane: Lane, planned: PlannedRun, seq: int, label: str, slot: int) -> None:
        address = self.address[label]
        want_env = address not in self.env_known
        fut = self.client.submit(
            run_one, self.machine_plans.get(label, self.plan_dict), self.uid, vars(planned),
            slot, want_env,
            key=f"benchlab-run-{self.uid}-{seq}-{time.monotonic_ns()}", pure=False,
            workers=[address], allow_other_workers=False, resources={SLOT: 1}, retries=0)
        self.inflight[fut.key] = Inflight(lane, planned, seq, label, address, slot)
        self.futures[fut.key] = fut
        self.busy[label].add(slot)
        lane.inflight += 1
        self.completed.add(fut)

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> SessionResult:
        """Execute until every lane is done; raise SchedulerGone, UserError or KeyboardInterrupt
        (the caller finishes the session)."""
        from distributed import as_completed

        from benchlab.core.session import raise_if_terminated

        self.futures: dict[str, Any] = {}
        self.completed = as_completed([], with_results=False, loop=self.client.loop)
        self.observer.started(self.recorder.writer.ref, self.plan, self.total())
        last_check = 0.0
        try:
            while True:
                raise_if_terminated()  # a SIGTERM whose KeyboardInterrupt a __del__ swallowed
                now = time.monotonic()
                if now - last_check >= CHECK_MACHINES_S:
                    self._check_machines()
                    last_check = now
                self._dispatch()
                if not self.inflight:
                    if self.recorder.stop.is_set() or not self._waiting_for_machines():
                        break
                ready = self.completed.next_batch(block=False) if self.completed.has_ready() \
                    else []
                for fut in ready:
                    self._finished(fut)
                if not ready:
                    time.sleep(POLL_S)
        except KeyboardInterrupt:
            self._stop_inflight()
            raise
        finally:
            for fut in self.futures.values():
                if fut.key in self.inflight:
                    fut.cancel()
        if self.recorder.failure is not None:
            raise RunFailed(self.recorder.failure)
        return self.recorder.result

    def _waiting_for_machines(self) -> bool:
        """True while a lane has work left and a machine it needs may still come back."""
        waiting = False
        for lane in self.lanes:
            if lane.abandoned:
                continue
            if not lane.retry and not lane.planner.has_work():
                continue
            alive = [lb for lb in lane.machines if self.address.get(lb) is not None]
            if alive:
                waiting = True
                continue
            gone_for = min(time.monotonic() - self.down_since.get(lb, time.monotonic())
                           for lb in lane.machines)
            if gone_for > self.grace_s:
                lane.abandoned = True
                for lb in lane.machines:
                    self.failed_machines.setdefault(lb, "lost and not back")
            else:
                waiting = True
        return waiting

    def _check_machines(self) -> None:
        """Notice workers that left (their runs are lost) and machines that came back."""
        try:
            status = getattr(self.client, "status", "running")
            if status not in ("running", "newly-created"):
                raise SchedulerGone(f"client {status}")
            current = {m.label: m for m in machines_of(self.client)}
        except SchedulerGone:
            raise
        except Exception as exc:  # OSError, CommClosedError, TimeoutError
            raise SchedulerGone(str(exc) or type(exc).__name__) from None
        for label in self.labels:
            m = current.get(label)
            old = self.address.get(label)
            if m is not None and m.slots >= 1 and m.address not in self.dead:
                if old != m.address:
                    if old is not None:
                        self._machine_lost(label, old, "the worker process was replaced")
                    self.address[label] = m.address
                    self.down_since.pop(label, None)
                    self.observer.message(f"machine {label} is back ({m.address})")
            elif old is not None:
                self._machine_lost(label, old, "the worker left the cluster")

    def _machine_lost(self, label: str, address: str, reason: str) -> None:
        self.dead.add(address)
        if self.address.get(label) == address:
            self.address[label] = None
            self.down_since[label] = time.monotonic()
        for key, entry in list(self.inflight.items()):
            if entry.address == address:
                self._lost(key, f"{reason} ({address}) during the run")

    def _stop_inflight(self) -> None:
        """Ctrl-C/SIGTERM of the client: kill this session's runs where they execute (a team's
        workers would finish them otherwise), store a run that had finished meanwhile, record
        the killed ones as lost (not re-queued: a resume plans them again)."""
        if not self.inflight:
            return
        from benchlab.core.cluster.stop import stop_runs_on

        stop_runs_on(self.client, self.uid, sorted({e.address for e in self.inflight.values()}))
        for key, entry in list(self.inflight.items()):
            fut, result = self.futures.get(key), None
            if fut is not None and fut.status == "finished":
                with contextlib.suppress(Exception):  # its worker is gone: nothing to keep
                    result = fut.result(timeout=5)
            if result is not None and not result.get("stopped"):
                del self.inflight[key]
                self.futures.pop(key, None)
                self._store(entry, result)
                continue
            self._lost(key, "the client was interrupted; the run was killed on its worker",
                       requeue=False)

    def _lost(self, key: str, reason: str, requeue: bool = True) -> None:
        entry = self.inflight.pop(key)
        fut = self.futures.pop(key, None)
        if fut is not None:
            fut.cancel()
        self.busy[entry.machine].discard(entry.slot)
        entry.lane.inflight -= 1
        if requeue:
            entry.lane.retry.append((entry.planned, entry.seq))
        self.recorder.lost(entry.seq, entry.planned, machine=entry.machine,
                           address=entry.address, reason=reason, requeued=requeue)

    def _finished(self, fut: Any) -> None:
        entry = self.inflight.get(fut.key)
        if entry is None:
            return  # already counted as lost (and re-queued) or cancelled by us
        if fut.status == "finished":
            try:
                result = fut.result()
            except Exception as exc:  # the result could not be fetched: the worker died
                self._lost(fut.key, f"its result could not be fetched ({exc})")
                return
            if result.get("stopped"):
                # the session was stopped on that worker (an interrupted client's stop still
                # repeating there as this resume began): not a measurement, so it runs again
                self._lost(fut.key, "it was stopped on its worker")
                return
            del self.inflight[fut.key]
            self.futures.pop(fut.key, None)
            self.busy[entry.machine].discard(entry.slot)
            entry.lane.inflight -= 1
            self._store(entry, result)
            return
        exc = fut.exception() if fut.status == "error" else None
        if exc is None or type(exc).__name__ in ("KilledWorker", "CommClosedError",
                                                 "FutureCancelledError"):
            # the whole worker is gone, not just this run: nothing more goes to its address
            self._machine_lost(entry.machine, entry.address,
                               f"the worker died ({type(exc).__name__ if exc else fut.status})")
            return
        del self.inflight[fut.key]
        self.futures.pop(fut.key, None)
        self.busy[entry.machine].discard(entry.slot)
        entry.lane.inflight -= 1
        self.recorder.fail(str(exc) if isinstance(exc, UserError)
                           else f"a run on {entry.machine} raised {type(exc).__name__}: {exc}")

    # -- writing -------------------------------------------------------------------------

    def _store(self, entry: Inflight, result: dict[str, Any]) -> None:
        """Write one run (unless its sequence number is stored already) and account for it."""
        if entry.seq in self.recorder.written:
            return
        label = entry.machine
        if result.get("environment") is not None:
            self.env_known.add(entry.address)
            env = result["environment"]
            env_id = self.store.put_environment(env, environment_fingerprint(env))
            self.setup_ids[label] = self.store.put_setup(
                {**result["setup"], "machine": label, "host": result["host"],
                 "environment_id": env_id, "slots": self.slots})
        m = RunMeasurement(**result["measurement"])
        extra = dict(result.get("extra") or {})
        extra.update(machine=label, host=result["host"], worker_pid=result["pid"],
                     quiet=result.get("quiet"))
        worker = entry.lane.index if not self.spread else \
            self.labels.index(label) * self.slots + entry.slot
        run = MeasuredRun(entry.planned, worker, m, result.get("measurements") or [], extra,
                          result.get("samples") or {}, result.get("failure"))
        if not self.recorder.record(run, entry.lane.planner, seq=entry.seq,
                                    setup_id=self.setup_ids.get(label),
                                    shell_overhead_ns=self.shell_ns.get(label), machine=label,
                                    sent=True):
            return
        self.done_by_machine[label] = self.done_by_machine.get(label, 0) + 1
        progress = getattr(self.observer, "machine_progress", None)
        if progress is not None:
            progress(label, self.done_by_machine[label], self._machine_total(label))

    def _machine_total(self, label: str) -> int | None:
        if self.spread:
            return None
        k = self.labels.index(label) * self.slots
        totals = [lane.planner.total() for lane in self.lanes[k:k + self.slots]]
        if any(t is None for t in totals):
            return None
        warm = self.plan.warmup * len(self.plan.benchmarks)
        return sum(totals) + warm * self.slots  # type: ignore[arg-type]
