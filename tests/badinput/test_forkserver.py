"""The corpus's fork server (tests/badinput/forkserver.py): each forked child starts as a fresh
process started by ``Popen(..., start_new_session=True)`` would, and ends as the interpreter
ends one.

The server is the real one (it imports every benchlab command); in place of the console script
it runs a probe script that reports what the child sees, so the child's state is checked
directly rather than through benchlab's refusals (test_corpus.py compares those).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.badinput.forkserver import ForkServer, differs_at_start

PROBE = r'''
import json, os, random, subprocess, sys, tempfile, threading
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
mode = sys.argv[1]
if mode == "report":
    print(json.dumps({
        "cwd": os.getcwd(), "env": dict(os.environ), "tmp": tempfile.gettempdir(),
        "leader": os.getsid(0) == os.getpid(), "argv": sys.argv, "fds": fds,
        "random": random.random(), "threads": threading.active_count(), "name": __name__,
        "c_env": subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout}))
elif mode == "exit":
    sys.stdout.write("a\r\nb")
    sys.exit(int(sys.argv[2]))
elif mode == "raise":
    raise ValueError("probe")
elif mode == "sleep":
    import time
    time.sleep(60)
'''


@pytest.fixture(scope="module")
def probe_server(tmp_path_factory):
    probe = tmp_path_factory.mktemp("forkserver") / "probe.py"
    probe.write_text(PROBE)
    server = ForkServer(str(probe))
    yield server
    server.close()


def _env(tmp: str, **more: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "TMPDIR": tmp, **more}


def test_a_child_sees_its_own_directory_environment_and_session(probe_server, tmp_path):
    reports = []
    for i in range(2):
        cwd = tmp_path / f"case{i}"
        cwd.mkdir()
        env = _env(str(cwd), CASE=str(i))
        proc = probe_server.run(["report", str(i)], str(cwd), env, 30)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert report["cwd"] == str(cwd)
        assert report["env"] == env, "os.environ is exactly the case's"
        c_env = dict(line.split("=", 1) for line in report["c_env"].splitlines())
        assert c_env == env, "the C environment (what a spawned program gets) is the case's"
        assert report["tmp"] == str(cwd), "tempfile's cached $TMPDIR is not the server's"
        assert report["leader"], "each case leads its own session (start_new_session)"
        assert report["argv"] == [probe_server.benchlab, "report", str(i)]
        assert report["fds"] == [0, 1, 2, 3], "only stdio (and the listing's own fd) open"
        assert report["threads"] == 1 and report["name"] == "__main__"
        reports.append(report)
    assert reports[0]["random"] != reports[1]["random"], "random re-seeded in every child"


def test_a_child_ends_as_the_interpreter_ends_a_process(probe_server, tmp_path):
    proc = probe_server.run(["exit", "3"], str(tmp_path), _env(str(tmp_path)), 30)
    assert (proc.returncode, proc.stdout) == (3, "a\nb"), "status, universal newlines"
    proc = probe_server.run(["raise"], str(tmp_path), _env(str(tmp_path)), 30)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "ValueError: probe" in proc.stderr
    proc = probe_server.run(["sleep"], str(tmp_path), _env(str(tmp_path)), 0.5)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stderr.endswith("still running after 0 s: killed")
    # A real process of the same script gives the same status and output.
    real = subprocess.run([sys.executable, probe_server.benchlab, "exit", "3"], text=True,
                          capture_output=True)
    assert (real.returncode, real.stdout) == (3, "a\nb")


def test_an_environment_read_at_start_sends_a_case_to_the_console_script(probe_server):
    server_env = {"PATH": "/bin", "LANG": "C.UTF-8", "COLUMNS": "80"}
    reads = ["BENCHLAB_HELPER_FORK"]
    assert differs_at_start(dict(server_env, COLUMNS="160", TMPDIR="/x"), server_env, reads) == []
    assert differs_at_start(dict(server_env, BENCHLAB_HELPER_FORK="1"), server_env, reads) == [
        "BENCHLAB_HELPER_FORK"]
    assert differs_at_start(dict(server_env, LANG="C", PYTHONHASHSEED="0"), server_env,
                            reads) == ["LANG", "PYTHONHASHSEED"]
    # The real server's imports read the exec helper's fork switch ($BENCHLAB_HELPER_FORK).
    assert "BENCHLAB_HELPER_FORK" in probe_server.import_reads
