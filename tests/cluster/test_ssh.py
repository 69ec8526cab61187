"""A cluster session over SSH: a private sshd on 127.0.0.1 (Debian's openssh-server, a key made
by the test, a free port) and benchlab's ``ssh:`` cluster (Dask's SSHCluster) pointed at it.

The scheduler and the worker are started through SSH on this same machine: a second machine is
what this test machine cannot have.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest

from benchlab.core.cluster.session import run_cluster_plan
from benchlab.store.db import Store
from tests.cluster.helpers import free_port, plan_of
from tests.conftest import assert_one_line_error, in_ci, require_tool

pytestmark = pytest.mark.slow

SSHD = "/usr/sbin/sshd"


@pytest.fixture
def sshd(tmp_path):
    """A private sshd on 127.0.0.1:<free port> accepting one generated key; yields (port, key)."""
    with _private_sshd(tmp_path) as started:
        yield started


@contextlib.contextmanager
def _private_sshd(tmp_path, extra_config: str = ""):
    """Start the private sshd (``extra_config``: more sshd_config lines); yield (port, key)."""
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
                      f"PasswordAuthentication no\nUsePAM no\nStrictModes no\n{extra_config}")
    log = open(tmp_path / "sshd.log", "wb")  # a file: an unread pipe could block sshd
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                            stderr=log)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, (tmp_path / "sshd.log").read_text()
            time.sleep(0.05)
        yield port, str(key)
    finally:
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
        (certs,) = glob.glob(f"/tmp/benchlab-ssh-{os.getpid()}_*")
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


def test_the_cli_through_the_users_ssh_config_and_a_killed_client_leaves_nothing_behind(
        sshd, db_path, tmp_path):
    """``--cluster ssh:ALIAS`` from the command line: the port, user, key and known host come
    from ``~/.ssh/config`` and ``~/.ssh/known_hosts`` (asyncssh reads them, as ``ssh`` does),
    which is how docs/cluster.md tells users to give them; without the config entry the alias
    does not resolve and the error is one line.

    Then ``kill -9`` of the client mid-session: the scheduler and worker it started through
    sshd end with their SSH channels, and the host's directory of the cluster's certificates
    goes with them, within seconds (their backstop, the scheduler's idle timeout, is an hour).
    ``--resume`` completes the session on the same host and keeps every run stored before.

    The client's environment quiets Dask's logs (``DASK_LOGGING__DISTRIBUTED=warning``, as a
    user may set, and as Dask's nanny writes into a process that ran a ``local:N`` cluster):
    the remote processes still print the addresses SSHCluster waits for."""
    from tests.conftest import assert_one_line_error, run_cli

    env = {**_ssh_home(sshd, tmp_path, alias=None), "DASK_LOGGING__DISTRIBUTED": "warning"}
    refused = run_cli("run", "--cluster", "ssh:benchlab-test-box", "--runs", "2", "true",
                      db=db_path, env=env, timeout=120)
    assert_one_line_error(refused, "benchlab-test-box")
    _ssh_home(sshd, tmp_path, alias="benchlab-test-box")
    remote, certs = _kill_mid_session(db_path, env, int((tmp_path / "sshd.pid").read_text()))
    _assert_ended(remote, certs)
    with Store.open(db_path, readonly=True) as store:
        (session,) = store.sessions()
        kept = {r["id"] for r in store.runs(session_id=session["id"], include_warmup=False)}
    resumed = run_cli("run", "--resume", session["uid"], db=db_path, env=env, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    with Store.open(db_path, readonly=True) as store:
        stored = store.get_session(session["uid"])
        runs = store.runs(session_id=session["id"], include_warmup=False)
    assert stored["status"] == "complete"
    assert stored["metadata"]["cluster"]["address"] == "ssh:benchlab-test-box"
    assert kept <= {r["id"] for r in runs}, "a run stored before the kill was lost"
    assert 3 <= len(kept) < 12, "the client was not killed mid-session"
    assert sorted(r["seq"] for r in runs) == sorted({r["seq"] for r in runs}), "a run twice"
    assert len(runs) == 12 and all(r["status"] == "ok" for r in runs)
    assert all(r["extra"]["worker_pid"] not in (os.getpid(), None) for r in runs)


def _ssh_home(sshd, tmp_path, alias: str | None) -> dict[str, str]:
    """``{"HOME": ...}`` of a user whose ``~/.ssh/known_hosts`` knows the test's sshd and whose
    ``~/.ssh/config`` names it ``alias`` (no config without one)."""
    port, key = sshd
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    host_key = (tmp_path / "host_ed25519.pub").read_text().split()
    (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    if alias:
        (home / ".ssh" / "config").write_text(
            f"Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
            f"  IdentityFile {key}\n")
    return {"HOME": str(home)}


def _kill_mid_session(db_path, env: dict[str, str], sshd_pid: int) -> tuple[set[int], str]:
    """Start 12 runs on ``ssh:benchlab-test-box`` through the CLI and SIGKILL the client once
    3 are stored; return the Python processes that were under sshd then (the scheduler, the
    nanny, its worker) and the host's certificate directory."""
    from tests.cluster.helpers import comm, descendants, stored_runs, wait_for
    from tests.conftest import BENCHLAB

    client = subprocess.Popen(
        [BENCHLAB, "run", "--db", str(db_path), "--cluster", "ssh:benchlab-test-box",
         "-r", "12", "-N", "sleep 0.2"], env={**os.environ, **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: client.poll() is not None or stored_runs(db_path) >= 3, 150,
                 "three runs on the ssh cluster")
        assert client.poll() is None, client.stderr.read().decode()
        remote = {p for p in descendants(sshd_pid) if comm(p).startswith("python")}
        (certs,) = glob.glob(f"/tmp/benchlab-ssh-{client.pid}_*")
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
        client.wait(10)
    assert len(remote) >= 2, remote
    return remote, certs


def _assert_ended(remote: set[int], certs: str) -> None:
    """Every process of ``remote`` ends within 60 s (those left are killed) and ``certs`` is
    removed."""
    from tests.cluster.helpers import wait_for

    try:
        wait_for(lambda: not any(os.path.exists(f"/proc/{p}") for p in remote), 60,
                 "the remote scheduler and worker to end")
    finally:
        for pid in remote:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not os.path.exists(certs), 10, f"the host's {certs} to be removed")


def test_a_hosts_certificate_directory_is_not_a_dead_processes_scratch(tmp_path):
    """A benchlab started on a host sweeps the scratch directories of its dead processes; the
    certificate directory of a client on another machine is named after the client's pid,
    which may be no process on the host, and must not be swept while its cluster runs."""
    from benchlab.core.cluster.ssh import remote_directory
    from benchlab.core.scratch import sweep_dead_scratch

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no process has now
    scratch = tmp_path / f"benchlab-cluster-p{gone.pid}-abc_123"
    certs = tmp_path / os.path.basename(remote_directory(str(scratch)))
    scratch.mkdir()
    certs.mkdir()
    assert sweep_dead_scratch(str(tmp_path)) == [str(scratch)]
    assert certs.is_dir()


#: The host's side of a Python that hangs before Dask prints its address: the remote scheduler
#: command (``... -m distributed.cli.dask_spec ...``) sleeps; every other command runs.
HANGING_PYTHON = """#!/bin/sh
case "$SSH_ORIGINAL_COMMAND" in
  *distributed.cli.dask_spec*) exec sleep 600 ;;
esac
exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
"""


def test_a_scheduler_that_never_starts_is_given_up_after_the_cluster_timeout(tmp_path, db_path):
    """A host whose remote scheduler never prints its address (Dask's SSHCluster waits for it
    for ever): after ``--cluster-timeout`` the command ends in one line naming the host, what
    did not answer and the command that checks it, exit 2; no session is stored, and neither
    the process on the host, the host's certificate directory nor the local scratch is left."""
    from tests.cluster.helpers import descendants, wait_for
    from tests.conftest import BENCHLAB, run_cli

    bad = run_cli("run", "--cluster", "ssh:benchlab-test-box", "--cluster-timeout", "soon",
                  "true", db=db_path)
    assert_one_line_error(bad, "--cluster-timeout")
    wrapper = tmp_path / "hanging-python"
    wrapper.write_text(HANGING_PYTHON)
    wrapper.chmod(0o755)
    with _private_sshd(tmp_path, f"ForceCommand {wrapper}\n") as started:
        sshd_pid = int((tmp_path / "sshd.pid").read_text())
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        env = {**os.environ, **_ssh_home(started, tmp_path, alias="benchlab-test-box"),
               "TMPDIR": str(scratch), "COLUMNS": "160"}
        client = subprocess.Popen(
            [BENCHLAB, "run", "--db", str(db_path), "--cluster", "ssh:benchlab-test-box",
             "--cluster-timeout", "3s", "-r", "2", "true"], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = client.communicate(timeout=120)
        result = subprocess.CompletedProcess(client.args, client.returncode, out, err)
        assert_one_line_error(result, "ssh:benchlab-test-box: the scheduler did not start "
                                      "within 3 s", "-c 'import distributed'` works")
        wait_for(lambda: not descendants(sshd_pid), 10, "the host's processes to end")
    assert not glob.glob(f"/tmp/benchlab-ssh-{client.pid}_*"), "the host's directory is left"
    assert not os.listdir(scratch), "the local scratch is left"
    if os.path.exists(db_path):
        with Store.open(db_path, readonly=True) as store:
            assert store.sessions() == []
