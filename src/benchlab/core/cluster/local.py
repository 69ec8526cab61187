"""``--cluster local:N``: a LocalCluster only the user who started it can reach.

Whoever can connect to a Dask scheduler or worker runs code as that worker's user, and a local
cluster's ports on 127.0.0.1 are open to every user of the machine. So the cluster benchlab
starts speaks TLS with mutual authentication, as a team's does (:mod:`.tls`): a CA and a
scheduler, worker and client certificate are made for this cluster alone with
:func:`benchlab.core.cluster.tls.make_certificates`, into ``tls/`` of a scratch directory
(``benchlab-cluster-p<pid>-*``, mode 0700, keys 0600); every process of the cluster and the
client present them, and a connection without a certificate of that CA is refused in the TLS
handshake. The scratch directory also holds Dask's ``temporary-directory`` (the workers'
``dask-scratch-space``), so nothing of the cluster is written beside it in ``/tmp``. The
directory is removed when the cluster closes; after a SIGKILL the workers exit with their
parent (Dask's parent-alive pipe) and the next benchlab start removes the directory
(:func:`benchlab.core.scratch.sweep_dead_scratch`).

Every listening socket is on 127.0.0.1: the scheduler, the nannies and the workers (TLS), and
the HTTP servers Dask starts in the scheduler and each worker, which serve no route at all
(no dashboard, no metrics, no JSON) and are wrapped in TLS too. Only ``--dashboard`` asks for
the scheduler's dashboard, then served on 127.0.0.1 in plain HTTP: every local user can read
it (worker addresses, task names), none can run code through it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

#: The addresses put in the cluster's certificates (Dask checks the CA, not the host name).
LOOPBACK = "127.0.0.1"


@dataclass
class LocalOptions:
    """How ``local:N`` clusters start: ``dashboard`` (``--dashboard``) serves the scheduler's
    dashboard on 127.0.0.1, and ``announce`` is told its address (one line of text). Set once
    by the command line (:func:`set_local_options`)."""

    dashboard: bool = False
    announce: Callable[[str], None] | None = None


LOCAL = LocalOptions()


def set_local_options(*, dashboard: bool | None = None,
                      announce: Callable[[str], None] | None = None) -> None:
    """Record ``--dashboard`` for every ``local:N`` cluster this process starts, and where to
    say the dashboard's address."""
    if dashboard is not None:
        LOCAL.dashboard = dashboard
    if announce is not None:
        LOCAL.announce = announce


def cluster_security(tls_dir: str) -> Any:
    """Make this cluster's CA and certificates in ``tls_dir`` (created 0700) and return the
    ``distributed.security.Security`` every process of the cluster and the client use
    (``require_encryption``: no plain ``tcp://`` anywhere)."""
    from distributed.security import Security

    from benchlab.core.cluster.tls import CA_CERT, cert_file, key_file, make_certificates

    make_certificates(tls_dir, [LOOPBACK, "localhost"], days=30)
    path = lambda name: os.path.join(tls_dir, name)  # noqa: E731
    return Security(tls_ca_file=path(CA_CERT), require_encryption=True,
                    tls_scheduler_cert=path(cert_file("scheduler")),
                    tls_scheduler_key=path(key_file("scheduler")),
                    tls_worker_cert=path(cert_file("worker")),
                    tls_worker_key=path(key_file("worker")),
                    tls_client_cert=path(cert_file("client")),
                    tls_client_key=path(key_file("client")))


