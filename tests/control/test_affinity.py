"""Affinity mode parsing and per-worker CPU plans.

Plans for SMT/multi-package/NUMA layouts use a fake sysfs tree (2 packages x 4 cores x 2
threads) because this VM has 2 vCPUs, one package, no SMT and one NUMA node. Pinning itself is
checked on real child processes through the kernel's Cpus_allowed_list.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from fake_sysfs import make_fake_sysfs

from benchlab.control.affinity import (
    AffinitySpec,
    numa_membind_prefix,
    parse_affinity,
    plan_affinity,
)
from benchlab.environment.topology import process_allowed_cpus, read_topology
from benchlab.errors import NotAvailable, UserError


@pytest.fixture
def fake_topo(tmp_path):
    return read_topology(make_fake_sysfs(tmp_path))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("none", AffinitySpec("none")),
        ("spread", AffinitySpec("spread")),
        ("core:3", AffinitySpec("core", cpus=(3,))),
        ("cores:0,2-3", AffinitySpec("cores", cpus=(0, 2, 3))),
        ("cores-rr:4-5", AffinitySpec("cores", cpus=(4, 5), round_robin=True)),
        ("numa:1", AffinitySpec("numa", node=1)),
        (" CORE:1 ", AffinitySpec("core", cpus=(1,))),
    ],
)
def test_parse_valid_modes(text, expected):
    spec = parse_affinity(text)
    assert spec == expected
    assert parse_affinity(spec.text) == spec  # canonical text round-trips


@pytest.mark.parametrize("bad", ["", "pin", "core", "core:", "core:x", "core:-1", "cores:1-", "numa:a", "spread:2", "none:1"])
def test_parse_invalid_modes_is_one_line_user_error(bad):
    with pytest.raises(UserError) as err:
        parse_affinity(bad)
    message = str(err.value)
    assert "\n" not in message
    assert repr(bad) in message or repr(bad.strip()) in message or "taskset" in message


def test_spread_together_gives_whole_cores_across_packages(fake_topo):
    plan = plan_affinity("spread", 4, fake_topo, smt="together")
    # package 0 core 0, package 1 core 0, package 0 core 1, package 1 core 1
    assert plan == [(0, 8), (4, 12), (1, 9), (5, 13)]
    assert len({cpu for cpus in plan for cpu in cpus}) == 8  # no CPU shared


def test_spread_apart_uses_every_core_before_second_threads(fake_topo):
    plan = plan_affinity("spread", 10, fake_topo, smt="apart")
    assert plan == [(0,), (4,), (1,), (5,), (2,), (6,), (3,), (7,), (8,), (12,)]
    first_eight = [cpus[0] for cpus in plan[:8]]
    cores = {fake_topo.cpus[cpu].siblings for cpu in first_eight}
    assert len(cores) == 8  # eight distinct physical cores


def test_spread_limits(fake_topo):
    assert len(plan_affinity("spread", 8, fake_topo, smt="together")) == 8
    with pytest.raises(UserError, match="needs 9 physical cores but only 8"):
        plan_affinity("spread", 9, fake_topo, smt="together")
    assert len(plan_affinity("spread", 16, fake_topo, smt="apart")) == 16
    with pytest.raises(UserError, match="needs 17 CPUs but only 16"):
        plan_affinity("spread", 17, fake_topo, smt="apart")
    with pytest.raises(UserError, match="SMT policy"):
        plan_affinity("spread", 1, fake_topo, smt="sideways")  # type: ignore[arg-type]


def test_core_and_cores_plans(fake_topo):
    assert plan_affinity("core:5", 3, fake_topo) == [(5,)] * 3
    assert plan_affinity("cores:0,2-3", 2, fake_topo) == [(0, 2, 3)] * 2
    assert plan_affinity("cores-rr:0,2-3", 5, fake_topo) == [(0,), (2,), (3,), (0,), (2,)]
    assert plan_affinity("none", 2, fake_topo) == [None, None]
    with pytest.raises(UserError, match="workers"):
        plan_affinity("none", 0, fake_topo)


def test_cpu_not_online_names_available_cpus(tmp_path):
    topo = read_topology(make_fake_sysfs(tmp_path, packages=1, cores_per_package=2, offline=(3,)))
    with pytest.raises(UserError) as err:
        plan_affinity("cores:1-3", 1, topo)
    assert str(err.value) == "affinity 'cores:1-3': CPU 3 is not online; available CPUs: 0-2"


def test_cpu_outside_allowed_set_is_rejected(tmp_path):
    topo = read_topology(make_fake_sysfs(tmp_path), allowed=[0, 1])
    with pytest.raises(UserError, match="outside this process's allowed CPUs.*available CPUs: 0-1"):
        plan_affinity("core:2", 1, topo)
    assert plan_affinity("spread", 2, topo) == [(0,), (1,)]


def test_numa_plan_and_membind_prefix(fake_topo):
    plan = plan_affinity("numa:1", 2, fake_topo, numactl="/usr/bin/numactl")
    assert plan == [(4, 5, 6, 7, 12, 13, 14, 15)] * 2
    assert numa_membind_prefix("numa:1", fake_topo, numactl="/usr/bin/numactl") == (
        "/usr/bin/numactl", "--membind=1", "--",
    )
    assert numa_membind_prefix("spread", fake_topo) == ()
    with pytest.raises(UserError, match="node 2 does not exist; available nodes: 0, 1"):
        plan_affinity("numa:2", 1, fake_topo)


def test_numa_without_numactl_is_not_available(fake_topo, tmp_path):
    missing = str(tmp_path / "no-numactl")
    with pytest.raises(NotAvailable) as err:
        plan_affinity("numa:0", 1, fake_topo, numactl=missing)
    assert str(err.value) == "NUMA memory binding not available: install numactl"


def _sleeper(cpus):
    """A real child pinned with sched_setaffinity before exec, as the C exec helper does."""
    return subprocess.Popen(
        ["sleep", "30"], preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    )


@pytest.mark.parametrize("mode", ["core:1", "cores:0-1", "cores-rr:1,0", "spread", "none"])
def test_plans_pin_real_children(mode):
    """Each worker's planned CPUs are what the kernel reports for a real child."""
    topo = read_topology()
    workers = 2 if len(topo.usable) >= 2 else 1
    if mode in ("core:1", "cores-rr:1,0", "cores:0-1") and 1 not in topo.usable:
        pytest.skip("needs CPU 1")
    plan = plan_affinity(mode, workers, topo)
    children = [_sleeper(cpus) for cpus in plan]
    try:
        for cpus, child in zip(plan, children):
            seen = process_allowed_cpus(child.pid)
            if cpus is None:
                assert set(seen) == os.sched_getaffinity(0)
            else:
                assert seen == cpus
    finally:
        for child in children:
            child.kill()
            child.wait()


