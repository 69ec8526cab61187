"""``--cluster ssh:HOST,...``: the cluster benchlab starts over SSH speaks TLS with mutual
authentication, as a ``local:N`` one does (:mod:`.local`).

Dask's ``SSHCluster`` starts its scheduler and workers with a plain ``tcp://`` listener that
anyone who reaches the hosts can use to run code on all of them. So benchlab makes a CA and
certificates for the cluster in its local scratch directory
(:func:`benchlab.core.cluster.local.cluster_security`), copies the CA and the scheduler's and
workers' certificates over SSH into a new directory on each host (``mkdir -m 700``, which
fails rather than reuse a directory someone else made; keys 0600), and hands the remote
processes Dask settings naming those files: Dask's ``SSHCluster`` passes this process's Dask
configuration to them (``DASK_INTERNAL_INHERIT_CONFIG``: paths, never a key). The client and
the cluster object present the client certificate from the local directory.

The remote scheduler and nannies load :mod:`.ssh_tether` (a Dask preload): each closes, and
removes its host's directory, once its SSH channel ends, which is when the client closes the
cluster or is killed, SIGKILL included. As a backstop for a channel that never ends (a host
cut off from the client without a word), the scheduler closes itself after
:data:`IDLE_TIMEOUT_S` without a task, and its workers follow it. The client also removes the
directories over SSH when it closes the cluster.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

from benchlab.errors import UserError

#: The files a host of the cluster needs (the client's key stays on this machine).
REMOTE_FILES = ("ca.pem", "scheduler.pem", "scheduler-key.pem", "worker.pem", "worker-key.pem")


#: A scheduler started over SSH closes itself after this long without a task (s): the
#: backstop of :mod:`.ssh_tether`. A living client keeps it busy with its runs; Dask counts
#: from the scheduler's start and not a worker joining, so this is far above a start-up.
IDLE_TIMEOUT_S = 3600.0

#: The Dask preload that ends the remote processes with their SSH channel.
TETHER = "benchlab.core.cluster.ssh_tether"


#: The name of a host's directory of the cluster's certificates (:func:`remote_directory`).
REMOTE_NAME = re.compile(r"^benchlab-ssh-\d+_[a-z0-9_]+$")


def remote_directory(scratch: str) -> str:
    """Where the hosts keep this cluster's certificates and Dask's temporary directory:
    ``/tmp/benchlab-ssh-<pid>_<random>``, the pid and random part of the local scratch
    directory. Not a scratch name (``benchlab-<kind>-p<pid>-...``): a benchlab started on a
    host must not sweep it as left by a dead process of its own (the pid is the client's,
    on another machine)."""
    pid, random = os.path.basename(scratch).rsplit("-", 2)[-2:]
    return f"/tmp/benchlab-ssh-{pid.lstrip('p')}_{random}"


def remote_config(remote: str) -> dict[str, Any]:
    """Dask settings for the scheduler and workers on the hosts: TLS only, with the files in
    ``remote``; Dask's HTTP servers serve no route, over TLS; temporary files in ``remote``;
    the workers' environment left as the host gives it (:func:`.local.plain_worker_environ`)."""
    from benchlab.core.cluster.local import plain_worker_environ

    path = lambda name: f"{remote}/{name}"  # noqa: E731
    return {
        **plain_worker_environ(),
        "distributed.comm.require-encryption": True,
        "distributed.comm.tls.ca-file": path("ca.pem"),
        "distributed.comm.tls.scheduler.cert": path("scheduler.pem"),
        "distributed.comm.tls.scheduler.key": path("scheduler-key.pem"),
        "distributed.comm.tls.worker.cert": path("worker.pem"),
        "distributed.comm.tls.worker.key": path("worker-key.pem"),
        "distributed.scheduler.http.routes": [],
        "distributed.worker.http.routes": [],
        "distributed.scheduler.dashboard.tls.cert": path("worker.pem"),
        "distributed.scheduler.dashboard.tls.key": path("worker-key.pem"),
        "temporary-directory": path("dask"),
        # INFO, whatever this process's setting: SSHCluster waits for the scheduler's "Scheduler
        # at:" line and each worker's "worker at" line, and a remote process gets this process's
        # configuration. DASK_LOGGING__DISTRIBUTED=warning in this environment (a user's, or
        # one a local:N cluster's nanny wrote into its process) made the remote scheduler
        # silent, and the start waited for that line for ever
        "logging.distributed": "info",
    }


