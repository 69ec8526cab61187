"""Where executing commands run: ``--cluster``, ``--on``, ``--spread`` and ``--lost-after``,
read into a place (:func:`where_of`: this machine or a cluster) handed to the core's one
:func:`benchlab.core.execute.execute`, which does the rest; and the cluster-wide commands'
helpers (profile, calibrate and compare a fleet, the per-machine table of a run). The client
options ``--tls-dir`` / ``--insecure`` / ``--dashboard`` (:func:`tls_options`) only record
what was given (:func:`benchlab.core.cluster.address.set_client_options`,
:func:`benchlab.core.cluster.local.set_local_options`).

Nothing here imports Dask: the core imports it only for a cluster, so ``benchlab run`` stays
fast.
"""

from __future__ import annotations

from typing import Any

import click

from benchlab.cli.main import collect_again
from benchlab.errors import UserError


def _parse_lost_after(ctx, param, value):
    """``--lost-after``: seconds (None when not given), refused in one line at parse time, so
    nothing is started or stored for a bad value."""
    if value is None:
        return None
    from benchlab.units import parse_duration_s

    return parse_duration_s(value, what="--lost-after", maximum_s=7 * 86400.0)


def _record_cluster_timeout(ctx, param, value):
    """``--cluster-timeout``: seconds, refused in one line at parse time, recorded for the
    cluster (:func:`benchlab.core.cluster.address.set_client_options`)."""
    if value is not None:
        from benchlab.core.cluster.address import set_client_options
        from benchlab.units import parse_duration_s

        set_client_options(start_timeout_s=parse_duration_s(
            value, what="--cluster-timeout", maximum_s=86400.0))
    return value


def _record_tls_dir(ctx, param, value):
    if value is not None:
        from benchlab.core.cluster.address import set_client_options

        set_client_options(tls_dir=value)
    return value


def _record_insecure(ctx, param, value):
    if value:
        from benchlab.core.cluster.address import set_client_options

        set_client_options(insecure=True)
    return value


def _record_dashboard(ctx, param, value):
    if value:
        from benchlab.core.cluster.local import set_local_options

        set_local_options(dashboard=True, announce=lambda text: click.echo(text, err=True))
    return value


def tls_options(f):
    """Add ``--tls-dir DIR``, ``--insecure``, ``--dashboard`` and ``--cluster-timeout`` (recorded
    for the cluster, not passed to the command's function) to a Click command."""
    f = click.option("--cluster-timeout", default=None, metavar="DURATION", expose_value=False,
                     callback=_record_cluster_timeout,
                     help="With --cluster: how long a cluster may take to start (each process "
                          "of ssh:) and its workers to join (e.g. 30s, 5m; default 60s).")(f)
    f = click.option("--dashboard", is_flag=True, expose_value=False,
                     callback=_record_dashboard,
                     help="With --cluster local:N: serve Dask's dashboard on 127.0.0.1 and "
                          "print its address (every user of this machine can read it; "
                          "nobody can run code through it). Off by default.")(f)
    f = click.option("--insecure", is_flag=True, expose_value=False, callback=_record_insecure,
                     help="With --cluster tcp://: allow a plain, unauthenticated connection to "
                          "another machine (anyone who reaches the scheduler can run code on "
                          "the workers).")(f)
    f = click.option("--tls-dir", default=None, metavar="DIR", expose_value=False,
                     callback=_record_tls_dir,
                     help="With --cluster tls://: the directory holding ca.pem, client.pem and "
                          "client-key.pem (`benchlab cluster certs`); default "
                          "$BENCHLAB_TLS_DIR or Dask's distributed.comm.tls configuration.")(f)
    return f


def lost_after_option(f):
    """Add ``--lost-after DURATION`` (how long a lost machine is waited for) to a command."""
    return click.option("--lost-after", "lost_after", default=None, metavar="DURATION",
                        callback=_parse_lost_after, expose_value=True,
                        help="With --cluster: give up a machine whose worker has been gone "
                             "this long (e.g. 30s, 5m; default 60s); the session then ends "
                             "interrupted, naming it.")(f)


