"""``--cluster``, ``--on`` and ``--spread``: the options every executing command shares, and the
routing of ``run`` (and ``--resume``) to the execution core on one machine or on a cluster.

Nothing here imports Dask: :mod:`benchlab.core.cluster.session` is imported only when
``--cluster`` is given (or a cluster session is resumed), so ``benchlab run`` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from benchlab.errors import UserError


def cluster_options(f):
    """Add ``--cluster ADDRESS``, ``--on all|N|HOST,...`` and ``--spread`` to a Click command."""
    f = click.option("--spread", is_flag=True,
                     help="With --cluster: machines are identical; spread the runs over them "
                          "instead of running the protocol on each.")(f)
    f = click.option("--on", "on", default="all", show_default=True, metavar="all|N|HOST,...",
                     help="With --cluster: the machines that run the protocol.")(f)
    f = click.option("--cluster", default=None, metavar="tcp://HOST:PORT|local:N|ssh:HOST,...",
                     help="Run on a Dask cluster: a scheduler address, N local worker "
                          "processes, or SSH hosts (docs/cluster.md).")(f)
    return f


def check_cluster_flags(cluster: str | None, on: str, spread: bool) -> None:
    """``--on``/``--spread`` mean nothing without ``--cluster``: say so in one line."""
    if cluster is None and (on != "all" or spread):
        raise UserError("--on and --spread choose machines of a cluster; add --cluster ADDRESS "
                        "or drop them")


class MachineProgress:
    """Wraps ``run``'s progress observer: one extra bar per machine (runs done / planned)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.tasks: dict[str, Any] = {}

    def started(self, session, plan, total):
        self.inner.started(session, plan, total)

    def run_finished(self, name, run, m, total, done):
        self.inner.run_finished(name, run, m, total, done)

    def message(self, text):
        self.inner.message(text)

    def machine_progress(self, label: str, done: int, total: int | None) -> None:
        """Update the bar of machine ``label``: ``done`` runs stored of ``total`` (None: unknown)."""
        progress = getattr(self.inner, "progress", None)
        if progress is None:
            return
        if label not in self.tasks:
            self.tasks[label] = progress.add_task(f"  {label}", total=total)
        progress.update(self.tasks[label], completed=done, total=total)


def start_run(store, plan, cluster: str | None, on: str, spread: bool, *, argv, name,
              observer, on_start):
    """Run ``plan`` here (no ``--cluster``) or on the cluster; returns the SessionResult."""
    check_cluster_flags(cluster, on, spread)
    if cluster is None:
        from benchlab.core.session import run_plan

        return run_plan(store, plan, argv=argv, name=name, observer=observer, on_start=on_start)
    from benchlab.core.cluster.session import run_cluster_plan

    return run_cluster_plan(store, plan, cluster, on=on, spread=spread, argv=argv, name=name,
                            observer=MachineProgress(observer), on_start=on_start)


def resume_run(store, key: str, cluster: str | None, observer):
    """Resume session ``key``: on its cluster when it ran on one (or ``--cluster`` moves it)."""
    sess = store.get_session(key)
    if (sess.get("metadata") or {}).get("cluster") is None:
        if cluster is not None:
            raise UserError(f"session {sess['uid']} did not run on a cluster; resume it without "
                            f"--cluster")
        from benchlab.core.session import resume_session

        return resume_session(store, key, observer=observer)
    from benchlab.core.cluster.session import resume_cluster_session

    return resume_cluster_session(store, key, cluster=cluster,
                                  observer=MachineProgress(observer))
