"""One way to execute a run plan: :func:`execute` (and :func:`resume`), here or on a cluster.

``where`` says where the runs execute: :data:`HERE` (this machine, worker threads) or a
:class:`Cluster` (Dask lanes on its machines). Either way the session is created by one walk
(:func:`benchlab.core.session.create_session`) and every run is stored, counted, judged by the
sequential design and, on a cluster, recorded as lost by one
:class:`~benchlab.core.recorder.RunRecorder`; every option works in both places. The command
line and the study call these two functions and route nothing themselves.

Dask is imported only when ``where`` is a cluster, so ``benchlab run`` stays fast.
"""

from __future__ import annotations

from typing import Any, Sequence

from benchlab.core.executor import RunnerFactory
from benchlab.core.plan import RunPlan
from benchlab.core.session_types import Observer, SessionResult
from benchlab.errors import UserError
from benchlab.records import record
from benchlab.store.db import SessionRef, Store


@record(frozen=True)
class Here:
    """Execute on this machine. ``runner``: makes what executes the runs (tests give one that
    spawns no process; default: placed, measured processes)."""

    runner: RunnerFactory | None = None


#: This machine, with real processes.
HERE = Here()


@record(frozen=True)
class Cluster:
    """Execute on a Dask cluster (``--cluster``).

    ``address``: ``tcp://HOST:PORT``, ``local:N`` or ``ssh:HOST,...`` (None, for a resume
    only: the session's stored address); ``on``: the machines that
    run the protocol (``--on``); ``spread``: machines are identical, spread the runs over them;
    ``lost_after_s`` (s): how long a lost machine is waited for (None: the session's stored
    value, else 60 s); ``placements``: each machine's own placement changes by label (a fleet
    calibration's quotas); ``shared``: a cluster already open for several sessions
    (:func:`benchlab.core.cluster.session.open_shared_cluster`).
    """

    address: str | None
    on: str = "all"
    spread: bool = False
    lost_after_s: float | None = None
    placements: dict[str, dict[str, Any] | None] | None = None
    connect_options: dict[str, Any] | None = None
    shared: Any = None


def execute(plan: RunPlan, store: Store, where: Here | Cluster = HERE, *,
            argv: Sequence[str] | None = None, name: str | None = None,
            observer: Observer | None = None, on_start=None,
            parent: SessionRef | None = None) -> SessionResult:
    """Create a session for ``plan`` and execute it ``where`` to the end.

    ``on_start(session_ref)`` is called once the session exists; ``parent``: the session this
    one belongs to (a study's cell). Raises UserError (nothing stored) for bad input or a
    machine that cannot run the plan; once the session exists, SessionInterrupted on
    Ctrl-C/SIGTERM and UserError when a run or hook fails (everything measured stays stored).
    """
    if isinstance(where, Cluster):
        from benchlab.core.cluster.session import run_cluster_plan

        return run_cluster_plan(store, plan, where.address, on=where.on, spread=where.spread,
                                argv=argv, name=name, observer=observer, on_start=on_start,
                                connect_options=where.connect_options,
                                machine_grace_s=where.lost_after_s,
                                placements=where.placements, parent=parent,
                                shared=where.shared)
    from benchlab.core.session import run_plan

    return run_plan(store, plan, argv=argv, name=name, observer=observer, on_start=on_start,
                    parent=parent, runner=where.runner)


def resume(store: Store, key: str, where: Here | Cluster | None = None, *,
           observer: Observer | None = None) -> SessionResult:
    """Complete session ``key`` where it ran: on this machine, or on its stored cluster.

    ``where``: None resumes where the session ran; a :class:`Cluster` moves a cluster session to
    that address (or sets ``--lost-after``), refused in one line for a session that ran here;
    :class:`Here` with a runner: that runner (tests).
    """
    sess = store.get_session(key)
    ran_on_cluster = (sess.get("metadata") or {}).get("cluster") is not None
    if isinstance(where, Cluster) and not ran_on_cluster:
        flag = "--cluster" if where.address else "--lost-after"
        raise UserError(f"session {sess['uid']} did not run on a cluster; resume it without "
                        f"{flag}")
    if ran_on_cluster:
        from benchlab.core.cluster.session import resume_cluster_session

        cluster = where if isinstance(where, Cluster) else Cluster(None)
        return resume_cluster_session(store, key, cluster=cluster.address, observer=observer,
                                      connect_options=cluster.connect_options,
                                      machine_grace_s=cluster.lost_after_s,
                                      shared=cluster.shared)
    from benchlab.core.session import resume_session

    return resume_session(store, key, observer=observer,
                          runner=where.runner if isinstance(where, Here) else None)


__all__ = ["execute", "resume", "Here", "HERE", "Cluster"]
