"""`benchlab run` under environment control: real cgroups (v1 here, as root), real affinity,
real parallel workers, perf stat, isolation wrappers and background load."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from benchlab.control.cgroups import detect_layout, list_benchlab_cgroups
from benchlab.store import Store
from benchlab.workloads import build_workload
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error, sigint_as_in_a_terminal

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="cgroup limits need root")


def _cgroups_writable() -> bool:
    layout = detect_layout()
    mount = layout.mount_for("cpu")
    return ROOT and mount is not None and os.access(mount.path, os.W_OK)


needs_cgroups = pytest.mark.skipif(not _cgroups_writable(),
                                   reason="no writable cgroup cpu controller on this machine")


def _ours(*, session: str | None = None, pid: int | None = None) -> list[str]:
    """benchlab cgroups of one session or one benchlab process (other tests run concurrently)."""
    out = []
    for path in list_benchlab_cgroups():
        name = Path(path).name
        if name.startswith("track-"):
            continue  # the exec helper's tracking leaf (control.cgroups.tracking), not a run's
        if session is not None and name.startswith(f"{session}-"):
            out.append(path)
        if pid is not None and f"-{pid}-" in name:
            out.append(path)
    return out


def _occupied(*, pid: int) -> list[str]:
    """Leaves of benchlab process ``pid`` that hold a process (a run is going on in them)."""
    busy = []
    for path in _ours(pid=pid):
        try:
            if (Path(path) / "cgroup.procs").read_text().split():
                busy.append(path)
        except OSError:
            continue  # removed while we looked
    return busy


def _session(db: Path) -> tuple[dict, list[dict], Store]:
    store = Store.open(db)
    sess = store.sessions()[0]
    return sess, store.runs(session_id=sess["id"], include_warmup=False), store


def _spin_command(ms: int) -> str:
    """A CPU-bound C workload taking roughly ``ms`` of CPU time here."""
    exe = build_workload("exp_float")
    count = max(10000, int(3_000_000 * ms / 85))
    return f"{exe} {count}"


@needs_cgroups
@pytest.mark.serial
def test_half_a_cpu_quota_doubles_wall_time_at_the_same_cpu_time(db_path):
    """Runs in the serial phase of the suite: a busy machine would hide the quota. Both runs
    get the highest CPU weight, so other work on the machine cannot starve them below 50%."""
    # 300 ms of CPU in 20 ms periods: ~15 throttled periods, so where the run starts within a
    # period (up to one period of extra runtime) moves the ratio by a few percent only
    cmd = _spin_command(300)
    run_cli("run", "--runs", "3", "-n", "free", "--affinity", "core:0", "--cpu-weight", "10000",
            cmd, db=db_path, check=True)
    db2 = db_path.with_name("quota.db")
    run_cli("run", "--runs", "3", "-n", "half", "--cpu-quota", "10000", "--cpu-period", "20000",
            "--cpu-weight", "10000", "--affinity", "core:0", cmd, db=db2, check=True)
    _, free, s1 = _session(db_path)
    sess, half, s2 = _session(db2)
    free_ratio = np.median([r["wall_ns"] / (r["user_ns"] + r["sys_ns"]) for r in free])
    half_ratio = np.median([r["wall_ns"] / (r["user_ns"] + r["sys_ns"]) for r in half])
    # the quota is a hard ceiling: 10 ms of CPU per 20 ms period, whatever else runs
    assert all(r["wall_ns"] >= 2 * (r["user_ns"] + r["sys_ns"]) - 2 * 20e6 for r in half)
    assert free_ratio < 1.3, f"machine too busy for this test: free wall/CPU = {free_ratio:.2f}"
    assert half_ratio / free_ratio == pytest.approx(2.0, rel=0.15), (free_ratio, half_ratio)
    # the cgroup's own CPU accounting is stored beside rusage, and agrees with it
    for r in half:
        m = {x["name"]: x for x in s2.measurements_of_run(r["id"]) if x["source"] == "cgroup"}
        assert m["cpu_time_ns"]["status"] == "ok"
        assert m["cpu_time_ns"]["value"] == pytest.approx(r["user_ns"] + r["sys_ns"], rel=0.2,
                                                          abs=5e6)
        assert m["nr_throttled"]["value"] >= 1
        assert r["cpus"] == "0"
    setup = s2.conn.execute("SELECT data FROM setups").fetchone()[0]
    assert '"cpu_quota_us":10000' in setup
    assert not _ours(session=sess["uid"]), "a benchlab cgroup was left behind"


@needs_cgroups
def test_memory_limit_kills_a_program_over_it_and_records_the_peak(db_path, tmp_path):
    hog = tmp_path / "hog.py"
    hog.write_text("import sys\nb = bytearray(int(sys.argv[1]) * 1024 * 1024)\n"
                   "for i in range(0, len(b), 4096): b[i] = 1\n")
    import sys
    run_cli("run", "--runs", "2", "-i", "--memory-limit", "64M", "-n", "small", "-n", "big",
            f"{sys.executable} {hog} 8", f"{sys.executable} {hog} 200", db=db_path, check=True)
    sess, runs, store = _session(db_path)
    names = {b["id"]: b["name"] for b in store.benchmarks(sess["id"])}
    small = [r for r in runs if names[r["benchmark_id"]] == "small"]
    big = [r for r in runs if names[r["benchmark_id"]] == "big"]
    assert all(r["status"] == "ok" for r in small)
    assert all(r["status"] in ("signaled", "failed") for r in big)
    peaks = [{x["name"]: x for x in store.measurements_of_run(r["id"])}["memory_peak_bytes"]
             for r in small]
    assert all(p["status"] == "ok" and 8e6 < p["value"] <= 64 * 2 ** 20 for p in peaks)


def _busy_intervals(runs: list[dict], worker: int) -> list[tuple[int, int]]:
    """(start, end) in unix ns of one worker's runs: when its program was running."""
    return [(r["start_unix_ns"], r["start_unix_ns"] + r["wall_ns"]) for r in runs
            if r["worker"] == worker]


