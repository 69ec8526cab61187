"""Run cgroups: real cgroup v1 on this machine (we are root), cgroup v2 against a fake tree.

Real tests create cgroups under /sys/fs/cgroup/<controller>/benchlab-test<pid>/ (a parent named
with this test process's pid, so concurrent runs of these tests, and benchlab runs sweeping the
shared "benchlab" parent, cannot interfere) and remove them in finally blocks / fixtures. The v2 tests use a fake cgroupfs tree (tests/control/fake_cgroupfs.py)
because this machine's cgroup2 mount has no controllers.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_cgroupfs import fake_cgroupfs, fake_v2, make_fake_cgroup1, make_fake_cgroup2  # noqa: F401  (fixtures)

from benchlab.control.cgroups import (
    CgroupLayout,
    CgroupLimits,
    RunCgroup,
    cgroup_support,
    detect_layout,
    list_benchlab_cgroups,
    shares_to_weight,
    sweep_stale,
    weight_to_shares,
)
from benchlab.environment.topology import read_topology
from benchlab.errors import NotAvailable, UserError
from benchlab.measure.spawn import SpawnRequest, spawn_measured
from tests.conftest import sigint_as_in_a_terminal

SRC = str(Path(__file__).resolve().parents[2] / "src")
SESSION = f"t{os.getpid()}"
# Real cgroups go under a parent of their own, not the shared "benchlab" one: concurrent
# benchlab runs sweep and remove "benchlab" leaves and parents, which would race with checks here.
PARENT = f"benchlab-test{os.getpid()}"
HYBRID_MOUNTINFO = textwrap.dedent(
    """\
    31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
    32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
    33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
    34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
    35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
    40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
    41 31 0:38 / /nonexistent/unified rw,relatime - cgroup2 cgroup2 rw
    """
)


def _real_v1_layout() -> CgroupLayout:
    layout = detect_layout()
    for controller in ("cpu", "cpuacct", "cpuset", "memory"):
        mount = layout.v1.get(controller)
        if mount is None:
            pytest.skip(f"needs a cgroup v1 {controller} hierarchy (layout here: {layout.version})")
    if os.geteuid() != 0:
        pytest.skip("needs root to create cgroups")
    return layout


@pytest.fixture
def v1_layout():
    layout = _real_v1_layout()
    yield layout
    leftovers = _ours(layout)
    for path in leftovers:  # keep the machine clean even when a test failed
        try:
            os.rmdir(path)
        except OSError:
            pass
    parents = [str(m.path / PARENT) for m in layout.mounts() if (m.path / PARENT).exists()]
    for path in parents:
        try:
            os.rmdir(path)
        except OSError:
            pass
    assert not leftovers and not parents, f"test left cgroups behind: {leftovers + parents}"


def _ours(layout) -> list[str]:
    return list_benchlab_cgroups(layout, PARENT)


def _run(group: RunCgroup, code: str, **kwargs):
    return spawn_measured(
        SpawnRequest(argv=[sys.executable, "-I", "-S", "-c", code], cgroup_procs=group.procs_paths, **kwargs)
    )


# ------------------------------------------------------------------------------------------
# Pure parts


def test_weight_shares_conversion_matches_systemd():
    assert weight_to_shares(100) == 1024
    assert weight_to_shares(50) == 512
    assert weight_to_shares(1) == 10
    assert weight_to_shares(10000) == 102400
    assert shares_to_weight(1024) == 100
    assert shares_to_weight(2) == 1


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"cpu_quota_us": 500}, "at least 1000 us"),
        ({"cpu_period_us": 100000}, "without a CPU quota"),
        ({"cpu_quota_us": 50000, "cpu_period_us": 5_000_000}, "1000..1000000"),
        ({"cpu_weight": 0}, "1..10000"),
        ({"memory_limit_bytes": 1000}, "at least 1 MiB"),
        ({"cpuset_cpus": "0-"}, "cpuset CPU list"),
    ],
)
def test_limits_validation_is_one_line_user_error(kwargs, fragment):
    with pytest.raises(UserError) as err:
        CgroupLimits(**kwargs)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_limits_normalise_and_serialise():
    limits = CgroupLimits(cpu_quota_us=50_000, cpuset_cpus="1,0", cpuset_mems=[0], memory_limit_bytes=64 << 20)
    assert limits.cpuset_cpus == (0, 1)
    assert limits.effective_period_us == 100_000
    assert limits.required_controllers() == {"cpu", "cpuset", "memory"}
    assert limits.to_dict()["cpuset_cpus"] == "0-1"
    assert CgroupLimits().unconstrained and not limits.unconstrained


def test_detect_hybrid_layout_like_this_machine():
    layout = CgroupLayout.from_mountinfo(HYBRID_MOUNTINFO)
    assert layout.version == "hybrid"
    assert set(layout.v1) == {"cpu", "cpuacct", "cpuset", "memory"}  # name=systemd is no controller
    assert layout.mount_for("cpu").path == Path("/sys/fs/cgroup/cpu")
    assert layout.mount_for("memory").version == "v1"
    assert layout.unified.path == Path("/nonexistent/unified") and not layout.unified.controllers
    assert layout.mount_for("io") is None


def test_detect_comounted_v1_and_read_only():
    text = (
        "25 20 0:22 / /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
        "26 20 0:23 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    )
    layout = CgroupLayout.from_mountinfo(text)
    assert layout.version == "v1"
    assert layout.v1["cpu"] is layout.v1["cpuacct"]
    assert layout.v1["cpu"].read_only and not layout.v1["memory"].read_only
    assert len(layout.mounts()) == 2


def test_detect_this_machine_is_consistent():
    layout = detect_layout()
    for mount in layout.mounts():
        assert mount.path.is_dir()
        if mount.version == "v1":
            assert (mount.path / "cgroup.procs").exists()
    if layout.mount_for("cpu") is not None and layout.mount_for("cpu").version == "v1":
        assert (layout.mount_for("cpu").path / "cpu.cfs_quota_us").exists()


def test_missing_controller_is_not_available(tmp_path):
    layout = CgroupLayout.v1_at(tmp_path, ["cpuacct"])
    with pytest.raises(NotAvailable, match="controller 'memory' is not available.*--allow-unconstrained"):
        RunCgroup(CgroupLimits(memory_limit_bytes=64 << 20), layout=layout)


def test_bad_session_label():
    with pytest.raises(UserError, match="session label"):
        RunCgroup(session="a/b", layout=CgroupLayout.from_mountinfo(HYBRID_MOUNTINFO))


# ------------------------------------------------------------------------------------------
# cgroup v2 against a fake tree


def test_v2_fake_tree_files_written_and_removed(fake_v2):
    """Fake cgroup2 tree (this machine's cgroup2 has no controllers): files written by RunCgroup."""
    layout = CgroupLayout.v2_at(fake_v2)
    assert layout.version == "v2"
    limits = CgroupLimits(cpu_quota_us=50_000, cpu_period_us=100_000, cpu_weight=200,
                          cpuset_cpus="1", cpuset_mems="0", memory_limit_bytes=256 << 20)
    with RunCgroup(limits, session=SESSION, layout=layout) as group:
        (leaf,) = [Path(p) for p in group.paths]
        assert leaf.parent == fake_v2 / "benchlab"
        assert leaf.name.startswith(f"{SESSION}-{os.getpid()}-")
        assert group.procs_paths == [str(leaf / "cgroup.procs")]
        assert set((fake_v2 / "cgroup.subtree_control").read_text().split()) == {"+cpu", "+memory", "+cpuset"}
        assert set((fake_v2 / "benchlab" / "cgroup.subtree_control").read_text().split()) == {"+cpu", "+memory", "+cpuset"}
        assert (leaf / "cpu.max").read_text() == "50000 100000"
        assert (leaf / "cpu.weight").read_text() == "200"
        assert (leaf / "cpuset.cpus").read_text() == "1"
        assert (leaf / "cpuset.mems").read_text() == "0"
        assert (leaf / "memory.max").read_text() == str(256 << 20)
        assert not (leaf / "cpu.cfs_quota_us").exists()

        (leaf / "cpu.stat").write_text(
            "usage_usec 1500000\nuser_usec 1200000\nsystem_usec 300000\n"
            "nr_periods 40\nnr_throttled 25\nthrottled_usec 1250000\n"
        )
        (leaf / "memory.peak").write_text("73400320\n")
        (leaf / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
        usage = group.usage()
    assert usage.cpu_time_ns == 1_500_000_000
    assert usage.cpu_user_ns == 1_200_000_000 and usage.cpu_system_ns == 300_000_000
    assert (usage.nr_periods, usage.nr_throttled, usage.throttled_time_ns) == (40, 25, 1_250_000_000)
    assert usage.memory_peak_bytes == 73_400_320
    assert usage.oom_kills == 1
    assert usage.unknown == {}
    assert not leaf.exists() and not (fake_v2 / "benchlab").exists()


def test_v2_fake_tree_without_memory_peak_reports_reason(fake_v2):
    """Fake cgroup2 tree: a kernel without memory.peak (< 5.19) gives an unknown with a reason."""
    with RunCgroup(session=SESSION, layout=CgroupLayout.v2_at(fake_v2)) as group:
        leaf = Path(group.paths[0])
        assert (leaf / "cpu.max").read_text() == ""  # accounting only: no limit written
        (leaf / "cpu.stat").write_text("usage_usec 10\nuser_usec 7\nsystem_usec 3\n")
        usage = group.usage()
    with pytest.raises(RuntimeError, match="inside the with block"):
        group.usage()  # removed: reading now would silently report nothing
    assert usage.cpu_time_ns == 10_000
    assert usage.memory_peak_bytes is None
    assert "memory.peak" in usage.unknown["memory_peak_bytes"]
    assert usage.nr_throttled is None and "nr_throttled" in usage.unknown


def test_v2_fake_tree_enables_only_when_needed(fake_v2):
    """Fake cgroup2 tree: a root with all controllers enabled is left alone; a partial one is completed."""
    (fake_v2 / "cgroup.subtree_control").write_text("cpu memory cpuset\n")
    with RunCgroup(CgroupLimits(cpu_quota_us=20_000), session=SESSION, layout=CgroupLayout.v2_at(fake_v2)) as group:
        assert (fake_v2 / "cgroup.subtree_control").read_text() == "cpu memory cpuset\n"
        assert (Path(group.paths[0]) / "cpu.max").read_text() == "20000 100000"
    (fake_v2 / "cgroup.subtree_control").write_text("cpu\n")
    with RunCgroup(CgroupLimits(memory_limit_bytes=8 << 20), session=SESSION, layout=CgroupLayout.v2_at(fake_v2)):
        assert set((fake_v2 / "cgroup.subtree_control").read_text().split()) == {"+cpu", "+memory", "+cpuset"}


def test_v2_fake_tree_controller_not_enabled_is_not_available(fake_v2):
    """Fake cgroup2 tree without the cpu controller: a CPU quota cannot be applied."""
    (fake_v2 / "cgroup.controllers").write_text("memory pids\n")
    with pytest.raises(NotAvailable, match="controller 'cpu' is not available"):
        RunCgroup(CgroupLimits(cpu_quota_us=20_000), session=SESSION, layout=CgroupLayout.v2_at(fake_v2))
    with RunCgroup(CgroupLimits(memory_limit_bytes=8 << 20), session=SESSION, layout=CgroupLayout.v2_at(fake_v2)) as group:
        leaf = Path(group.paths[0])
        assert (leaf / "memory.max").read_text() == str(8 << 20)
        assert not (leaf / "cpu.max").exists()  # not enabled, so the kernel gives no cpu files
        usage = group.usage()
    assert "no cpu controller" in usage.unknown["nr_throttled"]


def test_v2_fake_sweep_removes_dead_owner_only(fake_v2):
    """Fake cgroup2 tree: sweep_stale removes leaves of dead pids without tasks, nothing else."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    parent = fake_v2 / "benchlab"
    parent.mkdir()
    for name in (f"x-{dead.pid}-0", f"x-{os.getpid()}-0", f"y-{dead.pid}-1", "not-a-benchlab-name"):
        (parent / name).mkdir()
    # A fake cgroup.procs does not empty when its task dies: the leaf must then stay.
    survivor = subprocess.Popen(["sleep", "60"])
    (parent / f"y-{dead.pid}-1" / "cgroup.procs").write_text(f"{survivor.pid}\n")
    messages: list[str] = []
    removed = sweep_stale(CgroupLayout.v2_at(fake_v2), observer=messages.append, kill_timeout_s=0.2)
    assert survivor.wait(timeout=5) == -signal.SIGKILL  # the task in the stale leaf was killed
    assert removed == [str(parent / f"x-{dead.pid}-0")]
    assert any("still holds processes" in m for m in messages)
    assert sorted(p.name for p in parent.iterdir()) == sorted(
        [f"x-{os.getpid()}-0", f"y-{dead.pid}-1", "not-a-benchlab-name"]
    )


def test_cgroup_support_on_fake_v2(fake_v2):
    """Fake cgroup2 tree: support report lists v2 controllers."""
    info = cgroup_support(CgroupLayout.v2_at(fake_v2))
    assert info["version"] == "v2"
    assert info["controllers"]["cpu"] == {"version": "v2", "path": str(fake_v2), "writable": True}
    assert info["limits"] == {"cpu_quota": True, "cpu_weight": True, "cpuset": True, "memory_limit": True}
    assert info["writable"] and info["reason"] is None


# ------------------------------------------------------------------------------------------
# cgroup v1 for real


def test_cgroup_support_this_machine():
    info = cgroup_support()
    layout = detect_layout()
    assert info["version"] == layout.version
    for controller, entry in info["controllers"].items():
        assert entry["path"] == str(layout.mount_for(controller).path)
        assert entry["writable"] == (os.access(entry["path"], os.W_OK) and not layout.mount_for(controller).read_only)


CPU_LOOP = "for i in range(8_000_000): pass"


def _wall_over_cpu(limits: CgroupLimits):
    with RunCgroup(limits, session=SESSION, parent_name=PARENT) as group:
        result = _run(group, CPU_LOOP)
        usage = group.usage()
    assert result.status == "ok", result.error
    return result, usage


@pytest.mark.slow
def test_cpu_quota_half_a_cpu_doubles_wall_time(v1_layout):
    """50000/100000 us quota: wall ~ 2x CPU; unconstrained: wall ~ 1x. cpuacct ~ rusage CPU.

    The machine is shared (load average often > 3 on 2 vCPUs), where an unconstrained loop gets
    well under half a CPU and a 50 % quota would never bite. The test therefore gives its own
    parent cgroup the largest v1 cpu.shares for its duration (an anchor cgroup keeps the empty
    parent from being removed between runs), so our runs get a full CPU when they want one.
    """
    with RunCgroup(session=SESSION, parent_name=PARENT) as _anchor:
        shares = v1_layout.v1["cpu"].path / PARENT / "cpu.shares"
        saved = shares.read_text().strip()
        shares.write_text("262144")
        try:
            _check_quota_ratios()
        finally:
            shares.write_text(saved)


def _check_quota_ratios():
    attempts = []
    for _attempt in range(3):  # a busy neighbour can still distort one attempt
        free_run, free_usage = _wall_over_cpu(CgroupLimits())
        capped_run, capped_usage = _wall_over_cpu(CgroupLimits(cpu_quota_us=50_000, cpu_period_us=100_000))
        for run, usage in ((free_run, free_usage), (capped_run, capped_usage)):
            rusage_ns = run.user_ns + run.sys_ns
            # cgroup CPU time is the child's CPU time, ns (rusage has us resolution).
            assert abs(usage.cpu_time_ns - rusage_ns) <= 0.1 * rusage_ns + 20e6, (usage, run)
            # The user/system split is tick-sampled by the kernel: only roughly the total.
            assert usage.cpu_user_ns + usage.cpu_system_ns == pytest.approx(usage.cpu_time_ns, rel=0.25, abs=30e6)
        free_ratio = free_run.wall_ns / free_usage.cpu_time_ns
        capped_ratio = capped_run.wall_ns / capped_usage.cpu_time_ns
        attempts.append((round(free_ratio, 2), round(capped_ratio, 2)))
        assert capped_usage.nr_throttled > 0 and capped_usage.throttled_time_ns > 0
        assert free_usage.nr_throttled == 0
        if free_ratio < 1.4 and 1.6 <= capped_ratio <= 2.6:
            break
    else:
        pytest.fail(f"wall/CPU ratios (unconstrained, 50% quota) never ~1 and ~2: {attempts}")
    print(f"wall/CPU unconstrained={attempts[-1][0]} quota50%={attempts[-1][1]} attempts={attempts}")


def test_memory_limit_kills_over_and_allows_under(v1_layout):
    limit = 64 << 20
    touch = "b = b'x' * ({size} << 20); print(len(b))"
    with RunCgroup(CgroupLimits(memory_limit_bytes=limit), session=SESSION, parent_name=PARENT) as group:
        assert Path(group.paths[-1], "memory.limit_in_bytes").read_text().strip() == str(limit)
        under = _run(group, touch.format(size=16))
        under_usage = group.usage()
    assert under.status == "ok", under
    assert 16 << 20 <= under_usage.memory_peak_bytes <= limit
    assert under_usage.oom_kills == 0

    with RunCgroup(CgroupLimits(memory_limit_bytes=limit), session=SESSION, parent_name=PARENT) as group:
        over = _run(group, touch.format(size=256))
        over_usage = group.usage()
    assert over.status in ("signaled", "failed"), over
    if over.status == "signaled":
        assert over.signal == signal.SIGKILL and over_usage.oom_kills >= 1
    assert over_usage.memory_peak_bytes <= limit + (1 << 20)


def test_cpuset_is_visible_in_child(v1_layout, tmp_path):
    topo = read_topology()
    if 1 not in topo.usable:
        pytest.skip("needs CPU 1")
    out = tmp_path / "out"
    with RunCgroup(CgroupLimits(cpuset_cpus=(1,)), session=SESSION, parent_name=PARENT) as group:
        result = spawn_measured(SpawnRequest(argv=["grep", "Cpus_allowed_list", "/proc/self/status"],
                                             cgroup_procs=group.procs_paths, stdout_path=str(out)))
    assert result.status == "ok", result
    assert out.read_text().split() == ["Cpus_allowed_list:", "1"]


def test_cpuset_outside_parent_and_weight(v1_layout):
    with pytest.raises(UserError, match=r"cpuset CPU 99 is not available to benchlab's cgroup; available: "):
        RunCgroup(CgroupLimits(cpuset_cpus=(99,)), session=SESSION, parent_name=PARENT).create()
    assert not _ours(v1_layout)  # a failed creation leaves nothing, not even an empty parent
    assert not (v1_layout.v1["cpuset"].path / PARENT).exists()
    with RunCgroup(CgroupLimits(cpu_weight=50), session=SESSION, parent_name=PARENT) as group:
        cpu_leaf = next(p for p in group.paths if "/cpu/" in p)
        assert Path(cpu_leaf, "cpu.shares").read_text().strip() == "512"


def test_procs_paths_cover_every_hierarchy_and_names_are_unique(v1_layout):
    with RunCgroup(session=SESSION, parent_name=PARENT) as a, RunCgroup(session=SESSION, parent_name=PARENT) as b:
        assert a.name != b.name
        mounts = {str(Path(p).parent.parent) for p in a.paths}
        assert {str(v1_layout.v1[c].path) for c in ("cpu", "cpuacct", "memory")} <= mounts
        assert "cpuset" not in {Path(m).name for m in mounts}  # joined only when limited
        assert all(Path(p).is_file() for p in a.procs_paths)
        paths = a.paths + b.paths
    assert not any(Path(p).exists() for p in paths)


def test_removed_after_exception_and_leftover_processes_killed(v1_layout):
    with pytest.raises(RuntimeError):
        with RunCgroup(session=SESSION, parent_name=PARENT) as group:
            paths = group.paths
            # A daemon-like leftover: still running when the context exits.
            daemon = subprocess.Popen(
                ["sleep", "60"],
                preexec_fn=lambda: [Path(p).write_text(str(os.getpid())) for p in group.procs_paths],
            )
            assert group.pids() == [daemon.pid]
            raise RuntimeError("boom")
    assert daemon.wait(timeout=5) == -signal.SIGKILL
    assert not any(Path(p).exists() for p in paths)
    assert not _ours(v1_layout)


def _holder_script(extra: str = "") -> str:
    return textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {SRC!r})
        from benchlab.control.cgroups import RunCgroup, CgroupLimits, install_signal_cleanup
        {extra}
        group = RunCgroup(CgroupLimits(cpu_quota_us=50000), session={SESSION!r}, parent_name={PARENT!r}).create()
        print("\\n".join(group.paths), flush=True)
        print("READY", flush=True)
        time.sleep(60)
        """
    )


def _start_holder(extra: str = ""):
    # SIGINT at its default action: a suite started as a background job ignores it otherwise
    proc = subprocess.Popen([sys.executable, "-c", _holder_script(extra)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=sigint_as_in_a_terminal)
    paths = []
    for line in proc.stdout:
        if line.strip() == "READY":
            break
        paths.append(line.strip())
    assert paths and all(Path(p).is_dir() for p in paths)
    return proc, paths


def test_ctrl_c_removes_cgroup(v1_layout):
    proc, paths = _start_holder()
    proc.send_signal(signal.SIGINT)  # KeyboardInterrupt -> atexit cleanup
    proc.wait(timeout=10)
    assert not any(Path(p).exists() for p in paths)


def test_sigterm_with_signal_cleanup_removes_cgroup(v1_layout):
    proc, paths = _start_holder("install_signal_cleanup()")
    proc.terminate()
    assert proc.wait(timeout=10) == -signal.SIGTERM  # still dies of the signal
    assert not any(Path(p).exists() for p in paths)


def test_kill_9_then_sweep_stale_in_new_process(v1_layout):
    proc, paths = _start_holder()
    try:
        proc.kill()
        proc.wait(timeout=10)
        assert all(Path(p).is_dir() for p in paths)  # SIGKILL leaves them behind
        sweep = subprocess.run(
            [sys.executable, "-c",
             f"import sys; sys.path.insert(0, {SRC!r}); from benchlab.control.cgroups import sweep_stale; "
             "print('\\n'.join(sweep_stale(parent_name=" + repr(PARENT) + ")))"],
            capture_output=True, text=True, check=True,
        )
        assert set(paths) <= set(sweep.stdout.split())
        assert not any(Path(p).exists() for p in paths)
    finally:
        for p in paths:
            if Path(p).exists():
                os.rmdir(p)


_ESCAPER = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from pathlib import Path
    sys.path.insert(0, {src!r})
    from benchlab.control.cgroups import RunCgroup
    group = RunCgroup(session={session!r}, parent_name={parent!r}).create()
    procs = group.procs_paths
    def join():
        for path in procs:
            Path(path).write_text(str(os.getpid()))
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "300"], preexec_fn=join)
    print("\\n".join(group.paths), flush=True)
    print(child.pid, flush=True)
    print("READY", flush=True)
    time.sleep(300)
