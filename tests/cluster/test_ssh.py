"""A cluster session over SSH: a private sshd on 127.0.0.1 (Debian's openssh-server, a key made
by the test, a free port) and benchlab's ``ssh:`` cluster (Dask's SSHCluster) pointed at it.

The scheduler and the worker are started through SSH on this same machine: a second machine is
what this test machine cannot have.
"""

from __future__ import annotations

import glob
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

from benchlab.core.cluster.session import run_cluster_plan
from benchlab.store.db import Store
from tests.cluster.helpers import free_port, plan_of
from tests.conftest import in_ci, require_tool

pytestmark = pytest.mark.slow

SSHD = "/usr/sbin/sshd"


@pytest.fixture
def sshd(tmp_path):
    """A private sshd on 127.0.0.1:<free port> accepting one generated key; yields (port, key)."""
    require_tool("sshd", SSHD)
    require_tool("ssh-keygen")
    try:
        import asyncssh  # noqa: F401  (Dask's SSHCluster transport; the [cluster] extra has it)
    except ImportError:
        if in_ci():
            pytest.fail("CI=true: asyncssh is not installed (setup installs benchlab[all])")
        pytest.skip("asyncssh (Dask's SSHCluster transport) is not installed; uv pip install "
                    "asyncssh")
    key, host_key = tmp_path / "id_ed25519", tmp_path / "host_ed25519"
    for path in (key, host_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                       check=True)
    (tmp_path / "authorized_keys").write_text((tmp_path / "id_ed25519.pub").read_text())
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege-separation directory
    port = free_port()
    config = tmp_path / "sshd_config"
    config.write_text(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
                      f"AuthorizedKeysFile {tmp_path}/authorized_keys\n"
                      f"PidFile {tmp_path}/sshd.pid\nPermitRootLogin prohibit-password\n"
                      f"PasswordAuthentication no\nUsePAM no\nStrictModes no\n")
    log = open(tmp_path / "sshd.log", "wb")  # a file: an unread pipe could block sshd
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                            stderr=log)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, (tmp_path / "sshd.log").read_text()
        time.sleep(0.05)
    yield port, str(key)
    proc.terminate()
    proc.wait(10)
    log.close()


def test_runs_over_an_ssh_cluster(sshd, db_path):
    port, key = sshd
    store = Store.open(db_path)
    result = run_cluster_plan(
        store, plan_of("true", runs=3, warmup=1), "ssh:127.0.0.1",
        connect_options={"port": port, "client_keys": [key], "known_hosts": None})
    assert result.status == "complete"
    runs = store.runs(session_id=result.session.id)
    assert len(runs) == 4 and all(r["status"] == "ok" for r in runs)
    session = store.get_session(result.session.uid)
    machines = session["metadata"]["cluster"]["machines"]
    assert len(machines) == 1
    assert {r["extra"]["machine"] for r in runs} == set(machines)
    # the worker was a process started through sshd, not one of this test's children
    pids = {r["extra"]["worker_pid"] for r in runs}
    assert len(pids) == 1
    pid = pids.pop()
    assert pid != os.getpid()
    assert session["metadata"]["cluster"]["address"] == "ssh:127.0.0.1"
    store.close()


def test_one_ssh_cluster_serves_several_sessions_and_is_stopped_after(sshd, db_path, tmp_path):
    """What a study does with ``ssh:``: one SSHCluster opened once serves two sessions (the same
    remote worker process runs both), and closing it stops the scheduler and worker that were
    started through sshd."""
    from benchlab.core.cluster.session import open_shared_cluster
    from tests.cluster.helpers import comm, descendants

    port, key = sshd
    sshd_pid = int((tmp_path / "sshd.pid").read_text())
    options = {"port": port, "client_keys": [key], "known_hosts": None}
    store = Store.open(db_path)
    pids = []
    with open_shared_cluster("ssh:127.0.0.1", connect_options=options) as shared:
        for _ in range(2):
            result = run_cluster_plan(store, plan_of("true", runs=2), "ssh:127.0.0.1",
                                      shared=shared)
            assert result.status == "complete"
            pids.append({r["extra"]["worker_pid"] for r in
                         store.runs(session_id=result.session.id)})
        # the scheduler, the nanny and the worker: Python processes under sshd
        remote = [p for p in descendants(sshd_pid) if comm(p).startswith("python")]
        assert pids[0] <= set(remote), "the worker was not a process started through sshd"
        assert len(remote) >= 2, remote
        _nobody_else_connects(shared.client)
        # the hosts' copy of the cluster's certificates: a directory only this user opens
        (certs,) = glob.glob(f"/tmp/benchlab-cluster-p{os.getpid()}-*-ssh")
        assert stat.S_IMODE(os.stat(certs).st_mode) == 0o700
        assert "client-key.pem" not in os.listdir(certs)
    assert not os.path.exists(certs), "the hosts' certificates were left"
    assert pids[0] == pids[1] and len(pids[0]) == 1, pids
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{p}") for p in remote) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{p}") for p in remote), "a remote scheduler or worker is left"
    store.close()


def _nobody_else_connects(client) -> None:
    """Every address of the cluster (scheduler, workers) is TLS, and a plain Dask connection
    to each, from another user (uid 65534), is refused."""
    from tests.cluster.test_local_access import ATTACKER
    from tests.conftest import require_tool

    require_tool("setpriv")
    info = client.scheduler_info()
    addresses = [info["address"], *info["workers"]]
    assert all(a.startswith("tls://") for a in addresses), addresses
    attack = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
         ATTACKER, *(a.rsplit(":", 1)[1] for a in addresses)],
        capture_output=True, text=True, timeout=120, cwd="/")
    lines = attack.stdout.splitlines()
    assert lines[0] == "attacker uid 65534" and len(lines) == 1 + len(addresses), attack
    assert all(" refused " in line for line in lines[1:]), attack.stdout


def test_the_cli_reaches_an_ssh_host_through_the_users_ssh_config(sshd, db_path, tmp_path):
    """``--cluster ssh:ALIAS`` from the command line: the port, user, key and known host come
    from ``~/.ssh/config`` and ``~/.ssh/known_hosts`` (asyncssh reads them, as ``ssh`` does),
    which is how docs/cluster.md tells users to give them. Without the config entry the alias
    does not resolve and the error is one line."""
    from tests.conftest import assert_one_line_error, run_cli

    port, key = sshd
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    host_key = (tmp_path / "host_ed25519.pub").read_text().split()
    (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    env = {"HOME": str(home)}
    refused = run_cli("run", "--cluster", "ssh:benchlab-test-box", "--runs", "2", "true",
                      db=db_path, env=env, timeout=120)
    assert_one_line_error(refused, "benchlab-test-box")
    (home / ".ssh" / "config").write_text(
        f"Host benchlab-test-box\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
        f"  IdentityFile {key}\n")
    done = run_cli("run", "--cluster", "ssh:benchlab-test-box", "--runs", "2", "-N", "true",
                   db=db_path, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    store = Store.open(db_path)
    sess = store.sessions()[0]
    runs = store.runs(session_id=sess["id"], include_warmup=False)
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    assert store.get_session(sess["uid"])["metadata"]["cluster"]["address"] == \
        "ssh:benchlab-test-box"
    assert all(r["extra"]["worker_pid"] != os.getpid() for r in runs)
    store.close()