def test_workers_run_concurrently_each_stored_with_its_index_and_cpus(db_path):
    run_cli("run", "--runs", "4", "--workers", "2", "--affinity", "cores-rr:0,1", "sleep 0.2",
            db=db_path, check=True)
    _, runs, _ = _session(db_path)
    assert sorted({r["worker"] for r in runs}) == [0, 1]
    assert len(runs) == 8
    assert {r["worker"]: r["cpus"] for r in runs} == {0: "0", 1: "1"}
    # Concurrency: the two workers' programs run at the same time. Measured as the time both
    # were running (0 if the workers took turns), against each worker's own busy time, so the
    # gaps between runs that a loaded machine stretches do not count against it (the session's
    # span against a fixed 0.75 s failed there: 4 x 0.1 s of sleep plus 8 starts under load).
    zero, one = _busy_intervals(runs, 0), _busy_intervals(runs, 1)
    both = sum(max(0, min(e0, e1) - max(s0, s1)) for s0, e0 in zero for s1, e1 in one)
    busy = min(sum(e - s for s, e in zero), sum(e - s for s, e in one))
    assert both > 0.5 * busy, (both / 1e9, busy / 1e9)


def test_spread_affinity_and_bad_cpu_are_checked(db_path):
    proc = run_cli("run", "--runs", "1", "--affinity", "core:99", "true", db=db_path)
    assert_one_line_error(proc, "99")
    proc = run_cli("run", "--runs", "1", "--affinity", "sideways", "true", db=db_path)
    assert_one_line_error(proc, "sideways")


def test_perf_events_unsupported_are_stored_as_unsupported_not_zero(db_path):
    if subprocess.run(["which", "perf"], capture_output=True).returncode != 0:
        pytest.skip("perf is not installed")
    run_cli("run", "--runs", "2", "--perf-events", "task-clock,cycles", "sleep 0.01",
            db=db_path, check=True)
    _, runs, store = _session(db_path)
    for r in runs:
        m = {x["name"]: x for x in store.measurements_of_run(r["id"]) if x["source"] == "perf"}
        assert m["task-clock"]["status"] == "ok" and m["task-clock"]["value"] > 0
        cycles = m["cycles"]
        # this VM has no hardware counters; a machine that has them stores a real count
        if cycles["status"] == "unsupported":
            assert cycles["value"] is None
        else:
            assert cycles["status"] == "ok" and cycles["value"] > 0


def test_wrap_isolation_runs_through_the_template_and_parses_isolate_meta(db_path, tmp_path):
    fake_isolate = tmp_path / "isolate"
    # A stand-in for IOI isolate (not installable here): runs the program, writes a meta file.
    fake_isolate.write_text(
        "#!/bin/sh\nmeta=$1; shift; shift\n\"$@\"; rc=$?\n"
        "printf 'time:0.012\\ntime-wall:0.020\\nmax-rss:1500\\ncsw-voluntary:3\\n"
        "csw-forced:1\\nexitcode:%s\\nstatus:OK\\n' $rc > \"$meta\"\nexit $rc\n")
    fake_isolate.chmod(0o755)
    run_cli("run", "--runs", "2", "--isolation", f"wrap:{fake_isolate} {{meta}} -- {{cmd}}",
            "sleep 0.01", db=db_path, check=True)
    _, runs, store = _session(db_path)
    for r in runs:
        m = {x["name"]: x for x in store.measurements_of_run(r["id"]) if x["source"] == "isolate"}
        assert m["time"]["value"] == pytest.approx(0.012e9)
        assert m["max-rss"]["value"] == 1500 and m["csw-forced"]["value"] == 1
        assert "status=OK" in m["status"]["note"]
    proc = run_cli("run", "--runs", "1", "--isolation", "wrap:firejail --quiet", "true", db=db_path)
    assert_one_line_error(proc, "{cmd}")


def _processes_with_env(entry: str) -> list[int]:
    """Live (non-zombie) processes whose environment holds ``entry`` (NAME=value)."""
    wanted = entry.encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if wanted not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(proc.name))
    return found


