"""Start, resume and end a cluster session (``benchlab run --cluster``).

Before the session exists, every chosen machine validates the plan where it will run (its
executables, its placement) and describes itself; a machine that cannot run the plan is a
one-line UserError naming it, and nothing is stored. The session stores the plan and the
cluster (address, ``--on`` machines, ``--spread``) in its metadata, so ``benchlab run --resume``
reconnects and completes it; each machine's environment and setup are stored once and its runs
point at them (``runs.setup_id``; the setup names the machine, host and ``environment_id``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from benchlab.core.cluster.address import (ClusterSpec, Machine, choose_machines, machines_of,
                                           open_cluster, parse_cluster)
from benchlab.core.cluster.dispatch import ClusterDispatch, SchedulerGone
from benchlab.core.cluster.worker_side import begin_machine, finish_machine, probe_machine
from benchlab.core.executor import Observer, SessionInterrupted, SessionResult, Silent
from benchlab.core.plan import RunPlan
from benchlab.core.session import interruptible
from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.writer import SessionWriter, environment_fingerprint


def check_cluster_plan(plan: RunPlan) -> None:
    """Refuse what a cluster session cannot do yet (one line, with the alternative)."""
    if plan.placement.load:
        raise UserError("--load with --cluster is not supported (the load would run on the "
                        "client, not beside the runs); drop --load or run without --cluster")
    if plan.until_decided is not None:
        raise UserError("--until-decided with --cluster is not supported; run it on one machine")
    if getattr(plan, "count", None):
        raise UserError("--count with --cluster is not supported (counted runs follow the timed "
                        "ones on one machine); drop --count or run without --cluster")


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
                     machine_grace_s: float = DEFAULT_LOST_AFTER_S,
                     placements: dict[str, dict[str, Any] | None] | None = None,
                     parent: Any = None, shared: SharedCluster | None = None) -> SessionResult:
    """Run ``plan`` on the machines of ``cluster`` (``--on``), or spread over them.

    ``placements``: each machine's own placement changes by label (``run --calibration`` with
    a fleet calibration: its quota), stored with the session for a resume. ``parent``: the
    session this one belongs to (a study's cell). ``machine_grace_s``: how long a lost machine
    is waited for before it is given up (``--lost-after``, s; stored for a resume). ``shared``:
    an already open cluster (:func:`open_shared_cluster`) used instead of opening one.

    Raises UserError (nothing stored) for a bad address, an unreachable cluster, or a machine
    that cannot run the plan; once the session exists, as :func:`benchlab.core.session.run_plan`
    (SessionInterrupted on Ctrl-C/SIGTERM, UserError when a run fails or the scheduler goes).
    """
    from benchlab.environment import collect_environment, load_average

    spec = parse_cluster(cluster)
    check_cluster_plan(plan)
    plan.placement.validate()
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
        writer = SessionWriter.create(
            store, "run", name=name, command_line=list(argv) if argv else None,
            protocol=plan.to_dict(),
            environment=collect_environment(argv=argv, cwd=plan.cwd, env_key=store.env_key()),
            load_before=list(load_average()), metadata=meta, parent=parent)
        try:
            setup_ids = _store_machines(store, machines, probes, plan.placement.workers)
            first = setup_ids[machines[0].label]
            for pos, bench in enumerate(plan.benchmarks):
                writer.add_benchmark(bench.name, position=pos, command=bench.command,
                                     argv=plan.argv_for(pos), parameters=bench.parameters or None,
                                     setup_id=first)
            for metric in plan.metrics:
                writer.add_metric(metric.name, unit=metric.unit, origin="regex",
                                  pattern=metric.regex)
        except BaseException as exc:
            writer.finish("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            raise
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
            meta = store.get_session(sess["uid"]).get("metadata") or {}
            writer.update(metadata={**meta, "cluster": {**info, "address": spec.text}})
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
    """Begin each machine, dispatch every run, finish each machine, end the session."""
    from benchlab.environment import load_average

    observer = observer or Silent()
    uid = writer.ref.uid
    resume = f"benchlab run --resume {uid} --cluster {address}"
    try:
        begun = _on_each(client, machines, begin_machine, uid, plans=plans)
        dispatch = ClusterDispatch(client, writer, plan, machines, spread=spread,
                                   observer=observer, setup_ids=setup_ids,
                                   machine_grace_s=machine_grace_s, machine_plans=plans)
        for m, b in zip(machines, begun):
            cost = b.get("shell_overhead")
            dispatch.shell_ns[m.label] = cost["wall_ns"] if cost else None
        result = dispatch.run()
        alive = [m for m in machines if dispatch.address.get(m.label) is not None]
        with contextlib.suppress(UserError):
            _on_each(client, [Machine(m.label, dispatch.address[m.label], m.host, m.name,
                                      m.slots) for m in alive], finish_machine, uid,
                     plans=plans)
        if dispatch.failed_machines:
            writer.finish("interrupted", load_after=list(load_average()))
            lost = ", ".join(sorted(dispatch.failed_machines))
            raise UserError(f"machine(s) {lost} were lost and did not come back; the other "
                            f"machines finished; {dispatch.done} runs stored in session {uid}; "
                            f"resume with: {resume}")
        writer.finish("done", load_after=list(load_average()))
        return result
    except SchedulerGone as exc:
        writer.finish("interrupted", load_after=list(load_average()))
        runs = len(writer.store.runs(session_id=writer.ref.id))
        raise UserError(f"the Dask scheduler at {address} went away ({exc}); {runs} runs "
                        f"received are stored in session {uid}; resume with: {resume}") from None
    except KeyboardInterrupt as exc:
        writer.finish("interrupted", load_after=list(load_average()))
        raise SessionInterrupted(writer.ref, len(writer.store.runs(session_id=writer.ref.id)),
                                 getattr(exc, "signum", 2)) from None
    except UserError:
        if writer.store.get_session(uid)["status"] == "running":
            writer.finish("failed", load_after=list(load_average()))
        raise
    except BaseException:
        writer.finish("failed", load_after=list(load_average()))
        raise
