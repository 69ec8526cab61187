"""The exec helper's system calls per run (issue 19 item 4: the per-run cost beside hyperfine's).

A run of ``/bin/true`` redirecting nothing costs the helper: one read of the request, the
signal mask blocked and restored around clone, clone, wait4, one wait4 that finds no orphan,
and the reply's write -- 7 calls. Before, it also opened and closed /dev/null three times, made
a pipe for the child's failure, set the child's process group a second time, and read
/proc/self/task/<pid>/children (24 calls). Counted with strace attached to the real helper
(skipped without strace or ptrace); failures the child reports (exec, chdir) still arrive, with
clone(CLONE_VM|CLONE_VFORK) (shared memory) and with fork() (a pipe).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from benchlab.measure import spawn as spawn_module
from benchlab.measure.spawn import SpawnRequest, helper_client, spawn_measured

RUNS = 40


def _tracer_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


def _helper_calls(runs: int, tmp_path) -> collections.Counter:
    """System calls of this thread's helper (not of its children) over ``runs`` runs of
    /bin/true, by name (the request read it is blocked in as strace attaches or detaches may
    count or not)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    server = helper_client._server()
    assert spawn_measured(SpawnRequest(argv=["/bin/true"])).status == "ok"  # started, tracked
    out = tmp_path / "strace.txt"
    tracer = subprocess.Popen(["strace", "-qq", "-p", str(server.pid), "-o", str(out)],
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while _tracer_of(server.pid) == 0:
            if tracer.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"strace cannot attach here: {tracer.stderr.read().decode()[-200:]}")
            time.sleep(0.01)
        for _ in range(runs):
            assert spawn_measured(SpawnRequest(argv=["/bin/true"])).status == "ok"
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(10)
    names = re.findall(r"^([a-z_0-9]+)\(", out.read_text(), flags=re.M)
    return collections.Counter(names)


def test_a_run_redirecting_nothing_costs_the_helper_seven_calls(tmp_path):
    calls = _helper_calls(RUNS, tmp_path)
    expected = {"read": 1, "rt_sigprocmask": 2, "clone": 1, "wait4": 2, "write": 1}
    assert set(calls) == set(expected), calls
    for name, per_run in expected.items():  # +-2: the reads strace attached and detached in
        assert abs(calls[name] - per_run * RUNS) <= 2, (name, calls)


@pytest.mark.parametrize("helper_fork", [False, True], ids=["clone-vfork", "fork"])
def test_the_child_still_reports_its_failures(monkeypatch, tmp_path, helper_fork):
    """The child's failure travels in shared memory (clone) or a pipe (fork); a run after a
    failed one is not mistaken for one (the record is cleared per run)."""
    monkeypatch.setattr(spawn_module.helper_client, "helper_uses_fork", helper_fork)
    missing = spawn_measured(SpawnRequest(argv=[str(tmp_path / "no-such-program")]))
    assert missing.status == "error" and missing.error.startswith("exec failed: No such file")
    no_dir = spawn_measured(SpawnRequest(argv=["/bin/true"], cwd=str(tmp_path / "gone")))
    assert no_dir.status == "error" and no_dir.error.startswith("cannot change directory")
    after = spawn_measured(SpawnRequest(argv=["sh", "-c", "exit 3"]))
    assert (after.status, after.exit_code, after.error) == ("failed", 3, None)


def test_redirections_after_runs_to_dev_null(tmp_path):
    """The helper's kept /dev/null serves the default streams; a run's own files are still
    opened (and truncated) per run, and a run reading /dev/null gets end of file."""
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("hello\n")
    out.write_text("old contents, longer than the new\n")
    assert spawn_measured(SpawnRequest(argv=["cat"])).status == "ok"  # stdin: /dev/null, EOF
    m = spawn_measured(SpawnRequest(argv=["cat"], stdin_path=str(source), stdout_path=str(out)))
    assert m.status == "ok" and out.read_text() == "hello\n"
    m = spawn_measured(SpawnRequest(argv=["sh", "-c", "cat; echo more >&2"],
                                    stderr_path=str(out)))
    assert m.status == "ok" and out.read_text() == "more\n"
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