""")


def test_after_kill_9_the_next_sweep_kills_survivors_and_removes_their_cgroups(v1_layout):
    """A benchlab killed with SIGKILL leaves a run cgroup holding a setsid, SIGTERM-ignoring
    descendant: the next start's sweep kills it (by pid) and removes the cgroup, and prints
    nothing itself (its messages go to the observer, so -q can silence them)."""
    holder = subprocess.Popen([sys.executable, "-c", _ESCAPER.format(src=SRC, session=SESSION,
                                                                     parent=PARENT)],
                              stdout=subprocess.PIPE, text=True)
    lines = []
    for line in holder.stdout:
        if line.strip() == "READY":
            break
        lines.append(line.strip())
    survivor, paths = int(lines[-1]), lines[:-1]
    try:
        holder.kill()
        holder.wait(timeout=10)
        assert Path(f"/proc/{survivor}").exists()  # outlived its benchlab
        assert all(Path(p).is_dir() for p in paths)  # and pins its cgroups
        sweep = subprocess.run(
            [sys.executable, "-c",
             f"import sys; sys.path.insert(0, {SRC!r}); from benchlab.control.cgroups import sweep_stale; "
             f"removed = sweep_stale(parent_name={PARENT!r}, observer=lambda m: print('OBS', m)); "
             "print('\\n'.join(removed))"],
            capture_output=True, text=True, check=True, timeout=60,
        )
        assert sweep.stderr == ""
        assert "killed 1 process(es)" in sweep.stdout and str(survivor) in sweep.stdout
        assert set(paths) <= set(sweep.stdout.split())
        assert not any(Path(p).exists() for p in paths)
        deadline = time.monotonic() + 30  # a wait, not a speed claim: the machine may be loaded
        while Path(f"/proc/{survivor}").exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # killed; gone once init has reaped it
        assert not Path(f"/proc/{survivor}").exists()
        quiet = subprocess.run(
            [sys.executable, "-c",
             f"import sys; sys.path.insert(0, {SRC!r}); from benchlab.control.cgroups import sweep_stale; "
             f"sweep_stale(parent_name={PARENT!r})"], capture_output=True, text=True, check=True)
        assert quiet.stdout == quiet.stderr == ""
    finally:
        try:
            os.kill(survivor, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for p in paths:
            if Path(p).exists():
                os.rmdir(p)


def test_no_permission_is_one_line_user_error(v1_layout):
    """An unprivileged user (nobody) cannot create cgroups: the exact message the CLI shows."""
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {SRC!r})
        # Import first: the interpreter's stdlib (under /root) is unreadable for nobody.
        from benchlab.control.cgroups import RunCgroup, CgroupLimits, cgroup_support
        from benchlab.errors import UserError
        os.setgid(65534); os.setuid(65534)
        print(cgroup_support()["writable"])
        try:
            RunCgroup(CgroupLimits(cpu_quota_us=50000), session={SESSION!r}, parent_name={PARENT!r}).create()
        except UserError as err:
            print(err)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    cpu_mount = v1_layout.v1["cpu"].path
    assert out == [
        "False",
        f"cannot create cgroup under {cpu_mount}: permission denied; run as root or pass "
        "--allow-unconstrained to run without limits (stored as unconstrained)",
    ]


def test_comounted_v1_fake_tree_one_leaf_per_hierarchy(tmp_path, fake_cgroupfs):
    """Fake v1 tree with cpu and cpuacct co-mounted (common on other distributions, not here):
    one leaf per hierarchy, cpuset parent filled from the root before the leaf, limits in v1 files."""
    mounts = {name: make_fake_cgroup1(tmp_path / name, name) for name in ("cpu,cpuacct", "cpuset", "memory")}
    (mounts["cpuset"] / "cpuset.cpus").write_text("0-3\n")
    (mounts["cpuset"] / "cpuset.mems").write_text("0\n")
    text = "".join(
        f"{30 + i} 20 0:{40 + i} / {path} rw - cgroup cgroup rw,{name}\n" for i, (name, path) in enumerate(mounts.items())
    )
    layout = CgroupLayout.from_mountinfo(text)
    limits = CgroupLimits(cpu_quota_us=150_000, cpu_weight=300, cpuset_cpus="2-3", memory_limit_bytes=128 << 20)
    with RunCgroup(limits, session=SESSION, layout=layout) as group:
        leaves = {Path(p).parent.parent.name: Path(p) for p in group.paths}
        assert set(leaves) == {"cpu,cpuacct", "cpuset", "memory"}
        cpu = leaves["cpu,cpuacct"]
        assert (cpu / "cpu.cfs_period_us").read_text() == "100000"
        assert (cpu / "cpu.cfs_quota_us").read_text() == "150000"
        assert (cpu / "cpu.shares").read_text() == "3072"
        assert (mounts["cpuset"] / "benchlab" / "cpuset.cpus").read_text() == "0-3"
        assert (leaves["cpuset"] / "cpuset.cpus").read_text() == "2-3"
        assert (leaves["cpuset"] / "cpuset.mems").read_text() == "0"
        assert (leaves["memory"] / "memory.limit_in_bytes").read_text() == str(128 << 20)
        (cpu / "cpuacct.usage").write_text("2000000000\n")
        (cpu / "cpuacct.usage_user").write_text("1500000000\n")
        (cpu / "cpuacct.usage_sys").write_text("500000000\n")
        (cpu / "cpu.stat").write_text("nr_periods 30\nnr_throttled 10\nthrottled_time 400000000\n")
        (leaves["memory"] / "memory.max_usage_in_bytes").write_text("99000000\n")
        (leaves["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
        usage = group.usage()
    assert (usage.cpu_time_ns, usage.cpu_user_ns, usage.cpu_system_ns) == (2_000_000_000, 1_500_000_000, 500_000_000)
    assert (usage.nr_periods, usage.nr_throttled, usage.throttled_time_ns) == (30, 10, 400_000_000)
    assert usage.memory_peak_bytes == 99_000_000 and usage.oom_kills == 0
    assert not any((path / "benchlab").exists() for path in mounts.values())


def test_cgroup_support_read_only_mount(fake_v2):
    """Fake cgroup2 tree described as mounted read-only (as in many containers)."""
    info = cgroup_support(CgroupLayout.v2_at(fake_v2, read_only=True))
    assert not info["writable"]
    assert info["reason"] == f"cannot create cgroup under {fake_v2}: read-only file system"
    assert not any(info["limits"].values())


def _stale_leaf_with_survivor(parent: str) -> tuple[int, list[str]]:
    """A benchlab-like holder creates a run cgroup with a setsid descendant, then is kill -9'd."""
    holder = subprocess.Popen([sys.executable, "-c", _ESCAPER.format(src=SRC, session=SESSION,
                                                                     parent=parent)],
                              stdout=subprocess.PIPE, text=True)
    lines = []
    for line in holder.stdout:
        if line.strip() == "READY":
            break
        lines.append(line.strip())
    holder.kill()
    holder.wait(timeout=10)
    return int(lines[-1]), lines[:-1]