#: (host, directory) made by this process: the only directories it removes on the hosts.
_MADE: set[tuple[str, str]] = set()


async def _push(host: str, options: dict[str, Any], tls_dir: str, remote: str) -> None:
    import asyncssh

    async with asyncssh.connect(host, **options) as conn:
        made = await conn.run(f"umask 077 && mkdir -m 700 {shlex.quote(remote)}", check=False)
        if made.exit_status == 0:
            _MADE.add((host, remote))
        else:
            raise UserError(f"ssh:{host}: cannot make {remote} for the cluster's certificates "
                            f"({(made.stderr or '').strip()[:200]}); check the host's /tmp")
        for name in REMOTE_FILES:  # through the shell: a host need not offer SFTP
            with open(os.path.join(tls_dir, name)) as f:
                text = f.read()
            await conn.run(f"umask 077 && cat > {shlex.quote(f'{remote}/{name}')}", input=text,
                           check=True)


async def _remove(host: str, options: dict[str, Any], remote: str) -> None:
    import asyncssh

    async with asyncssh.connect(host, **options) as conn:
        await conn.run(f"rm -rf {shlex.quote(remote)}", check=False)


def push_certificates(hosts: list[str], connect_options: dict[str, Any] | None, tls_dir: str,
                      remote: str) -> None:
    """Copy the cluster's CA, scheduler and worker certificates from ``tls_dir`` into the new
    directory ``remote`` on every host (each distinct host once; ``connect_options``: asyncssh's,
    as for the cluster); UserError naming a host that refuses."""
    import asyncio

    async def push_all() -> None:
        for host in dict.fromkeys(hosts):
            await _push(host, dict(connect_options or {}), tls_dir, remote)

    asyncio.run(push_all())


def remove_certificates(hosts: list[str], connect_options: dict[str, Any] | None, remote: str
                        ) -> None:
    """Remove ``remote`` on every host where this process made it (a host that cannot be
    reached keeps it)."""
    import asyncio
    import contextlib

    async def remove_all() -> None:
        for host in dict.fromkeys(hosts):
            if (host, remote) in _MADE:
                with contextlib.suppress(Exception):
                    await _remove(host, dict(connect_options or {}), remote)
                _MADE.discard((host, remote))

    with contextlib.suppress(Exception):
        asyncio.run(remove_all())


def start_ssh_cluster(hosts: list[str], slots: dict[str, int],
                      connect_options: dict[str, Any] | None, scratch: str, remote_python: str
                      ) -> Any:
    """Start Dask's ``SSHCluster`` (the scheduler on ``hosts[0]``, one worker per host with the
    ``slots`` resources) over TLS with certificates made in ``scratch/tls`` and copied to the
    hosts' ``remote_directory(scratch)``."""
    import dask
    from distributed import SSHCluster

    from benchlab.core.cluster.local import cluster_security

    tls_dir = os.path.join(scratch, "tls")
    security = cluster_security(tls_dir)
    remote = remote_directory(scratch)
    push_certificates(hosts, connect_options, tls_dir, remote)
    with dask.config.set(remote_config(remote)):
        return SSHCluster(
            [hosts[0], *hosts], connect_options=connect_options or {},
            worker_options={"nthreads": max(slots.values()), "resources": slots,
                            "preload_nanny": [TETHER]},
            scheduler_options={"port": 0, "protocol": "tls", "dashboard": False,
                               "dashboard_address": ":0", "preload": [TETHER],
                               "idle_timeout": IDLE_TIMEOUT_S},
            remote_python=remote_python, security=security)
