"""CPU affinity modes and per-worker CPU plans.

Affinity mode strings (the ``--affinity`` CLI value):

``none``
    No pinning; the scheduler places every worker.
``core:N``
    Every worker is pinned to logical CPU ``N`` (the number ``taskset -c`` uses; on an SMT
    machine this is one hardware thread, not a whole physical core).
``cores:LIST``
    Every worker may run on all CPUs of ``LIST`` (taskset syntax, e.g. ``0,2-3``).
``cores-rr:LIST``
    Round robin: worker ``i`` is pinned to the single CPU ``LIST[i % len(LIST)]``; with more
    workers than CPUs, CPUs are shared.
``spread``
    Every worker gets a different physical core. Cores are taken alternately from each
    package (socket) so that workers share as little cache and memory bandwidth as possible.
    With ``smt="together"`` a worker gets all hardware threads of its core; with
    ``smt="apart"`` a worker gets one hardware thread, and the second threads of cores are
    only used once every core has one worker.
``numa:N``
    Every worker may run on the CPUs of NUMA node ``N`` and its memory is bound to node
    ``N`` with ``numactl --membind`` (see :func:`numa_membind_prefix`).

Plans only name CPUs; applying them is the spawner's job (``SpawnRequest.cpus``, set with
``sched_setaffinity`` in the child before exec).
"""

from __future__ import annotations

import shutil
from typing import Literal

from benchlab.environment.topology import CpuTopology
from benchlab.errors import NotAvailable, UserError
from benchlab.records import record
from benchlab.units import format_cpu_list, parse_cpu_list

__all__ = [
    "AffinitySpec",
    "parse_affinity",
    "plan_affinity",
    "numa_membind_prefix",
    "AFFINITY_SYNTAX",
]

AFFINITY_SYNTAX = "none | core:N | cores:LIST | cores-rr:LIST | spread | numa:N"

AffinityKind = Literal["none", "core", "cores", "spread", "numa"]
SmtPolicy = Literal["apart", "together"]


@record(frozen=True)
class AffinitySpec:
    """A parsed affinity mode.

    Attributes:
        kind: ``none``, ``core``, ``cores``, ``spread`` or ``numa``.
        cpus: the CPUs named by ``core:N`` (one) or ``cores:LIST``; empty otherwise.
        node: the NUMA node of ``numa:N``; None otherwise.
        round_robin: ``cores-rr:LIST`` (one CPU per worker) instead of ``cores:LIST``.
        text: the canonical mode string, suitable for storing with results.
    """

    kind: AffinityKind
    cpus: tuple[int, ...] = ()
    node: int | None = None
    round_robin: bool = False

    @property
    def text(self) -> str:
        if self.kind == "core":
            return f"core:{self.cpus[0]}"
        if self.kind == "cores":
            return f"{'cores-rr' if self.round_robin else 'cores'}:{format_cpu_list(self.cpus)}"
        if self.kind == "numa":
            return f"numa:{self.node}"
        return self.kind


def _non_negative_int(value: str, mode: str) -> int:
    value = value.strip()
    if not value.isdigit():
        raise UserError(f"invalid affinity {mode!r}: {value!r} is not a non-negative integer; use {AFFINITY_SYNTAX}")
    return int(value)


def parse_affinity(text: str) -> AffinitySpec:
    """Parse an affinity mode string (see module docstring).

    Raises:
        UserError: one line naming the bad value and the accepted syntax.
    """
    mode = text.strip()
    name, sep, arg = mode.partition(":")
    name = name.strip().lower()
    if name in ("none", "spread"):
        if sep:
            raise UserError(f"invalid affinity {text!r}: {name!r} takes no argument; use {AFFINITY_SYNTAX}")
        return AffinitySpec(kind=name)  # type: ignore[arg-type]
    if not sep or not arg.strip():
        if name in ("core", "cores", "cores-rr", "numa"):
            raise UserError(f"invalid affinity {text!r}: {name!r} needs an argument; use {AFFINITY_SYNTAX}")
        raise UserError(f"unknown affinity mode {text!r}; use {AFFINITY_SYNTAX}")
    if name == "core":
        return AffinitySpec(kind="core", cpus=(_non_negative_int(arg, text),))
    if name in ("cores", "cores-rr"):
        cpus = parse_cpu_list(arg, what=f"CPU list in affinity {text!r}")
        return AffinitySpec(kind="cores", cpus=cpus, round_robin=(name == "cores-rr"))
    if name == "numa":
        return AffinitySpec(kind="numa", node=_non_negative_int(arg, text))
    raise UserError(f"unknown affinity mode {text!r}; use {AFFINITY_SYNTAX}")


def _check_cpus(cpus: tuple[int, ...], topology: CpuTopology, mode: str) -> None:
    online = set(topology.online)
    offline = [cpu for cpu in cpus if cpu not in online]
    if offline:
        raise UserError(
            f"affinity {mode!r}: CPU {format_cpu_list(offline)} is not online; "
            f"available CPUs: {format_cpu_list(topology.online)}"
        )
    allowed = set(topology.allowed)
    forbidden = [cpu for cpu in cpus if cpu not in allowed]
    if forbidden:
        raise UserError(
            f"affinity {mode!r}: CPU {format_cpu_list(forbidden)} is outside this process's allowed CPUs "
            f"(cpuset or taskset); available CPUs: {format_cpu_list(topology.usable)}"
        )


