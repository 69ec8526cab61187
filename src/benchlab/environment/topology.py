"""CPU topology of this machine, read from sysfs.

Reads ``<sysfs>/devices/system/cpu`` (online CPUs and, per CPU, ``topology/core_id``,
``topology/physical_package_id`` or ``package_id``, ``topology/thread_siblings_list`` or
``core_cpus_list``) and ``<sysfs>/devices/system/node/node*/cpulist`` (NUMA nodes).

The sysfs root is a parameter so that tests can describe machines this one is not (several
packages, SMT, several NUMA nodes) with a fake tree.

CPU numbers are Linux logical CPU numbers, as used by ``taskset -c`` and
``sched_setaffinity``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from pathlib import Path

from benchlab.environment._read import is_unknown, read_text
from benchlab.errors import UserError
from benchlab.records import record
from benchlab.units import format_cpu_list, parse_cpu_list

__all__ = [
    "LogicalCpu",
    "CpuTopology",
    "read_topology",
    "process_allowed_cpus",
]

@record(frozen=True)
class LogicalCpu:
    """One online logical CPU (hardware thread).

    Attributes:
        cpu: logical CPU number.
        core_id: ``topology/core_id`` (unique only within a package).
        package_id: socket, from ``physical_package_id`` (``package_id`` on newer layouts).
        siblings: logical CPUs sharing this physical core, including ``cpu`` itself
            (``thread_siblings_list``, or ``core_cpus_list``). One element without SMT.
    """

    cpu: int
    core_id: int
    package_id: int
    siblings: tuple[int, ...]


@record(frozen=True)
class CpuTopology:
    """Online CPUs, physical cores, packages and NUMA nodes of a machine.

    Attributes:
        cpus: online logical CPUs by number.
        online: online CPU numbers, sorted.
        numa_nodes: NUMA node -> its online CPUs. A machine without NUMA information
            in sysfs is reported as node 0 holding every online CPU.
        nodes_with_memory: NUMA nodes that have memory (``node/has_memory``); nodes that
            only have CPUs cannot be used for memory binding.
        allowed: CPUs this process may use (``sched_getaffinity``) when the topology was
            read from the live ``/sys``; equal to ``online`` for a fake tree.
        source: the sysfs root the topology was read from.
    """

    cpus: Mapping[int, LogicalCpu]
    online: tuple[int, ...]
    numa_nodes: Mapping[int, tuple[int, ...]]
    nodes_with_memory: tuple[int, ...]
    allowed: tuple[int, ...]
    source: str = "/sys"
    _cores: tuple[tuple[int, ...], ...] = field(default=(), repr=False, compare=False)

    @property
    def cores(self) -> tuple[tuple[int, ...], ...]:
        """Every physical core as its online sibling CPUs, usable by this process or not."""
        return self._cores

    @property
    def usable(self) -> tuple[int, ...]:
        """CPUs that are online and allowed for this process, sorted."""
        allowed = set(self.allowed)
        return tuple(cpu for cpu in self.online if cpu in allowed)

    def physical_cores(self) -> list[tuple[int, ...]]:
        """Physical cores as tuples of their usable sibling CPUs, ordered by lowest CPU.

        Cores without any usable CPU are left out.
        """
        usable = set(self.usable)
        cores = []
        for siblings in self._cores:
            kept = tuple(cpu for cpu in siblings if cpu in usable)
            if kept:
                cores.append(kept)
        return cores

    def restricted(self, cpus: Iterable[int]) -> "CpuTopology":
        """The same machine with ``allowed`` narrowed to ``cpus``, e.g. a run cgroup's cpuset.

        Plans made on the result stay inside ``cpus``, and naming a CPU outside is a UserError,
        instead of a failed ``sched_setaffinity`` in the child after it joined the cpuset.
        """
        keep = set(cpus)
        return replace(self, allowed=tuple(cpu for cpu in self.allowed if cpu in keep))

    def package_of(self, cpu: int) -> int:
        """Package (socket) number of a logical CPU."""
        return self.cpus[cpu].package_id

    @property
    def packages(self) -> tuple[int, ...]:
        """Package numbers present among the online CPUs, sorted."""
        return tuple(sorted({info.package_id for info in self.cpus.values()}))

    @property
    def smt(self) -> bool:
        """True when at least one physical core has more than one online hardware thread."""
        return any(len(core) > 1 for core in self._cores)

    def describe(self) -> dict:
        """Plain-data summary for ``benchlab system`` and the stored environment."""
        return {
            "online": format_cpu_list(self.online),
            "allowed": format_cpu_list(self.allowed),
            "packages": len(self.packages),
            "physical_cores": len(self._cores),
            "logical_cpus": len(self.online),
            "smt": self.smt,
            "numa_nodes": {str(node): format_cpu_list(cpus) for node, cpus in self.numa_nodes.items()},
            "nodes_with_memory": list(self.nodes_with_memory),
        }


def _read(path: Path) -> str | None:
    text = read_text(path)  # one reading per session start (reading_once), as the probe's
    return None if is_unknown(text) else text


def _read_int(path: Path) -> int | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


#: This process's reads of the live ``/sys``, by (online CPU list, allowed CPUs): one session
#: asked four times (placement twice, the environment probe twice), ~0.6 ms each. A CPU taken
#: offline or online, or another affinity, is another key, so it is read afresh.
_LIVE: dict[tuple[str | None, tuple[int, ...]], CpuTopology] = {}


def read_topology(sysfs_root: str | os.PathLike = "/sys", *, allowed: Iterable[int] | None = None) -> CpuTopology:
    """Read the CPU topology under ``sysfs_root`` (``/sys`` on a real machine; its reads are
    remembered for this process while the online CPUs and the allowed CPUs stay the same).

    Args:
        sysfs_root: root of the sysfs tree; a fake tree in tests.
        allowed: CPUs this process may run on. Default: ``os.sched_getaffinity(0)`` for the
            live ``/sys``, all online CPUs for any other root.

    A CPU without a ``topology`` directory (old kernels, some containers) is taken as its
    own physical core in package 0.

    Raises:
        UserError: when ``<sysfs_root>/devices/system/cpu`` does not exist.
    """
    if os.fspath(sysfs_root) != "/sys":
        return _read_topology(Path(sysfs_root), allowed)
    wanted = tuple(sorted(set(allowed) if allowed is not None else os.sched_getaffinity(0)))
    key = (_read(Path("/sys/devices/system/cpu/online")), wanted)
    topology = _LIVE.get(key)
    if topology is None:
        topology = _LIVE[key] = _read_topology(Path(sysfs_root), wanted)
    return topology


def _read_topology(root: Path, allowed: Iterable[int] | None) -> CpuTopology:
    cpu_dir = root / "devices" / "system" / "cpu"
    if not cpu_dir.is_dir():
        raise UserError(f"cannot read CPU topology: {cpu_dir} does not exist; is sysfs mounted at {root}?")
    online_text = _read(cpu_dir / "online")
    present = sorted(
        int(entry.name[3:]) for entry in cpu_dir.iterdir() if re.fullmatch(r"cpu\d+", entry.name)
    )
    online = parse_cpu_list(online_text, what=f"{cpu_dir / 'online'}") if online_text is not None else tuple(present)

    cpus: dict[int, LogicalCpu] = {}
    cores: dict[tuple[int, ...], None] = {}
    for cpu in online:
        topo = cpu_dir / f"cpu{cpu}" / "topology"
        core_id = _read_int(topo / "core_id")
        package = _read_int(topo / "physical_package_id")
        if package is None:
            package = _read_int(topo / "package_id")
        siblings_text = _read(topo / "thread_siblings_list")
        if siblings_text is None:
            siblings_text = _read(topo / "core_cpus_list")
        siblings = parse_cpu_list(siblings_text) if siblings_text else (cpu,)
        # Offline siblings are not usable; keep only online ones so a core is what can run.
        siblings = tuple(s for s in siblings if s in online) or (cpu,)
        cpus[cpu] = LogicalCpu(
            cpu=cpu,
            core_id=core_id if core_id is not None else cpu,
            package_id=package if package is not None and package >= 0 else 0,
            siblings=siblings,
        )
        cores.setdefault(siblings, None)

    node_dir = root / "devices" / "system" / "node"
    numa: dict[int, tuple[int, ...]] = {}
    if node_dir.is_dir():
        for entry in sorted(node_dir.iterdir()):
            match = re.fullmatch(r"node(\d+)", entry.name)
            if not match:
                continue
            cpulist = _read(entry / "cpulist") or ""
            numa[int(match.group(1))] = tuple(c for c in parse_cpu_list(cpulist) if c in cpus)
    if not numa:
        numa = {0: tuple(online)}
    memory_text = _read(node_dir / "has_memory")
    nodes_with_memory = parse_cpu_list(memory_text) if memory_text is not None else tuple(sorted(numa))

    if allowed is None:
        is_live = root.resolve() == Path("/sys").resolve()
        allowed_cpus = tuple(sorted(os.sched_getaffinity(0))) if is_live else tuple(online)
    else:
        allowed_cpus = tuple(sorted(set(allowed)))

    return CpuTopology(
        cpus=cpus,
        online=tuple(online),
        numa_nodes=dict(sorted(numa.items())),
        nodes_with_memory=tuple(nodes_with_memory),
        allowed=allowed_cpus,
        source=str(root),
        _cores=tuple(sorted(cores, key=min)),
    )


def process_allowed_cpus(pid: int) -> tuple[int, ...]:
    """CPUs a running process may use, from ``/proc/<pid>/status`` ``Cpus_allowed_list``.

    This is the kernel's view after both ``sched_setaffinity`` and cpuset cgroups.
    """
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return parse_cpu_list(line.split(":", 1)[1])
    raise RuntimeError(f"/proc/{pid}/status has no Cpus_allowed_list line")
