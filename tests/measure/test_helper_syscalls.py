"""The exec helper's system calls per run (the per-run cost beside hyperfine's).

A run of ``/bin/true`` redirecting nothing costs the helper: one read of the request, the
signal mask blocked and restored around clone, clone, wait4, one wait4 that finds no orphan,
and the reply's write -- 7 calls. Before, it also opened and closed /dev/null three times, made
a pipe for the child's failure, set the child's process group a second time, and read
/proc/self/task/<pid>/children (24 calls). Counted with strace following a process that runs
the real helper from its start (skipped without strace or ptrace); failures the child reports (exec, chdir) still arrive, with
clone(CLONE_VM|CLONE_VFORK) (shared memory) and with fork() (a pipe).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys

import pytest

from benchlab.measure import spawn as spawn_module
from benchlab.measure.spawn import SpawnRequest, spawn_measured

RUNS = 40


#: Runs ``argv[1]`` runs of /bin/true through this interpreter's exec helper.
RUNNER = """
import sys
from benchlab.measure.spawn import SpawnRequest, spawn_measured
for _ in range(int(sys.argv[1])):
    assert spawn_measured(SpawnRequest(argv=["/bin/true"])).status == "ok"
"""


def _helper_calls(runs: int, tmp_path) -> collections.Counter:
    """System calls of the exec helper (not of its children) in a process that runs ``runs``
    runs of /bin/true, by name: traced from the helper's start (``strace -ff``: one file a
    process), so none can be missed."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    out = tmp_path / f"runs-{runs}"
    out.mkdir()
    proc = subprocess.run(["strace", "-qq", "-f", "-ff", "-o", str(out / "trace"),
                           sys.executable, "-c", RUNNER, str(runs)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr[-200:]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for path in out.iterdir():
        text = path.read_text(errors="replace")
        if re.search(r'^execve\("[^"]*exec_helper', text, flags=re.M):
            return collections.Counter(re.findall(r"^([a-z_0-9]+)\(", text, flags=re.M))
    raise AssertionError("no exec helper was traced")


def test_a_run_redirecting_nothing_costs_the_helper_seven_calls(tmp_path):
    one, many = _helper_calls(1, tmp_path), _helper_calls(1 + RUNS, tmp_path)
    per_run = {name: (many[name] - one[name]) / RUNS for name in many | one
               if many[name] != one[name]}
    assert per_run == {"read": 1, "rt_sigprocmask": 2, "clone": 1, "wait4": 2, "write": 1}


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
