"""No process outlives its run: real grandchildren that setsid() and ignore SIGTERM.

Each test starts a target that launches a grandchild in a new session (``setsid``) with SIGTERM
ignored, i.e. out of reach of the target's process-group kill, and waits until the grandchild
wrote its pid. Afterwards that pid must not exist, and the count must be recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchlab.measure.spawn import SpawnRequest, spawn_measured


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def _escaping_target(pidfile: Path, then: str) -> list[str]:
    """sh that starts a setsid grandchild ignoring SIGTERM, waits for its pid file, then ``then``."""
    grandchild = f"trap '' TERM; echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 300"
    script = (f"setsid sh -c \"{grandchild}\" & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; {then}")
    return ["sh", "-c", script]


@pytest.fixture
def reaper():
    """Kill any grandchild a failing test left behind, so a failure does not leak processes."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_setsid_grandchild_ignoring_sigterm_is_killed_when_the_run_ends(tmp_path, reaper):
    pidfile = tmp_path / "grandchild.pid"
    result = spawn_measured(SpawnRequest(argv=_escaping_target(pidfile, "exit 0")), method="helper")
    grandchild = int(pidfile.read_text())
    reaper.append(grandchild)
    assert result.status == "ok", result
    assert not _alive(grandchild)
    assert result.descendants_killed == 1


def test_a_run_that_leaves_nothing_behind_records_zero(tmp_path):
    result = spawn_measured(SpawnRequest(argv=["sh", "-c", "sleep 0.01 & wait"]), method="helper")
    assert result.status == "ok" and result.descendants_killed == 0


def test_with_timeout_the_escaped_grandchild_dies_too(tmp_path, reaper):
    pidfile = tmp_path / "grandchild.pid"
    # 3 s: the grandchild must have written its pid before the timeout (three shells start in
    # between, which can take over a second on a loaded machine; then there is no pid file)
    result = spawn_measured(SpawnRequest(argv=_escaping_target(pidfile, "exec sleep 300"),
                                         timeout_s=3.0), method="helper")
    grandchild = int(pidfile.read_text())
    reaper.append(grandchild)
    assert result.status == "timeout", result
    assert not _alive(grandchild)
    assert result.descendants_killed == 1


def test_a_deep_chain_of_orphans_is_killed_to_the_last(tmp_path, reaper):
    """A grandchild's own children are orphaned to the helper when it dies: killed in turn."""
    pidfile = tmp_path / "leaf.pid"
    chain = (f"setsid sh -c \"trap '' TERM; sh -c 'trap \\\"\\\" TERM; echo \\$\\$ > {pidfile}; "
             f"exec sleep 300' & exec sleep 300\" & "
             f"while [ ! -s {pidfile} ]; do sleep 0.01; done; exit 0")
    result = spawn_measured(SpawnRequest(argv=["sh", "-c", chain]), method="helper")
    leaf = int(pidfile.read_text())
    reaper.append(leaf)
    assert result.status == "ok", result
    assert not _alive(leaf)
    assert result.descendants_killed == 2


def test_python_fallback_kills_what_stayed_in_the_process_group(tmp_path, reaper):
    """The fallback has no subreaper: it finds descendants by process group (not setsid ones)."""
    pidfile = tmp_path / "child.pid"
    script = (f"sh -c \"trap '' TERM; echo \\$\\$ > {pidfile}; exec sleep 300\" & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; exit 0")
    result = spawn_measured(SpawnRequest(argv=["sh", "-c", script]), method="python")
    child = int(pidfile.read_text())
    reaper.append(child)
    assert result.status == "ok"
    assert _gone_within(child, 5)
    assert result.descendants_killed == 1


_HARNESS = textwrap.dedent("""
    import sys
    from benchlab.measure.spawn import SpawnRequest, spawn_measured
    spawn_measured(SpawnRequest(argv=sys.argv[1:]), method="helper")
""")


def test_after_kill_9_of_the_harness_no_descendant_survives(tmp_path, reaper):
    """kill -9 of the process running benchlab: the exec helper (PR_SET_PDEATHSIG) kills the
    target's group and, as subreaper, the setsid grandchild."""
    pidfile = tmp_path / "grandchild.pid"
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS,
                                *_escaping_target(pidfile, "exec sleep 300")])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the grandchild never started"
        assert harness.poll() is None, "the harness ended early"
        time.sleep(0.02)
    grandchild = int(pidfile.read_text())
    reaper.append(grandchild)
    helper_and_target = [int(p) for p in
                         Path(f"/proc/{harness.pid}/task/{harness.pid}/children").read_text().split()]
    assert helper_and_target, "the harness has no exec helper child"
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    assert _gone_within(grandchild, 10), "the setsid grandchild survived kill -9 of the harness"
    for pid in helper_and_target:
        assert _gone_within(pid, 10), f"process {pid} survived kill -9 of the harness"


