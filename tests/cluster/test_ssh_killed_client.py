"""A client killed with SIGKILL mid-session on an ``ssh:`` cluster it started: the scheduler and
worker it started through sshd end by themselves (the scheduler's idle timeout, the worker's lost
scheduler), so no process is left on the hosts."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.cluster.helpers import comm, descendants
from tests.cluster.test_ssh import sshd  # noqa: F401  (the fixture)
from tests.conftest import BENCHLAB

pytestmark = pytest.mark.slow


def _remote_pythons(sshd_pid: int) -> set[int]:
    return {p for p in descendants(sshd_pid) if comm(p).startswith("python")}


def test_a_killed_client_leaves_no_scheduler_or_worker_on_the_hosts(sshd, db_path, tmp_path):
    port, key = sshd
    sshd_pid = int((tmp_path / "sshd.pid").read_text())
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    host_key = (tmp_path / "host_ed25519.pub").read_text().split()
    (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    (home / ".ssh" / "config").write_text(
        f"Host box\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {key}\n")
    env = {**os.environ, "HOME": str(home), "BENCHLAB_CLUSTER_IDLE_TIMEOUT": "20"}
    # (not shorter: an idle scheduler closes before a worker slow to start on a busy machine)
    client = subprocess.Popen(
        [BENCHLAB, "run", "--db", str(db_path), "--cluster", "ssh:box",
         "-r", "500", "-N", "sleep 0.1"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    remote: set[int] = set()
    while len(remote) < 2 and time.monotonic() < deadline:
        assert client.poll() is None, client.stderr.read().decode()
        remote = _remote_pythons(sshd_pid)
        time.sleep(0.2)
    assert len(remote) >= 2, "the cluster did not start through sshd"
    time.sleep(3)  # mid-session: runs are being dispatched
    os.killpg(client.pid, signal.SIGKILL)
    client.wait(10)
    deadline = time.monotonic() + 90
    while any(os.path.exists(f"/proc/{p}") for p in remote) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [p for p in remote if os.path.exists(f"/proc/{p}")]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, "a remote scheduler or worker outlived its killed client"