def cluster_options(f):
    """Add ``--cluster ADDRESS``, ``--on all|N|HOST,...``, ``--spread`` and ``--lost-after`` to a
    Click command."""
    f = lost_after_option(f)
    f = tls_options(f)
    f = click.option("--spread", is_flag=True,
                     help="With --cluster: machines are identical; spread the runs over them "
                          "instead of running the protocol on each.")(f)
    f = click.option("--on", "on", default="all", show_default=True, metavar="all|N|HOST,...",
                     help="With --cluster: the machines that run the protocol.")(f)
    f = click.option("--cluster", default=None, metavar="tcp://HOST:PORT|local:N|ssh:HOST,...",
                     help="Run on a Dask cluster: a scheduler address, N local worker "
                          "processes, or SSH hosts (docs/cluster.md).")(f)
    return f


def check_cluster_flags(cluster: str | None, on: str, spread: bool,
                        lost_after_s: float | None = None) -> None:
    """``--on``/``--spread``/``--lost-after`` mean nothing without ``--cluster``: say so in one
    line."""
    if cluster is None and (on != "all" or spread):
        raise UserError("--on and --spread choose machines of a cluster; add --cluster ADDRESS "
                        "or drop them")
    if cluster is None and lost_after_s is not None:
        raise UserError("--lost-after says how long a lost cluster machine is waited for; add "
                        "--cluster ADDRESS or drop it")


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


def where_of(cluster: str | None, on: str, spread: bool, lost_after_s: float | None,
             calibration=None):
    """Where ``run`` executes, from its options: :data:`~benchlab.core.execute.HERE`, or a
    :class:`~benchlab.core.execute.Cluster` (with each machine's quota for a fleet
    ``--calibration``: ``calibration`` is the file as read, a
    :class:`benchlab.machines.fleet.RunCalibration`). UserError for cluster options without
    ``--cluster`` and for a fleet calibration without it.

    ``lost_after_s`` (s): ``--lost-after``; None: the default (60 s).
    """
    from benchlab.core.execute import HERE, Cluster

    check_cluster_flags(cluster, on, spread, lost_after_s)
    placements = calibration.quotas if calibration is not None else None
    if cluster is None:
        if placements is not None:
            raise UserError(f"{calibration.path} is a fleet calibration (a quota per machine); "
                            f"use it with --cluster, or give a one-machine one")
        return HERE
    return Cluster(cluster, on=on, spread=spread, lost_after_s=lost_after_s,
                   placements=placements)


def start_run(store, plan, cluster: str | None, on: str, spread: bool, *, argv, name,
              observer, on_start, lost_after_s: float | None = None, calibration=None):
    """Execute ``plan`` where the options say (:func:`where_of`; ``calibration``: the
    ``--calibration`` file as read); returns the SessionResult."""
    from benchlab.core.execute import Cluster, execute

    where = where_of(cluster, on, spread, lost_after_s, calibration)
    if isinstance(where, Cluster):
        observer = MachineProgress(observer)

    def started(session):
        collect_again()  # run's start-up pause ends: the session's set-up and its imports are done
        if on_start is not None:
            on_start(session)

    return execute(plan, store, where, argv=argv, name=name, observer=observer,
                   on_start=started)


def resume_run(store, key: str, cluster: str | None, observer,
               lost_after_s: float | None = None):
    """Resume session ``key`` where it ran (``--cluster`` moves a cluster session).

    ``lost_after_s`` (s): ``--lost-after``; None: the value stored with the session."""
    from benchlab.core.execute import Cluster, resume

    collect_again()  # a resumed session collects from its start
    where = None
    if cluster is not None or lost_after_s is not None:
        where = Cluster(cluster, lost_after_s=lost_after_s)
    return resume(store, key, where, observer=MachineProgress(observer))


def cluster_on_options(f):
    """``--cluster`` and ``--on`` (no ``--spread``): profile and calibrate each machine."""
    f = tls_options(f)
    f = click.option("--on", "on", default="all", show_default=True, metavar="all|N|HOST,...",
                     help="With --cluster: the machines to characterise.")(f)
    f = click.option("--cluster", default=None, metavar="tcp://HOST:PORT|local:N|ssh:HOST,...",
                     help="Do it on every machine of a Dask cluster (docs/cluster.md).")(f)
    return f