def plain_worker_environ() -> dict[str, Any]:
    """Dask settings that leave the environment of the worker processes of a cluster benchlab
    starts, and so of the programs they measure, as their parent's. Dask's nanny sets
    OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS to 1, MALLOC_TRIM_THRESHOLD_
    to 65536 and an unset PYTHONHASHSEED to 6640 in its workers, for Dask's own tasks: a
    program measured on a cluster ran with one thread per numeric library, another malloc
    trimming and one hash seed, where here it has its own. ``random`` is Python's default."""
    prefix = "distributed.nanny.pre-spawn-environ."
    return {**{prefix + name: None for name in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS",
                                               "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
            prefix + "PYTHONHASHSEED": "random"}


def local_config(scratch: str, dashboard: bool) -> dict[str, Any]:
    """Dask settings of a ``local:N`` cluster whose scratch directory is ``scratch``: Dask's
    temporary directory inside it, and HTTP servers that serve nothing over TLS (the
    scheduler's dashboard routes, on 127.0.0.1 in plain HTTP, when ``dashboard``)."""
    from benchlab.core.cluster.tls import cert_file, key_file

    tls = os.path.join(scratch, "tls")
    config: dict[str, Any] = {
        **plain_worker_environ(),
        "temporary-directory": os.path.join(scratch, "dask"),
        "distributed.worker.http.routes": [],
        # a worker process sets up its logging as it imports distributed, before any setting
        # of ours reaches it: only its environment does. Its INFO lines (a stale directory
        # purged, a worker closing) reached the terminal after a SIGTERM; warnings and
        # errors still do
        "distributed.nanny.pre-spawn-environ.DASK_LOGGING__DISTRIBUTED": "warning",
    }
    if not dashboard:
        config.update({
            "distributed.scheduler.http.routes": [],
            # read by every Dask HTTP server (node.py), the workers' too
            "distributed.scheduler.dashboard.tls.cert": os.path.join(tls, cert_file("worker")),
            "distributed.scheduler.dashboard.tls.key": os.path.join(tls, key_file("worker")),
        })
    return config


#: In the environment of the worker processes of a cluster benchlab starts (see local_config).
_WORKER_MARK = b"DASK_LOGGING__DISTRIBUTED=warning"


def end_worker_processes(wait_s: float = 3.0) -> list[int]:
    """After a ``local:N`` cluster closed: wait up to ``wait_s`` seconds for the worker
    processes this process started for it to end, then SIGKILL those left (a close cut short by
    a signal leaves them starting, and one that starts once its directory is removed logs
    errors about it); return the pids killed."""
    import signal
    import time

    from benchlab.processes import process_stats

    def ours(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            return False
        return b"spawn_main" in cmdline and _WORKER_MARK in environ

    me = str(os.getpid())
    deadline = time.monotonic() + wait_s
    while True:
        left = [pid for pid, fields in process_stats()
                if len(fields) > 1 and fields[1] == me and fields[0] != "Z" and ours(pid)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)  # multiprocessing reaps it
        except ProcessLookupError:
            pass
    return left


def start_local_cluster(n_workers: int, resources: dict[str, int], scratch: str) -> Any:
    """Start a ``LocalCluster`` of ``n_workers`` worker processes, each with one thread per
    slot and the Dask ``resources`` given (benchlab's slots), authenticated by certificates made
    in ``scratch/tls`` (:func:`cluster_security`).

    Call inside ``dask.config.set(local_config(scratch, ...))``: the worker processes take the
    configuration of the moment they start.
    """
    from distributed import LocalCluster

    security = cluster_security(os.path.join(scratch, "tls"))
    dashboard = f"{LOOPBACK}:0" if LOCAL.dashboard else None
    # without a dashboard the scheduler's HTTP server would still take port 8787
    no_dashboard = {"dashboard_address": f"{LOOPBACK}:0", "dashboard": False}
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=max(resources.values()),
                           processes=True, resources=resources, host=LOOPBACK,
                           protocol="tls://", security=security, dashboard_address=dashboard,
                           scheduler_kwargs={} if dashboard else no_dashboard, silence_logs=50)
    if dashboard and LOCAL.announce is not None:
        LOCAL.announce(f"Dask dashboard of {n_workers} local workers: {cluster.dashboard_link} "
                       f"(every user of this machine can read it)")
    return cluster