def _cli(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "benchlab.cli.main", "run", "-q", "--db",
            str(tmp_path / "store.db"), *args]


def test_through_benchlab_run_with_and_without_timeout(tmp_path, reaper):
    """The whole path a user takes: `benchlab run` (with --timeout and without)."""
    import shlex

    # --timeout 3: the grandchild writes its pid file before the timeout, even under load
    for extra, then in (([], "exit 0"), (["--timeout", "3", "--ignore-failure"], "exec sleep 300")):
        pidfile = tmp_path / f"grandchild{len(extra)}.pid"
        command = shlex.join(_escaping_target(pidfile, then))
        done = subprocess.run(_cli(tmp_path, "-r", "1", *extra, "--", command),
                              capture_output=True, text=True, timeout=120)
        grandchild = int(pidfile.read_text())
        reaper.append(grandchild)
        assert not _alive(grandchild), (extra, done.stderr)
    # The count is stored with each run.
    import json
    import sqlite3

    with sqlite3.connect(tmp_path / "store.db") as conn:
        stored = [json.loads(row[0])["descendants_killed"]
                  for row in conn.execute("SELECT extra FROM runs WHERE warmup = 0 ORDER BY id")]
    # With --timeout the run's processes are killed as a group first; those are not counted.
    assert stored == [1, 1]


def test_after_kill_9_of_benchlab_run_no_descendant_survives(tmp_path, reaper):
    import shlex

    pidfile = tmp_path / "grandchild.pid"
    command = shlex.join(_escaping_target(pidfile, "exec sleep 300"))
    benchlab = subprocess.Popen(_cli(tmp_path, "-r", "1", "--", command),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the grandchild never started"
        assert benchlab.poll() is None, "benchlab ended early"
        time.sleep(0.02)
    grandchild = int(pidfile.read_text())
    reaper.append(grandchild)
    os.kill(benchlab.pid, signal.SIGKILL)
    benchlab.wait()
    assert _gone_within(grandchild, 10), "the setsid grandchild survived kill -9 of benchlab"


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a run cgroup needs root")
def test_python_fallback_in_a_run_cgroup_kills_a_setsid_grandchild(tmp_path, reaper):
    """Without the helper's subreaper, the run's cgroup is what finds an escaped descendant."""
    from benchlab.control.cgroups import RunCgroup

    pidfile = tmp_path / "grandchild.pid"
    with RunCgroup(session="desc-test") as group:
        result = spawn_measured(SpawnRequest(argv=_escaping_target(pidfile, "exit 0"),
                                             cgroup_procs=group.procs_paths), method="python")
        grandchild = int(pidfile.read_text())
        reaper.append(grandchild)
        assert result.status == "ok", result
        assert _gone_within(grandchild, 5)
        assert result.descendants_killed == 1
        assert group.pids() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="tracking cgroups need root")
def test_when_harness_and_helper_both_die_of_sigkill_the_next_sweep_kills_the_survivors(
        tmp_path, reaper):
    """The one case the subreaper cannot cover: nobody is left to kill the escaped grandchild.
    It was born in the helper's tracking cgroup, so the next start's sweep finds and kills it."""
    pidfile = tmp_path / "grandchild.pid"
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS,
                                *_escaping_target(pidfile, "exec sleep 300")])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the grandchild never started"
        time.sleep(0.02)
    grandchild = int(pidfile.read_text())
    reaper.append(grandchild)
    helper = int(Path(f"/proc/{harness.pid}/task/{harness.pid}/children").read_text().split()[0])
    target = int(Path(f"/proc/{helper}/task/{helper}/children").read_text().split()[0])
    reaper.append(target)
    tracked = Path(f"/proc/{grandchild}/cgroup").read_text()
    assert "/benchlab/track-" in tracked, tracked
    # Both at once: stop the harness so it cannot react to the helper's death in between.
    os.kill(harness.pid, signal.SIGSTOP)
    os.kill(helper, signal.SIGKILL)
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    # Nobody is left to kill them now; only a sweep can (any benchlab start runs one: with
    # tests or other users running concurrently, theirs may come first, which is as good).
    sweep = subprocess.run(
        [sys.executable, "-c", "from benchlab.control.cgroups import sweep_stale; "
                               "sweep_stale(observer=print)"],
        capture_output=True, text=True, timeout=60)
    assert sweep.returncode == 0, sweep.stderr
    assert _gone_within(grandchild, 10) and _gone_within(target, 10), sweep.stdout
    _, controller, relative = next(line for line in tracked.splitlines()
                                   if "/benchlab/track-" in line).split(":", 2)
    assert not Path(f"/sys/fs/cgroup/{controller}{relative}").exists()  # the leaf is removed
