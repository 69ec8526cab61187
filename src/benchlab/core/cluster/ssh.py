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

#: How long the client waits for a host to remove the cluster's certificates (s).
REMOVE_TIMEOUT_S = 10.0

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
                      remote: str, timeout_s: float) -> None:
    """Copy the cluster's CA, scheduler and worker certificates from ``tls_dir`` into the new
    directory ``remote`` on every host (each distinct host once; ``connect_options``: asyncssh's,
    as for the cluster); UserError naming a host that refuses or has not answered within
    ``timeout_s`` seconds."""
    import asyncio

    async def push_all() -> None:
        for host in dict.fromkeys(hosts):
            try:
                await asyncio.wait_for(_push(host, dict(connect_options or {}), tls_dir, remote),
                                       timeout_s)
            except asyncio.TimeoutError:
                raise start_timed_out(host, "", timeout_s, "", connected=False) from None

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
                with contextlib.suppress(Exception):  # a hung host keeps it, the rest do not
                    await asyncio.wait_for(_remove(host, dict(connect_options or {}), remote),
                                           REMOVE_TIMEOUT_S)
                _MADE.discard((host, remote))

    with contextlib.suppress(Exception):
        asyncio.run(remove_all())


def start_ssh_cluster(hosts: list[str], slots: dict[str, int],
                      connect_options: dict[str, Any] | None, scratch: str, remote_python: str,
                      start_timeout_s: float) -> Any:
    """Start Dask's SSH cluster (the scheduler on ``hosts[0]``, one worker per host with the
    ``slots`` resources) over TLS with certificates made in ``scratch/tls`` and copied to the
    hosts' ``remote_directory(scratch)``. Each remote process has ``start_timeout_s`` seconds
    to print its address, or the cluster closes (its remote processes killed through their
    SSH channels) and a UserError names the host and what did not answer."""
    import dask
    from distributed.deploy.spec import SpecCluster

    from benchlab.core.cluster.local import cluster_security

    tls_dir = os.path.join(scratch, "tls")
    security = cluster_security(tls_dir)
    remote = remote_directory(scratch)
    push_certificates(hosts, connect_options, tls_dir, remote, start_timeout_s)
    scheduler_class, worker_class = _bounded_ssh_processes()
    common = {"connect_options": connect_options or {}, "remote_python": remote_python,
              "start_timeout_s": start_timeout_s}
    scheduler = {"cls": scheduler_class, "options": {
        "address": hosts[0], **common,
        "kwargs": {"port": 0, "protocol": "tls", "dashboard": False, "dashboard_address": ":0",
                   "preload": [TETHER], "idle_timeout": IDLE_TIMEOUT_S}}}
    workers = {i: {"cls": worker_class, "options": {
        "address": host, **common, "worker_class": "distributed.Nanny",
        "kwargs": {"nthreads": max(slots.values()), "resources": slots,
                   "preload_nanny": [TETHER]}}} for i, host in enumerate(hosts)}
    with dask.config.set(remote_config(remote)):
        try:  # SSHCluster's spec, with each process's start bounded
            return SpecCluster(workers, scheduler, name="SSHCluster", security=security)
        except RuntimeError as exc:  # "Cluster failed to start", after closing what started
            if isinstance(exc.__cause__, UserError):
                raise exc.__cause__ from None
            raise


def _bounded_ssh_processes() -> tuple[type, type]:
    """Dask's SSH ``Scheduler`` and ``Worker`` whose start (the SSH connection, then the
    remote process's address on its stderr) gives up after ``start_timeout_s`` seconds: Dask
    waits for ever for a process that never prints it (a host's Python without distributed
    that hangs, a firewall, a hung ssh)."""
    import asyncio

    from distributed.deploy import ssh as dask_ssh

    def bounded(process_class: type, role: str) -> type:
        class Bounded(process_class):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, start_timeout_s: float, **options: Any):
                super().__init__(*args, **options)
                self.start_timeout_s = start_timeout_s
                self.host = options["address"]

            async def start(self) -> None:
                try:
                    await asyncio.wait_for(super().start(), self.start_timeout_s)
                except asyncio.TimeoutError:
                    raise start_timed_out(self.host, role, self.start_timeout_s,
                                          self.remote_python, self.connection is not None
                                          ) from None

        return Bounded

    return bounded(dask_ssh.Scheduler, "scheduler"), bounded(dask_ssh.Worker, "worker")


def start_timed_out(host: str, role: str, timeout_s: float, remote_python: str,
                    connected: bool) -> UserError:
    """The one line for a remote ``role`` (scheduler, worker) on ``host`` that did not start
    within ``timeout_s`` seconds: what did not answer, and the command that checks it."""
    if not connected:
        return UserError(f"ssh:{host}: no SSH answer within {timeout_s:g} s; check that "
                         f"`ssh {host} true` works (--cluster-timeout waits longer)")
    return UserError(f"ssh:{host}: the {role} did not start within {timeout_s:g} s; check that "
                     f"`ssh {host} {remote_python} -c 'import distributed'` works "
                     f"(--cluster-timeout waits longer)")
