"""``--cluster`` and ``--on``: which Dask cluster, which of its machines, and a quiet engine.

Three ways to name a cluster:

- ``tcp://host:port`` (or ``tls://``): a running Dask scheduler whose workers a team started
  (docs/cluster.md gives the exact commands);
- ``local:N``: a ``LocalCluster`` of N worker *processes* on this machine (tests, one box);
- ``ssh:HOST,HOST``: an ``SSHCluster``: the scheduler on the first host, one worker per host.

Every worker benchlab starts advertises ``benchlab-slot`` resources (one per allowed concurrent
measurement) and every run asks for one slot, so Dask never puts two measurements on one
machine by accident. Workers a team starts themselves must be started with the resource (see
docs/cluster.md); a worker without it gets no run and is named in the error.

A *machine* is a worker process: its label is its host for a worker started without
``--name``, else ``host/name`` (a LocalCluster's workers ``0``, ``1``... share one host but are
distinct machines for us). Labels are stable across worker restarts (Dask's nanny restarts a
killed worker under the same name),
so a lost run goes back to the same machine and a resumed session finds its machines again.
"""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from benchlab.errors import UserError

#: The Dask resource a worker advertises once per allowed concurrent measurement.
SLOT = "benchlab-slot"

_HOST = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")


@dataclass
class ClientOptions:
    """How this process connects (:func:`set_client_options`): ``tls_dir`` (``--tls-dir``),
    ``insecure`` (``--insecure``: plain ``tcp://`` elsewhere), ``start_timeout_s`` (s)."""

    tls_dir: str | None = None
    insecure: bool = False
    start_timeout_s: float = 60.0


_CLIENT = ClientOptions()