def test_benchlab_run_sweeps_stale_cgroups_and_its_messages_respect_quiet(v1_layout, tmp_path):
    """The next `benchlab run` kills the survivor; -q silences the message, and with messages on
    (--style full: stderr is not a terminal here) it is shown. Any benchlab start sweeps every
    stale leaf, so a concurrent one (other tests, other users) may get there first: then the
    survivor is dead all the same, and the shown-message case is tried again."""
    from benchlab.control.cgroups import DEFAULT_PARENT

    for quiet in (True, False):
        for attempt in range(4):
            survivor, paths = _stale_leaf_with_survivor(DEFAULT_PARENT)
            try:
                argv = [sys.executable, "-m", "benchlab.cli.main", "run", "--db",
                        str(tmp_path / "store.db"), "-r", "1",
                        *(["-q"] if quiet else ["--style", "full"]), "--", "true"]
                done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stderr
                deadline = time.monotonic() + 30  # a wait, not a speed claim: the machine may be loaded
                while Path(f"/proc/{survivor}").exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
                assert not Path(f"/proc/{survivor}").exists()
                assert not any(Path(p).exists() for p in paths)
                plain = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.stderr).split())
                mentioned = "dead benchlab pid" in plain and str(survivor) in plain
            finally:
                try:
                    os.kill(survivor, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                for p in paths:
                    if Path(p).exists():
                        os.rmdir(p)
            if quiet:
                assert "stale cgroup" not in plain, done.stderr
                break
            if mentioned:
                break
        else:
            pytest.fail(f"benchlab run never reported the sweep it made: {done.stderr!r}")