def _interleave_packages(cores: list[tuple[int, ...]], topology: CpuTopology) -> list[tuple[int, ...]]:
    """Order cores package 0 core 0, package 1 core 0, package 0 core 1, ..."""
    by_package: dict[int, list[tuple[int, ...]]] = {}
    for core in cores:
        by_package.setdefault(topology.package_of(core[0]), []).append(core)
    queues = [by_package[package] for package in sorted(by_package)]
    ordered: list[tuple[int, ...]] = []
    for rank in range(max((len(queue) for queue in queues), default=0)):
        for queue in queues:
            if rank < len(queue):
                ordered.append(queue[rank])
    return ordered


def _numa_cpus(spec: AffinitySpec, topology: CpuTopology) -> tuple[int, ...]:
    node = spec.node
    if node not in topology.numa_nodes:
        raise UserError(
            f"affinity {spec.text!r}: NUMA node {node} does not exist; "
            f"available nodes: {', '.join(str(n) for n in topology.numa_nodes)}"
        )
    allowed = set(topology.allowed)
    cpus = tuple(cpu for cpu in topology.numa_nodes[node] if cpu in allowed)
    if not cpus:
        raise UserError(
            f"affinity {spec.text!r}: NUMA node {node} has no online CPU this process may use; "
            f"nodes with CPUs: {', '.join(str(n) for n, c in topology.numa_nodes.items() if c)}"
        )
    return cpus


def numa_membind_prefix(
    mode: str | AffinitySpec,
    topology: CpuTopology,
    *,
    numactl: str | None = None,
) -> tuple[str, ...]:
    """Argv prefix that binds the memory of the measured program, for ``numa:N`` modes.

    Returns ``()`` for every mode except ``numa:N``, which gives
    ``("/usr/bin/numactl", "--membind=N", "--")``: put it in front of the program's argv.
    numactl execs the program in the same process, so pid, rusage and cgroup membership are
    the program's; its own start-up (about a millisecond) is inside the measured wall time.
    A cgroup ``cpuset_mems`` limit is the wrapper-free alternative.

    Args:
        numactl: path of the numactl executable; default: found on ``PATH``.

    Raises:
        NotAvailable: numactl is not installed, or node ``N`` has no memory.
        UserError: node ``N`` does not exist.
    """
    spec = parse_affinity(mode) if isinstance(mode, str) else mode
    if spec.kind != "numa":
        return ()
    _numa_cpus(spec, topology)
    if spec.node not in topology.nodes_with_memory:
        raise NotAvailable(
            f"NUMA memory binding not available: node {spec.node} has no memory; "
            f"nodes with memory: {', '.join(str(n) for n in topology.nodes_with_memory)}"
        )
    path = numactl if numactl is not None else shutil.which("numactl")
    if not path or not shutil.which(path):
        raise NotAvailable("NUMA memory binding not available: install numactl")
    return (path, f"--membind={spec.node}", "--")


def plan_affinity(
    mode: str | AffinitySpec,
    workers: int,
    topology: CpuTopology,
    smt: SmtPolicy = "apart",
    *,
    numactl: str | None = None,
) -> list[tuple[int, ...] | None]:
    """CPUs for each of ``workers`` parallel workers under an affinity mode.

    Args:
        mode: a mode string (see module docstring) or a parsed :class:`AffinitySpec`.
        workers: number of workers running at the same time (>= 1).
        topology: from :func:`benchlab.environment.topology.read_topology`.
        smt: for ``spread`` only: ``"together"`` gives each worker all hardware threads of
            its physical core; ``"apart"`` gives each worker one hardware thread, using every
            core once before any core's second thread.
        numactl: for ``numa:N`` only, the numactl path (default: found on ``PATH``).

    Returns:
        One entry per worker: a sorted tuple of logical CPUs, or None (no pinning) for
        ``none``. For ``numa:N`` the caller must also prefix the program's argv with
        :func:`numa_membind_prefix`; this function already checks that binding is possible.

    Raises:
        UserError: a CPU that is not online or not allowed (the message lists available CPUs),
            a missing NUMA node, more workers than ``spread`` can separate, bad ``smt``.
        NotAvailable: ``numa:N`` without numactl.
    """
    spec = parse_affinity(mode) if isinstance(mode, str) else mode
    if workers < 1:
        raise UserError(f"invalid number of workers {workers}; use 1 or more")
    if smt not in ("apart", "together"):
        raise UserError(f"invalid SMT policy {smt!r}; use apart or together")

    if spec.kind == "none":
        return [None] * workers
    if spec.kind in ("core", "cores"):
        _check_cpus(spec.cpus, topology, spec.text)
        if spec.round_robin:
            return [(spec.cpus[index % len(spec.cpus)],) for index in range(workers)]
        return [tuple(spec.cpus)] * workers
    if spec.kind == "numa":
        cpus = _numa_cpus(spec, topology)
        numa_membind_prefix(spec, topology, numactl=numactl)
        return [cpus] * workers

    cores = _interleave_packages(topology.physical_cores(), topology)
    if smt == "together":
        if workers > len(cores):
            raise UserError(
                f"affinity spread with {workers} workers needs {workers} physical cores but only "
                f"{len(cores)} are available (CPUs {format_cpu_list(topology.usable)}); "
                "use fewer workers or --smt apart"
            )
        return [tuple(sorted(core)) for core in cores[:workers]]
    threads = [core[rank] for rank in range(max((len(c) for c in cores), default=0)) for core in cores if rank < len(core)]
    if workers > len(threads):
        raise UserError(
            f"affinity spread with {workers} workers needs {workers} CPUs but only {len(threads)} "
            f"are available (CPUs {format_cpu_list(topology.usable)}); use fewer workers"
        )
    return [(cpu,) for cpu in threads[:workers]]