def set_client_options(*, tls_dir: str | None = None, insecure: bool | None = None,
                       start_timeout_s: float | None = None) -> None:
    """Record ``--tls-dir`` / ``--insecure`` / ``--cluster-timeout`` (s) for every cluster."""
    if tls_dir is not None:
        _CLIENT.tls_dir = tls_dir
    if insecure is not None:
        _CLIENT.insecure = insecure
    if start_timeout_s is not None:
        _CLIENT.start_timeout_s = start_timeout_s


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address, IPv6 maybe in brackets) is this machine's
    loopback: ``localhost``, 127.0.0.0/8, ::1. Names are not resolved."""
    import ipaddress

    h = host.strip("[]").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def quiet_config() -> dict[str, Any]:
    """Dask settings that keep an idle worker idle while a run executes (why: every periodic
    callback wakes the worker's event loop on a CPU next to the benchmark).

    Profiling off (it samples every thread every 10 ms), the event-loop tick and the system
    monitor slowed from 20 ms / 500 ms to seconds, the GIL monitor off, the memory monitor and
    spilling off (a benchmark's memory is not Dask's business), work stealing off (a run must
    stay on the machine it was given to), and a worker TTL long enough for the slowed heartbeat
    benchlab sets while a run executes (:func:`benchlab.core.cluster.worker_side.quiet_worker`).
    """
    return {
        "distributed.worker.profile.enabled": False,
        "distributed.worker.profile.interval": "10s",
        "distributed.worker.profile.cycle": "1000s",
        "distributed.admin.tick.interval": "2s",
        "distributed.admin.tick.limit": "1h",
        "distributed.admin.system-monitor.interval": "30s",
        "distributed.admin.system-monitor.gil.enabled": False,
        "distributed.admin.system-monitor.disk": False,
        "distributed.worker.memory.monitor-interval": "60s",
        "distributed.worker.memory.target": False,
        "distributed.worker.memory.spill": False,
        "distributed.worker.memory.pause": False,
        "distributed.worker.memory.terminate": False,
        "distributed.scheduler.work-stealing": False,
        "distributed.scheduler.worker-ttl": "15 minutes",
        "distributed.scheduler.allowed-failures": 0,
        "distributed.comm.timeouts.connect": "10s",
    }


@dataclass
class ClusterSpec:
    """A parsed ``--cluster`` value: ``kind`` is ``tcp``, ``local`` or ``ssh``."""

    text: str
    kind: str
    address: str | None = None
    n_workers: int = 0
    hosts: list[str] = field(default_factory=list)


def parse_cluster(text: str) -> ClusterSpec:
    """Parse ``--cluster``; a one-line UserError naming the three forms when it is none."""
    t = (text or "").strip()
    forms = "give tcp://HOST:PORT (a Dask scheduler), local:N or ssh:HOST,HOST"
    if t.startswith(("tcp://", "tls://")):
        rest = t.split("://", 1)[1]
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UserError(f"--cluster {text!r}: no host:port after the scheme; {forms}")
        if t.startswith("tcp://") and not is_loopback(host) and not _CLIENT.insecure:
            # anyone who reaches a plain-TCP scheduler runs code as root on every worker
            raise UserError(f"--cluster {text}: plain tcp:// to another machine lets anyone on "
                            f"the network run code on the workers; use tls:// with "
                            f"certificates (`benchlab cluster certs`, docs/cluster.md) or pass "
                            f"--insecure")
        spec = ClusterSpec(t, "tcp", address=t)
        _security_of(spec, load=False)  # no certificate for tls://: one line before anything
        return spec
    if t.startswith("local:"):
        n = t[6:]
        if not n.isdigit() or not 1 <= int(n) <= 256:
            raise UserError(f"--cluster {text!r}: local:N needs N between 1 and 256 worker "
                            f"processes; {forms}")
        return ClusterSpec(t, "local", n_workers=int(n))
    if t.startswith("ssh:"):
        hosts = [h.strip() for h in t[4:].split(",")]
        if not hosts or not all(hosts) or not all(_HOST.match(h) for h in hosts):
            raise UserError(f"--cluster {text!r}: ssh: needs comma-separated host names; {forms}")
        return ClusterSpec(t, "ssh", hosts=hosts, n_workers=len(hosts))
    raise UserError(f"--cluster {text!r} is not a cluster address; {forms}")


@contextlib.contextmanager
def open_cluster(spec: ClusterSpec, *, slots: int = 1,
                 connect_options: dict[str, Any] | None = None,
                 timeout_s: float | None = None) -> Iterator[Any]:
    """Connect a Dask ``Client`` to the cluster ``spec`` names (starting it for local/ssh).

    ``slots``: concurrent measurements per machine (``--workers``), the ``benchlab-slot``
    resource of the workers benchlab starts. ``connect_options`` go to asyncssh (ssh: port,
    client_keys, known_hosts). Waits up to ``timeout_s`` s (default ``--cluster-timeout``) for
    each ``ssh:`` process to start and for the workers; UserError if the cluster cannot start."""
    import dask

    from benchlab.core.session import interrupts_deferred

    # Dask logs its own view of a fault (a lost scheduler, a killed worker: tracebacks from its
    # reconnect loop, even after the client closed) on stderr; benchlab says it once, in one
    # line, with what to do. So Dask's loggers stay at CRITICAL in this process from here on.
    _silence_dask_logs()
    timeout_s = _CLIENT.start_timeout_s if timeout_s is None else timeout_s
    started_before = _dask_clusters()
    scratch = _local_scratch(spec)
    with dask.config.set(quiet_config()), dask.config.set(_local_config(spec, scratch)):
        try:
            client, cluster = _start(spec, slots, connect_options, timeout_s, scratch)
        except UserError:  # (an ssh: start that timed out has closed its cluster)
            _remove(scratch, spec, connect_options)
            raise
        except BaseException as exc:  # OSError, TimeoutError, asyncssh errors: one line for all
            # and Ctrl-C/SIGTERM while the cluster starts (its workers still 'init'): close what
            # was started here, so Dask's own atexit hook does not trip its assertion on them;
            # a signal meanwhile is held, not lost in _close_started's suppress(BaseException)
            with interrupts_deferred():
                _close_started(started_before)
                _remove(scratch, spec, connect_options)
            if not isinstance(exc, Exception):
                raise
            raise UserError(f"cannot reach the cluster {spec.text} ({_short(exc)}); start the "
                            f"scheduler and workers (docs/cluster.md) or check the address"
                            ) from None
        try:
            if spec.n_workers:
                try:
                    client.wait_for_workers(spec.n_workers, timeout=timeout_s)
                except Exception as exc:
                    raise UserError(f"the cluster {spec.text} started fewer than "
                                    f"{spec.n_workers} workers in {timeout_s:g} s "
                                    f"({_short(exc)}); check the hosts and their logs") from None
            else:  # a team's scheduler: its workers may still be joining (started together)
                try:
                    client.wait_for_workers(1, timeout=min(timeout_s, 30.0))
                except Exception:
                    raise UserError(f"no worker has joined the scheduler {spec.text} in "
                                    f"{min(timeout_s, 30.0):g} s; start workers with "
                                    f"--resources {SLOT}=1 (docs/cluster.md)") from None
            from benchlab.core.cluster.cancel import register

            register(client)  # a run Dask cancels (a killed client's) is killed on its worker
            yield client
        finally:
            # no signal cuts the close in half: a LocalCluster left "closing" made Dask's exit
            # hook wait out its 10-s timeout; the signal is delivered once all is closed
            with interrupts_deferred():
                _close(client, cluster)
                _close_started(started_before)
                _remove(scratch, spec, connect_options)


def _start(spec: ClusterSpec, slots: int, connect_options: dict[str, Any] | None,
           timeout_s: float, scratch: str | None) -> tuple[Any, Any | None]:
    """(client, cluster): connected to a team's scheduler (cluster None), or to the cluster
    started here (``local:N`` in ``scratch``, ``ssh:``)."""
    from distributed import Client

    from benchlab.core.cluster.local import LOCAL

    if LOCAL.dashboard and spec.kind != "local":
        raise UserError(f"--dashboard serves the dashboard of a local:N cluster; {spec.text} "
                        f"serves its own (or none): drop --dashboard")
    if spec.kind == "tcp":
        return Client(spec.address, timeout=f"{int(min(timeout_s, 10))}s",
                      set_as_default=False, **_security_of(spec)), None
    if spec.kind == "local":
        from benchlab.core.cluster.local import start_local_cluster

        cluster = start_local_cluster(spec.n_workers, {SLOT: slots}, str(scratch))
    else:
        from benchlab.core.cluster.ssh import start_ssh_cluster

        cluster = start_ssh_cluster(spec.hosts, {SLOT: slots}, connect_options, str(scratch),
                                    sys.executable, timeout_s)
    return Client(cluster, set_as_default=False), cluster


def _local_scratch(spec: ClusterSpec) -> str | None:
    """The scratch directory of a cluster benchlab starts (``local:N``, ``ssh:``): its
    certificates, and Dask's temporary directory for ``local:N``
    (:mod:`benchlab.core.cluster.local`, :mod:`benchlab.core.cluster.ssh`); None for a team's
    scheduler."""
    from benchlab.core.scratch import make_scratch

    return make_scratch("cluster") if spec.kind in ("local", "ssh") else None


def _local_config(spec: ClusterSpec, scratch: str | None) -> dict[str, Any]:
    from benchlab.core.cluster.local import LOCAL, local_config

    return local_config(scratch, LOCAL.dashboard) if scratch and spec.kind == "local" else {}


def _remove(scratch: str | None, spec: ClusterSpec, connect_options: Any) -> None:
    """Remove a started cluster's scratch directory once its worker processes are gone (and,
    for ``ssh:``, its certificates' directory on each host)."""
    from benchlab.core.cluster.local import end_worker_processes
    from benchlab.core.scratch import remove_scratch

    if scratch is None:
        return
    if spec.kind == "ssh":
        from benchlab.core.cluster.ssh import remote_directory, remove_certificates

        remove_certificates(spec.hosts, connect_options, remote_directory(scratch))
    else:
        end_worker_processes()
    remove_scratch(scratch)


def _close(client: Any, cluster: Any | None) -> None:
    """Close the client and, when benchlab started it, the cluster (its scheduler too: over
    SSH, closing the channel does not stop the remote scheduler process)."""
    if cluster is not None:
        with contextlib.suppress(Exception):
            client.shutdown()
    with contextlib.suppress(Exception):
        client.close(timeout=5)
    if cluster is not None:
        with contextlib.suppress(Exception):
            cluster.close(timeout=10)


def _dask_clusters() -> set[int]:
    """ids of the Dask clusters this process has started and not garbage-collected."""
    from distributed.deploy.spec import SpecCluster

    return {id(c) for c in list(SpecCluster._instances)}


def _close_started(before: set[int]) -> None:
    """Close the Dask clusters started since ``before`` (:func:`_dask_clusters`) and take them
    off Dask's exit list: Dask's atexit hook asserts on a worker still starting
    (``AssertionError: Status.init`` after SIGTERM during start-up), a traceback at exit."""
    import logging

    from distributed.deploy.spec import SpecCluster

    for c in list(SpecCluster._instances):
        if id(c) in before:
            continue
        # a nanny interrupted while starting leaves an asyncio task whose exception asyncio
        # logs when the task is collected ("Task exception was never retrieved" + traceback)
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        with contextlib.suppress(BaseException):
            c.close(timeout=5)
        SpecCluster._instances.discard(c)


def _security_of(spec: ClusterSpec, *, load: bool = True) -> dict[str, Any]:
    """``{"security": Security}`` for a ``tls://`` address (the client's certificate, every
    connection encrypted), ``{}`` for ``tcp://``; UserError when ``tls://`` has no certificate
    configured (Dask would otherwise time out with a traceback at exit)."""
    from benchlab.core.cluster.tls import client_security, configured_client_tls

    if not (spec.address or "").startswith("tls://"):
        return {}
    files = configured_client_tls(_CLIENT.tls_dir)
    if files is None:
        raise UserError(f"--cluster {spec.text}: no TLS certificate configured; give --tls-dir "
                        f"DIR (made by `benchlab cluster certs DIR`) or set BENCHLAB_TLS_DIR")
    return {"security": client_security(files)} if load else {}


def _silence_dask_logs() -> None:
    import logging

    import distributed  # noqa: F401  (its import sets up its loggers: after it, not before)

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in
             ("distributed", "tornado", "asyncssh")]
    for name in {"distributed", "tornado", "asyncssh", *names}:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