def test_taskset_agrees_with_plan():
    topo = read_topology()
    cpu = topo.usable[-1]
    (cpus,) = plan_affinity(f"core:{cpu}", 1, topo)
    out = subprocess.run(
        ["taskset", "-c", ",".join(map(str, cpus)), "grep", "Cpus_allowed_list", "/proc/self/status"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out.split()[-1] == str(cpu)


def test_numa_membind_really_binds_on_this_machine():
    """numactl prefix for node 0 makes the kernel apply a bind:0 policy to the program."""
    topo = read_topology()
    try:
        prefix = numa_membind_prefix("numa:0", topo)
    except NotAvailable as err:
        pytest.skip(str(err))
    out = subprocess.run(
        [*prefix, sys.executable, "-c", "print(open('/proc/self/numa_maps').read())"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "bind:0" in out


def test_plans_inside_a_cpuset(fake_topo):
    """A topology restricted to a cgroup's cpuset plans inside it and rejects CPUs outside."""
    inside = fake_topo.restricted([4, 5, 12, 13])
    assert plan_affinity("spread", 2, inside, smt="together") == [(4, 12), (5, 13)]
    assert plan_affinity("spread", 3, inside, smt="apart") == [(4,), (5,), (12,)]
    with pytest.raises(UserError, match="CPU 0 is outside .* available CPUs: 4-5,12-13"):
        plan_affinity("core:0", 1, inside)