def profile_cluster(db: str | None, cluster: str, on: str, options: dict[str, Any]) -> None:
    """``benchlab profile --cluster``: profile every machine, store each, print a summary."""
    from benchlab.cli.common import open_store
    from benchlab.machines.fleet import profile_fleet

    store = open_store(db)
    try:
        def arrived(label, profile):
            click.echo(f"profile of {label}: {len(profile.methods)} methods "
                       f"(stored as profile {label!r})", err=True)

        fleet_id, profiles = profile_fleet(store, cluster, options, on=on, observer=arrived)
    finally:
        store.close()
    names = [p.name for p in profiles]
    click.echo(f"fleet {fleet_id}: {len(profiles)} machine profiles ({', '.join(names)}) in "
               f"{store.path}; compare them with `benchlab variability --fleet`")


def fleet_variability(db: str | None, fleet_id: str | None, kinds, per_cpu_second: bool,
                      as_json: bool) -> None:
    """``benchlab variability --fleet``: the pairwise range matrix and the slowest common base."""

    from benchlab.cli.common import open_store
    from benchlab.machines.fleet import fleet_matrix, fleet_profiles
    from benchlab.report.machines_figures import fleet_matrix_text

    store = open_store(db, readonly=True)
    try:
        fleet_id, profiles = fleet_profiles(store, fleet_id)
    finally:
        store.close()
    matrix = fleet_matrix(profiles, kinds=kinds, per_cpu_second=per_cpu_second)
    if as_json:
        from benchlab.cli.json_output import echo_json

        echo_json({**matrix.to_dict(), "fleet": fleet_id}, indent=1)
    else:
        click.echo(f"fleet {fleet_id}")
        click.echo(fleet_matrix_text(matrix))


def calibrate_cluster(db: str | None, cluster: str, on: str, base_spec: str, methods: list[str],
                      options: dict[str, Any], output: str) -> None:
    """``benchlab calibrate --cluster``: each machine's quota against BASE, one fleet file."""
    from benchlab.machines.fleet import calibrate_fleet
    from benchlab.machines.store_io import resolve_profile

    base = resolve_profile(base_spec, db)

    def arrived(label, cal):
        click.echo(f"  {label}: quota {cal['cpu_quota_us']} us per {cal['cpu_period_us']} us, "
                   f"residual ratio {cal['residual_ratio']:.3f}", err=True)

    doc = calibrate_fleet(cluster, base, methods, options, output, on=on, observer=arrived)
    for label, cal in sorted(doc["machines"].items()):
        what = "the base: no quota" if cal is None else \
            f"quota {cal['cpu_quota_us']} us per {cal['cpu_period_us']} us"
        click.echo(f"{label}: {what}")
    click.echo(f"written to {output}; apply it with `benchlab run --cluster {cluster} "
               f"--calibration {output}`")


def print_machine_table(store, session_id: int, console) -> None:
    """For a cluster session: each machine's median wall time and ok runs per benchmark (the
    summary above pools the machines); nothing for a one-machine session."""
    session = store.get_session(session_id)
    cluster = (session.get("metadata") or {}).get("cluster")
    if not cluster:
        return
    import numpy as np

    from benchlab.units import format_duration

    names = {b["id"]: b["name"] for b in store.benchmarks(session_id)}
    walls: dict[tuple[str, str], list[int]] = {}
    for run in store.runs(session_id=session_id, include_warmup=False):
        machine = (run.get("extra") or {}).get("machine", "?")
        key = (machine, names[run["benchmark_id"]])
        walls.setdefault(key, [])
        if run["status"] == "ok" and run["wall_ns"] is not None:
            walls[key].append(run["wall_ns"])
    console.print(f"per machine ({'spread over' if cluster.get('spread') else 'on'} "
                  f"{len(cluster['machines'])} machines of {cluster['address']}):")
    for (machine, bench), values in sorted(walls.items()):
        median = format_duration(float(np.median(values))) if values else "-"
        console.print(f"  {machine}  {bench[:40]}: median {median}, {len(values)} ok runs",
                      markup=False, highlight=False, soft_wrap=True)
