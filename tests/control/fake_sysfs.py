"""Fake sysfs trees describing machines this 2-vCPU VM is not (several packages, SMT, NUMA).

Only the files benchlab.environment.topology reads are written.
"""

from __future__ import annotations

from pathlib import Path

from benchlab.units import format_cpu_list


def make_fake_sysfs(
    root: Path,
    *,
    packages: int = 2,
    cores_per_package: int = 4,
    threads_per_core: int = 2,
    offline: tuple[int, ...] = (),
    numa_per_package: bool = True,
    siblings_file: str = "thread_siblings_list",
    package_file: str = "physical_package_id",
) -> Path:
    """Write a fake ``/sys`` under ``root`` and return ``root``.

    Numbering follows the usual Intel layout: CPU = thread * (packages * cores) +
    package * cores + core, so CPUs 0..7 are the first threads of all cores and 8..15 their
    SMT siblings (for 2 packages x 4 cores x 2 threads). NUMA node p holds package p.
    """
    cores_total = packages * cores_per_package
    total = cores_total * threads_per_core
    cpu_dir = root / "devices" / "system" / "cpu"
    cpu_dir.mkdir(parents=True)
    online = [cpu for cpu in range(total) if cpu not in offline]
    (cpu_dir / "online").write_text(format_cpu_list(online) + "\n")
    (cpu_dir / "possible").write_text(f"0-{total - 1}\n")
    for cpu in range(total):
        thread, rest = divmod(cpu, cores_total)
        package, core = divmod(rest, cores_per_package)
        topo = cpu_dir / f"cpu{cpu}" / "topology"
        if cpu in offline:
            # The kernel removes the topology directory of an offline CPU.
            (cpu_dir / f"cpu{cpu}").mkdir()
            continue
        topo.mkdir(parents=True)
        siblings = [t * cores_total + package * cores_per_package + core for t in range(threads_per_core)]
        (topo / "core_id").write_text(f"{core}\n")
        (topo / package_file).write_text(f"{package}\n")
        (topo / siblings_file).write_text(format_cpu_list(siblings) + "\n")
    node_dir = root / "devices" / "system" / "node"
    node_dir.mkdir(parents=True)
    if numa_per_package:
        nodes = {
            package: [cpu for cpu in range(total) if (cpu % cores_total) // cores_per_package == package]
            for package in range(packages)
        }
    else:
        nodes = {0: list(range(total))}
    for node, cpus in nodes.items():
        (node_dir / f"node{node}").mkdir()
        (node_dir / f"node{node}" / "cpulist").write_text(format_cpu_list(cpus) + "\n")
    (node_dir / "has_memory").write_text(format_cpu_list(nodes) + "\n")
    (node_dir / "online").write_text(format_cpu_list(nodes) + "\n")
    return root
