"""CPU topology parsing: on this machine's real /sys, and on fake sysfs trees.

The fake trees exist because this VM (2 vCPUs, one package, no SMT, one NUMA node) cannot show
the multi-package, multi-thread, multi-node layouts the parser must handle.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_sysfs import make_fake_sysfs

from benchlab.environment.topology import process_allowed_cpus, read_topology
from benchlab.errors import UserError
from benchlab.units import format_cpu_list, parse_cpu_list


def test_cpu_list_round_trip_and_taskset_syntax():
    assert parse_cpu_list("0,2-3") == (0, 2, 3)
    assert parse_cpu_list(" 3,0-1,1 \n") == (0, 1, 3)
    assert parse_cpu_list("0-10:4") == (0, 4, 8)
    assert parse_cpu_list("") == ()
    assert format_cpu_list([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert format_cpu_list([]) == ""


@pytest.mark.parametrize("bad", ["a", "1-", "3-1", "1,,2", "-1", "0-4:0"])
def test_cpu_list_rejects_malformed_input_with_one_line(bad):
    with pytest.raises(UserError) as err:
        parse_cpu_list(bad)
    assert "\n" not in str(err.value) and "taskset" in str(err.value)


def test_this_machine_matches_kernel_views():
    """The live /sys parse agrees with os.cpu_count-style kernel views of this machine."""
    topo = read_topology()
    online = parse_cpu_list(Path("/sys/devices/system/cpu/online").read_text())
    assert topo.online == online
    assert set(topo.allowed) == os.sched_getaffinity(0)
    assert set(topo.usable) == set(online) & os.sched_getaffinity(0)
    # Every online CPU belongs to exactly one physical core.
    cores = topo.physical_cores()
    flat = [cpu for core in cores for cpu in core]
    assert sorted(flat) == list(topo.usable)
    for cpu, info in topo.cpus.items():
        expected = parse_cpu_list(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text())
        assert info.siblings == tuple(c for c in expected if c in online)
        assert info.core_id == int(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/core_id").read_text())
    assert sorted(c for cpus in topo.numa_nodes.values() for c in cpus) == list(online)
    assert topo.describe()["logical_cpus"] == len(online)


def test_fake_two_packages_four_cores_two_threads(tmp_path):
    """Fake 2 packages x 4 cores x 2 threads machine: cores, siblings, packages, NUMA nodes."""
    topo = read_topology(make_fake_sysfs(tmp_path))
    assert topo.online == tuple(range(16))
    assert topo.allowed == topo.online  # a fake root never consults sched_getaffinity
    assert topo.packages == (0, 1)
    assert topo.smt
    assert topo.physical_cores() == [(c, c + 8) for c in range(8)]
    assert topo.cpus[13].siblings == (5, 13)
    assert topo.cpus[13].package_id == 1 and topo.cpus[13].core_id == 1
    assert topo.numa_nodes == {0: (0, 1, 2, 3, 8, 9, 10, 11), 1: (4, 5, 6, 7, 12, 13, 14, 15)}
    assert topo.nodes_with_memory == (0, 1)
    summary = topo.describe()
    assert summary["physical_cores"] == 8 and summary["logical_cpus"] == 16 and summary["packages"] == 2


def test_fake_newer_file_names_and_offline_cpu(tmp_path):
    """package_id / core_cpus_list (newer kernels) and an offline sibling (fake tree)."""
    root = make_fake_sysfs(
        tmp_path, packages=1, cores_per_package=2, offline=(3,),
        siblings_file="core_cpus_list", package_file="package_id",
    )
    topo = read_topology(root)
    assert topo.online == (0, 1, 2)
    assert topo.cpus[1].siblings == (1,)  # sibling 3 is offline
    assert topo.physical_cores() == [(0, 2), (1,)]
    assert 3 not in topo.cpus


def test_allowed_restricts_usable_cores(tmp_path):
    topo = read_topology(make_fake_sysfs(tmp_path), allowed=[0, 8, 1])
    assert topo.usable == (0, 1, 8)
    assert topo.physical_cores() == [(0, 8), (1,)]


def test_missing_sysfs_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_topology(tmp_path / "nothing")


def test_process_allowed_cpus_reads_proc_status():
    assert set(process_allowed_cpus(os.getpid())) == os.sched_getaffinity(0)