@dataclass
class Machine:
    """One worker of the cluster as benchlab sees it: stable label, current address, slots."""

    label: str
    address: str
    host: str
    name: str
    slots: int


def machines_of(client: Any) -> list[Machine]:
    """The cluster's workers as machines, sorted by label (may raise OSError when the
    scheduler is gone)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    result = []
    for addr, w in workers.items():
        host = w.get("host") or addr.split("://")[-1].rsplit(":", 1)[0]
        name = str(w.get("name", addr))
        # only from this worker's own identity, never from the others present: a label must
        # not change when another worker leaves (its runs would look like a new machine's)
        label = host if name == addr else f"{host}/{name}"
        slots = int((w.get("resources") or {}).get(SLOT, 0))
        result.append(Machine(label, addr, host, name, slots))
    return sorted(result, key=lambda m: m.label)


def choose_machines(machines: list[Machine], on: str, cluster: str) -> list[Machine]:
    """Apply ``--on all|N|HOST,...`` to the cluster's machines; UserError when it cannot.

    ``N`` takes the first N machines by label; ``HOST,...`` matches labels or hosts.
    """
    usable = [m for m in machines if m.slots > 0]
    if not usable:
        names = ", ".join(m.label for m in machines) or "none"
        raise UserError(f"no worker of {cluster} offers the {SLOT} resource (workers: {names}); "
                        f"start workers with --resources {SLOT}=1 (docs/cluster.md)")
    on = (on or "all").strip()
    if on == "all":
        return usable
    if on.isdigit():
        n = int(on)
        if not 1 <= n <= len(usable):
            raise UserError(f"--on {on}: the cluster has {len(usable)} usable machines; give "
                            f"1..{len(usable)}, all, or host names")
        return usable[:n]
    wanted = [h.strip() for h in on.split(",") if h.strip()]
    chosen = []
    for h in wanted:
        found = [m for m in usable if h in (m.label, m.host, m.name, m.address)]
        if not found:
            raise UserError(f"--on: no machine {h!r} in {cluster} (machines: "
                            f"{', '.join(m.label for m in usable)}); pick from those")
        chosen += [m for m in found if m not in chosen]
    return chosen