def test_background_load_runs_during_the_session_and_stops_after(db_path):
    # The session's processes carry a variable of their own: `pgrep` on the spinner's code
    # also found the spinners of tests/control/test_load.py running on the other xdist worker.
    marker = f"BENCHLAB_TEST_LOAD_MARKER={os.getpid()}-{time.monotonic_ns()}"
    name, value = marker.split("=")
    run_cli("run", "--runs", "3", "--load", "spin:1", "sleep 0.05", db=db_path, check=True,
            env={name: value})
    sess, _, store = _session(db_path)
    load = sess["metadata"]["load"]
    assert load["kind"] == "spin" and load["backend"] == "builtin-spinner"
    assert load["placement"]["processes"] == 1  # the spinner was running (and had the marker)
    assert _processes_with_env(marker) == [], "the background load outlived the session"


@needs_cgroups
def test_no_cgroup_left_after_ctrl_c_or_kill_9_and_next_start_sweeps(db_path):
    cmd = _spin_command(300)
    killed = []
    for how in (signal.SIGINT, signal.SIGKILL):
        proc = subprocess.Popen([BENCHLAB, "run", "--runs", "50", "--cpu-quota", "20000", "-q",
                                 cmd, "--db", str(db_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=sigint_as_in_a_terminal)
        # Wait for a leaf with the measured program in it: the session first creates and
        # removes a trial leaf (to refuse bad limits before measuring), and each run has its
        # own leaf, so a leaf seen empty may be gone by the time the signal arrives.
        deadline = time.monotonic() + 60
        running = False
        while not running and time.monotonic() < deadline and proc.poll() is None:
            running = bool(_occupied(pid=proc.pid))
            time.sleep(0 if running else 0.02)
        if not running:
            proc.kill()
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"no benchlab cgroup appeared (exit {proc.returncode}); "
                        f"stderr: {err.decode(errors='replace')[-2000:]}")
        proc.send_signal(how)
        proc.wait(timeout=30)
        if how == signal.SIGINT:
            assert proc.returncode == 130
            assert not _ours(pid=proc.pid)
        else:
            killed.append(proc.pid)
    # after kill -9 the leaf may remain (nobody could remove it): the next start sweeps it
    run_cli("run", "--runs", "1", "true", db=db_path, check=True)
    assert not _ours(pid=killed[0])


def test_unconstrained_fallback_is_stored_as_such(db_path, monkeypatch):
    """Without a usable cgroup hierarchy (simulated by pointing the layout at nothing)."""
    env = {"BENCHLAB_CGROUP_MOUNTINFO": "/dev/null"}
    proc = run_cli("run", "--runs", "1", "--cpu-quota", "50000", "true", db=db_path, env=env)
    assert_one_line_error(proc, "--allow-unconstrained")
    run_cli("run", "--runs", "1", "--cpu-quota", "50000", "--allow-unconstrained", "true",
            db=db_path, env=env, check=True)
    _, _, store = _session(db_path)
    setup = store.conn.execute("SELECT data FROM setups ORDER BY id DESC").fetchone()[0]
    assert '"unconstrained":' in setup and '"unconstrained":null' not in setup


@needs_cgroups
def test_the_harness_joins_the_cgroup_outside_the_measured_time_and_goes_home(tmp_path):
    """The exec helper joins the run's cgroup before its clock starts (attaching to a v1 cgroup
    can wait for an RCU grace period), the program inherits the membership, and the helper
    returns to its own cgroups after the clock stops, so the leaf can be removed."""
    from benchlab.control.cgroups import CgroupLimits, RunCgroup
    from benchlab.measure import spawn
    from benchlab.measure.spawn import SpawnRequest, spawn_measured

    own = Path("/proc/self/cgroup").read_text()
    out = tmp_path / "out"
    with RunCgroup(CgroupLimits(cpu_quota_us=90_000), session="joint") as group:
        # $PPID of the program is the exec helper: it is in the leaf while the program runs
        m = spawn_measured(SpawnRequest(argv=["sh", "-c", "cat /proc/$PPID/cgroup"],
                                        stdout_path=str(out), cgroup_procs=group.procs_paths))
        assert m.status == "ok"
        usage = group.usage()
        helper_pid = spawn.servers.server.pid
        # Home again in every hierarchy a run joins; the helper's tracking leaf (freezer or pids,
        # which runs never join) is where it lives for good.
        def run_hierarchies(text: str) -> list[str]:
            return [line for line in text.splitlines()
                    if not any(c in line.split(":")[1].split(",") for c in ("freezer", "pids"))]
        assert run_hierarchies(Path(f"/proc/{helper_pid}/cgroup").read_text()) == \
            run_hierarchies(own)
        leaf = group.name
    assert f"/{leaf}" in out.read_text()
    assert usage.cpu_time_ns and usage.cpu_time_ns > 0  # the program's time was accounted there
    assert not [p for p in list_benchlab_cgroups() if Path(p).name.startswith("joint-")]
