"""Start, resume and end a cluster session (``benchlab run --cluster``).

Before the session exists, every chosen machine validates the plan where it will run (its
executables, its placement) and describes itself; a machine that cannot run the plan is a
one-line UserError naming it, and nothing is stored. The session stores the plan and the
cluster (address, ``--on`` machines, ``--spread``) in its metadata, so ``benchlab run --resume``
reconnects and completes it; each machine's environment and setup are stored once and its runs
point at them (``runs.setup_id``; the setup names the machine, host and ``environment_id``).

Every option of a session on this machine works here: ``--load`` runs beside the runs on each
machine (started after its setup hooks, stopped at its end or when the client is interrupted);
``--until-decided`` looks at the data on the client as runs stream in and stops every lane
once it decides; ``--count instructions`` counts each benchmark on each machine (on one with
``--spread``) after the timed runs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from benchlab.core.cluster.address import (
    ClusterSpec,
    Machine,
    choose_machines,
    machines_of,
    open_cluster,
    parse_cluster,
)
from benchlab.core.cluster.dispatch import ClusterDispatch, SchedulerGone
from benchlab.core.cluster.worker_side import (
    begin_machine,
    count_one_here,
    finish_machine,
    probe_machine,
)
from benchlab.core.counted import counts_missing
from benchlab.core.executor import SessionStopped, ending_session
from benchlab.core.plan import RunPlan
from benchlab.core.recorder import RunRecorder
from benchlab.core.session import create_session, interruptible
from benchlab.core.session_types import Observer, SessionResult, Silent, merge_metadata
from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.writer import SessionWriter, environment_fingerprint

#: How long a lost machine is waited for before it is given up, when nothing says otherwise (s).
DEFAULT_LOST_AFTER_S = 60.0


@dataclass
class SharedCluster:
    """A cluster opened once for several sessions (a study's cells): its spec and client."""

    spec: ClusterSpec
    client: Any


@contextlib.contextmanager
def open_shared_cluster(cluster: str, *, slots: int = 1,
                        connect_options: dict[str, Any] | None = None
                        ) -> Iterator[SharedCluster]:
    """Start (``local:N``, ``ssh:``) or connect to (``tcp://``) ``cluster`` once for many sessions.

    Why: a study used to start and stop a LocalCluster or SSHCluster per cell (seconds each, and
    new worker processes, so new environments, between cells). ``slots``: benchlab slots per
    machine of a cluster benchlab starts (the largest ``--workers`` any session will ask for).
    The cluster benchlab started is shut down when the block ends, however it ends (an error,
    Ctrl-C, SIGTERM turned into Ctrl-C by :func:`benchlab.core.session.interruptible`).
    """
    spec = parse_cluster(cluster)
    with open_cluster(spec, slots=slots, connect_options=connect_options) as client:
        yield SharedCluster(spec, client)


@contextlib.contextmanager
def _connected(spec: ClusterSpec, slots: int, connect_options: dict[str, Any] | None,
               shared: SharedCluster | None) -> Iterator[Any]:
    """The shared cluster's client when one is given (left open), else a cluster of its own."""
    if shared is not None:
        if shared.spec.text != spec.text:
            raise UserError(f"this session's cluster {spec.text} is not the open cluster "
                            f"{shared.spec.text}; resume it on its own with --cluster")
        yield shared.client
        return
    with open_cluster(spec, slots=slots, connect_options=connect_options) as client:
        yield client


def machine_plans(plan: RunPlan, machines: list[Machine],
                  placements: dict[str, dict[str, Any] | None] | None) -> dict[str, dict]:
    """Each machine's plan dict: the plan with that machine's placement changes applied
    (``placements[label]``: e.g. its calibrated ``cpu_quota_us``/``cpu_period_us``; None: none).

    Raises UserError when ``placements`` is given and lacks a chosen machine.
    """
    base = plan.to_dict()
    if placements is None:
        return {m.label: base for m in machines}
    missing = [m.label for m in machines if m.label not in placements]
    if missing:
        raise UserError(f"the calibration has no quota for {', '.join(missing)} (it has "
                        f"{', '.join(placements) or 'none'}); calibrate them with `benchlab "
                        f"calibrate --cluster` or choose others with --on")
    return {m.label: {**base, "placement": {**base["placement"], **(placements[m.label] or {})}}
            for m in machines}


def _on_each(client: Any, machines: list[Machine], fn, *args,
             plans: dict[str, dict] | None = None) -> list[Any]:
    """Run ``fn(*args)`` once on each machine (``fn(plan, *args)`` with ``plans``: that
    machine's plan first); a UserError there names the machine."""
    futures = [client.submit(fn, *(((plans[m.label],) if plans else ()) + args),
                             workers=[m.address], allow_other_workers=False,
                             pure=False, retries=0) for m in machines]
    results = []
    for m, fut in zip(machines, futures):
        try:
            results.append(fut.result())
        except UserError as exc:
            raise UserError(f"on {m.label}: {exc}") from None
        except Exception as exc:
            raise UserError(f"on {m.label}: {type(exc).__name__}: {exc}; check the worker's "
                            f"log") from None
    return results


def _store_machines(store: Store, machines: list[Machine], probes: list[dict], slots: int
                    ) -> dict[str, int]:
    """One environment and one setup row per machine; return setup ids by machine label."""
    setup_ids = {}
    for m, probe in zip(machines, probes):
        env = probe["environment"]
        env_id = store.put_environment(env, environment_fingerprint(env))
        setup_ids[m.label] = store.put_setup({**probe["setup"], "machine": m.label,
                                              "host": probe["host"], "environment_id": env_id,
                                              "slots": slots})
    return setup_ids


def run_cluster_plan(store: Store, plan: RunPlan, cluster: str, *, on: str = "all",
                     spread: bool = False, argv: Sequence[str] | None = None,
                     name: str | None = None, observer: Observer | None = None, on_start=None,
                     connect_options: dict[str, Any] | None = None,
                     machine_grace_s: float | None = None,
                     placements: dict[str, dict[str, Any] | None] | None = None,
                     parent: Any = None, shared: SharedCluster | None = None) -> SessionResult:
    """Run ``plan`` on the machines of ``cluster`` (``--on``), or spread over them.

    ``placements``: each machine's own placement changes by label (``run --calibration`` with
    a fleet calibration: its quota), stored with the session for a resume. ``parent``: the
    session this one belongs to (a study's cell). ``machine_grace_s``: how long a lost machine
    is waited for before it is given up (``--lost-after``, s; None: 60 s; stored for a
    resume). ``shared``:
    an already open cluster (:func:`open_shared_cluster`) used instead of opening one.

    Raises UserError (nothing stored) for a bad address, an unreachable cluster, or a machine
    that cannot run the plan; once the session exists, as :func:`benchlab.core.session.run_plan`
    (SessionInterrupted on Ctrl-C/SIGTERM, UserError when a run fails or the scheduler goes).
    """
    from benchlab.environment import collect_environment

    spec = parse_cluster(cluster)
    plan.placement.validate()
    machine_grace_s = machine_grace_s or DEFAULT_LOST_AFTER_S
    with interruptible(), _connected(spec, plan.placement.workers, connect_options,
                                     shared) as client:
        machines = choose_machines(machines_of(client), on, spec.text)
        _check_slots(machines, plan.placement.workers)
        plans = machine_plans(plan, machines, placements)
        probes = _on_each(client, machines, probe_machine, list(argv) if argv else None,
                          plans=plans)
        meta = {"cluster": {"address": spec.text, "on": on, "spread": spread,
                            "machines": [m.label for m in machines],
                            "placements": placements, "lost_after_s": machine_grace_s,
                            "hosts": {m.label: p["host"] for m, p in zip(machines, probes)}}}
        setup_ids: dict[str, int] = {}

        def store_setups() -> int:
            setup_ids.update(_store_machines(store, machines, probes, plan.placement.workers))
            return setup_ids[machines[0].label]

        writer = create_session(
            store, plan, setup=store_setups, argv=argv, name=name, metadata=meta, parent=parent,
            environment=collect_environment(argv=argv, cwd=plan.cwd, env_key=store.env_key()))
        if on_start is not None:
            on_start(writer.ref)
        return _execute(client, writer, plan, machines, spread, observer, setup_ids,
                        spec.text, machine_grace_s, plans)


def resume_cluster_session(store: Store, key: str, *, cluster: str | None = None,
                           observer: Observer | None = None,
                           connect_options: dict[str, Any] | None = None,
                           machine_grace_s: float | None = None,
                           shared: SharedCluster | None = None) -> SessionResult:
    """Complete an interrupted cluster session on its stored cluster (or ``cluster``).

    The same machines (by label) must be in the cluster; UserError names a missing one.
    ``machine_grace_s`` (s): ``--lost-after``; None takes the session's stored value (60 s for
    sessions stored before it was). ``shared``: an already open cluster to use.
    """
    sess = store.get_session(key)
    info = (sess.get("metadata") or {}).get("cluster")
    if info is None:
        raise UserError(f"session {sess['uid']} did not run on a cluster; resume it without "
                        f"--cluster")
    if sess["status"] == "complete":
        raise UserError(f"session {sess['uid']} is already complete; nothing to resume")
    plan = RunPlan.from_dict(sess["protocol"])
    spec = parse_cluster(cluster or info["address"])
    if machine_grace_s is None:
        machine_grace_s = float(info.get("lost_after_s") or DEFAULT_LOST_AFTER_S)
    with interruptible(), _connected(spec, plan.placement.workers, connect_options,
                                     shared) as client:
        current = {m.label: m for m in machines_of(client)}
        missing = [label for label in info["machines"] if label not in current]
        if missing:
            raise UserError(f"session {sess['uid']} ran on {', '.join(info['machines'])}; "
                            f"{', '.join(missing)} not in {spec.text}; start those workers "
                            f"(same names) and resume again")
        machines = [current[label] for label in info["machines"]]
        _check_slots(machines, plan.placement.workers)
        plans = machine_plans(plan, machines, info.get("placements"))
        probes = _on_each(client, machines, probe_machine, None, plans=plans)
        writer = SessionWriter.resume(store, sess["uid"])
        setup_ids = _store_machines(store, machines, probes, plan.placement.workers)
        if cluster and cluster != info["address"]:
            merge_metadata(writer, {"cluster": {**info, "address": spec.text}})
        return _execute(client, writer, plan, machines, bool(info.get("spread")), observer,
                        setup_ids, spec.text, machine_grace_s, plans)


def _check_slots(machines: list[Machine], slots: int) -> None:
    few = [m.label for m in machines if m.slots < slots]
    if few:
        raise UserError(f"--workers {slots} needs {slots} benchlab-slot resources per machine; "
                        f"{', '.join(few)} offer fewer; restart their workers with "
                        f"--resources benchlab-slot={slots}")


def _execute(client: Any, writer: SessionWriter, plan: RunPlan, machines: list[Machine],
             spread: bool, observer: Observer | None, setup_ids: dict[str, int],
             address: str, machine_grace_s: float, plans: dict[str, dict]
             ) -> SessionResult:
    """Begin each machine, dispatch every run, count, finish each machine, end the session."""
    from benchlab.environment import load_average

    observer = observer or Silent()
    uid = writer.ref.uid
    resume = f"benchlab run --resume {uid} --cluster {address}"
    recorder: RunRecorder | None = None
    finished = scheduler_gone = False
    try:
        with ending_session(writer):
            recorder = RunRecorder(writer, plan, observer)
            begun = _on_each(client, machines, begin_machine, uid, plans=plans)
            loads = {m.label: b["load"] for m, b in zip(machines, begun) if b.get("load")}
            if loads:
                merge_metadata(writer, {"load": loads})
            dispatch = ClusterDispatch(client, recorder, machines, spread=spread,
                                       setup_ids=setup_ids, machine_grace_s=machine_grace_s,
                                       machine_plans=plans)
            for m, b in zip(machines, begun):
                cost = b.get("shell_overhead")
                dispatch.shell_ns[m.label] = cost["wall_ns"] if cost else None
            try:
                result = dispatch.run()
            except SchedulerGone as exc:
                scheduler_gone = True
                runs = len(writer.store.runs(session_id=writer.ref.id))
                raise SessionStopped(f"the Dask scheduler at {address} went away ({exc}); {runs} "
                                f"runs received are stored in session {uid}; resume with: "
                                f"{resume}") from None
            alive = [Machine(m.label, dispatch.address[m.label], m.host, m.name, m.slots)
                     for m in machines if dispatch.address.get(m.label) is not None]
            if plan.count and not dispatch.failed_machines:
                _count_on(client, recorder, alive[:1] if spread else alive, machines, plans,
                          spread, dispatch.setup_ids)
            with contextlib.suppress(UserError):
                _on_each(client, alive, finish_machine, uid, plans=plans)
            finished = True
            if dispatch.failed_machines:
                lost = ", ".join(sorted(dispatch.failed_machines))
                raise SessionStopped(f"machine(s) {lost} were lost and did not come back; the other "
                                f"machines finished; {dispatch.done} runs stored in session "
                                f"{uid}; resume with: {resume}")
            writer.finish("done", load_after=list(load_average()))
            result.status = "complete"
            return result
    finally:
        # failed or interrupted: stop the load, drop each machine's state; not through a
        # scheduler that went away (Client.run goes through it: the stop waited 12 s for nothing)
        if not finished and not scheduler_gone:
            from benchlab.core.cluster.stop import stop_runs_on

            stop_runs_on(client, uid, [m.address for m in machines], wait_s=2.0)
        if recorder is not None and recorder.stopper is not None:
            recorder.result.decision = recorder.stopper.summary()


def _count_on(client: Any, recorder: RunRecorder, counting: list[Machine],
              machines: list[Machine], plans: dict[str, dict], spread: bool,
              setup_ids: dict[str, int]) -> None:
    """``--count instructions``: the counted runs each machine (``--spread``: one) still
    misses, after the timed runs; each stored as it arrives (UserError when one fails)."""
    from distributed import as_completed

    from benchlab.core.cluster.address import SLOT

    slots = recorder.plan.placement.workers
    labels = [m.label for m in machines]
    futures = {}
    for m in counting:
        todo = counts_missing(recorder.plan, recorder.counted_done(None if spread else m.label))
        if todo:
            recorder.observer.message(f"counting instructions on {m.label} under cachegrind "
                                      f"({len(todo)} runs)")
        for i, k in todo:
            fut = client.submit(count_one_here, plans[m.label], recorder.uid, i,
                                workers=[m.address], allow_other_workers=False,
                                resources={SLOT: 1}, pure=False, retries=0)
            futures[fut] = (m, i, k)
    try:
        for fut in as_completed(list(futures), loop=client.loop):
            m, i, k = futures[fut]
            try:
                out = fut.result()
            except UserError as exc:
                raise UserError(f"on {m.label}: {exc}") from None
            if out.get("stopped"):
                continue
            recorder.record_counted(i, k, out["fields"], out["samples"],
                                    worker=labels.index(m.label) * slots,
                                    setup_id=setup_ids.get(m.label), machine=m.label)
    finally:
        for fut in futures:
            fut.cancel()

