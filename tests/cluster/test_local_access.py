"""``--cluster local:N`` as another user of the machine sees it: nothing to connect to.

Real: ``benchlab run --cluster local:2`` through the console script, its LocalCluster of worker
processes, the sockets the kernel lists for the whole process tree, and an attacker process
running as uid 65534 (``setpriv``) that tries a plain Dask connection on every one of them and,
on a scheduler, ``submit(os.getuid)``. Then SIGTERM: exit 143, no Dask log lines, and nothing
left in the client's TMPDIR. Then SIGKILL: the workers exit with their parent and the next
benchlab start removes what was left.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.helpers import descendants, free_port, stored_runs, wait_for
from tests.conftest import BENCHLAB, assert_one_line_error, require_tool, run_cli

pytestmark = [pytest.mark.slow]

ATTACKER = """
import asyncio, os, sys
from distributed import Client
from distributed.comm import connect

async def probe(port):
    address = f"tcp://127.0.0.1:{port}"
    try:
        comm = await asyncio.wait_for(connect(address, timeout=4), 6)
        await comm.write({"op": "identity", "reply": True})
        kind = (await asyncio.wait_for(comm.read(), 4) or {}).get("type")
    except Exception as exc:
        return f"{port} refused {type(exc).__name__}"
    if kind == "Scheduler":
        with Client(address, timeout="5s") as client:
            return f"{port} RAN as uid {client.submit(os.getuid).result(timeout=10)}"
    return f"{port} OPEN {kind}"

async def main():
    for line in await asyncio.gather(*(probe(int(p)) for p in sys.argv[1:])):
        print(line, flush=True)

print("attacker uid", os.getuid(), flush=True)
asyncio.run(main())
"""


def listening(pids: list[int]) -> list[tuple[int, str, int]]:
    """(pid, address, port) of every TCP socket in state LISTEN held by one of ``pids``, from
    /proc/net/tcp{,6} and each process's file descriptors."""
    by_inode = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A":
                continue
            hex_ip, hex_port = fields[1].split(":")
            if len(hex_ip) == 8:
                ip = socket.inet_ntop(socket.AF_INET, bytes.fromhex(hex_ip)[::-1])
            else:
                words = bytes.fromhex(hex_ip)
                ip = socket.inet_ntop(socket.AF_INET6,
                                      b"".join(words[i:i + 4][::-1] for i in range(0, 16, 4)))
            by_inode[fields[9]] = (ip, int(hex_port, 16))
    found = []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in by_inode:
                found.append((pid, *by_inode[target[8:-1]]))
    return found


def _tls_only(port: int) -> str:
    """What a client without a certificate gets from 127.0.0.1:``port`` over TLS 1.3: 'client
    certificate required' (Dask's comm: the alert, or the connection closed without it) or the
    HTTP status line (Dask's HTTP server); the server's certificate must be issued by a
    benchlab CA. Fails when the port speaks plain."""
    from cryptography import x509

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            ctx.wrap_socket(raw) as tls:
        cert = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        assert "benchlab team CA" in cert.issuer.rfc4514_string(), cert.issuer
        try:
            tls.sendall(b"GET /health HTTP/1.0\r\n\r\n")
            reply = tls.recv(64)
        except ssl.SSLEOFError:  # the alert lost in the close
            return "client certificate required"
        except ssl.SSLError as exc:
            assert "CERTIFICATE_REQUIRED" in str(exc), exc
            return "client certificate required"
        return reply.decode(errors="replace").split("\r\n")[0] or "client certificate required"


def _start(db_path, tmpdir: Path) -> subprocess.Popen:
    """``benchlab run --cluster local:2`` of many short naps, returned once a run is stored
    (every worker has joined by then)."""
    client = subprocess.Popen(
        [BENCHLAB, "run", "--cluster", "local:2", "-r", "300", "-w", "0", "sleep 0.2", "--db",
         str(db_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TMPDIR=str(tmpdir), COLUMNS="160"))
    wait_for(lambda: stored_runs(db_path) >= 1 or client.poll() is not None, 120,
             "the first run stored")
    assert client.poll() is None, client.communicate()
    return client


def test_no_other_user_reaches_a_local_cluster_and_sigterm_leaves_nothing(db_path, tmp_path):
    require_tool("setpriv")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    client = _start(db_path, tmpdir)
    try:
        tree = [client.pid, *descendants(client.pid)]
        sockets = listening(tree)
        # the scheduler, two nannies, two workers, and the HTTP servers of the scheduler and
        # of each worker
        assert len(sockets) >= 7, sockets
        assert {ip for _, ip, _ in sockets} == {"127.0.0.1"}, sockets
        answers = {port: _tls_only(port) for _, _, port in sockets}
        assert set(answers.values()) <= {"client certificate required", "HTTP/1.1 404 Not Found"
                                         }, answers
        attack = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
             "-c", ATTACKER, *(str(port) for _, _, port in sockets)],
            capture_output=True, text=True, timeout=120, cwd="/")
        assert "attacker uid 65534" in attack.stdout, attack.stderr
        lines = attack.stdout.splitlines()[1:]
        assert len(lines) == len(sockets), attack.stdout
        assert all(" refused " in line for line in lines), attack.stdout
        client.send_signal(signal.SIGTERM)
        out, err = client.communicate(timeout=90)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(30)
    assert client.returncode == 128 + signal.SIGTERM, err
    assert "--resume" in err, err
    assert not [line for line in err.splitlines() if "distributed." in line or " - INFO - " in
                line], err
    # the certificates, Dask's scratch space and the workers' directories were removed
    assert list(tmpdir.iterdir()) == []


def test_sigkill_workers_follow_and_the_next_start_sweeps(db_path, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    client = _start(db_path, tmpdir)
    workers = descendants(client.pid)
    client.kill()
    client.wait(30)
    # Dask's worker processes exit as their parent's end closes their pipe
    wait_for(lambda: not [pid for pid in workers if os.path.exists(f"/proc/{pid}")], 30,
             "the worker processes to exit")
    left = [p.name for p in tmpdir.iterdir()]
    assert any(name.startswith(f"benchlab-cluster-p{client.pid}-") for name in left), left
    assert not any(name.startswith("dask") for name in left), left
    again = subprocess.run([BENCHLAB, "run", "-q", "-r", "1", "-w", "0", "true", "--db",
                            str(tmp_path / "other.db")], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, TMPDIR=str(tmpdir)))
    assert again.returncode == 0, again.stderr
    assert list(tmpdir.iterdir()) == []


LEVELS = """
import logging
from benchlab.core.cluster.address import open_cluster, parse_cluster

def level():
    return logging.getLogger("distributed.worker").getEffectiveLevel()

def environ():
    import os
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "MALLOC_TRIM_THRESHOLD_", "PYTHONHASHSEED")
    return " ".join(f"{name}={os.environ.get(name)}" for name in names)

if __name__ == "__main__":
    with open_cluster(parse_cluster("local:1")) as client:
        print("environ", *client.run(environ).values())
        print("worker", *client.run(level).values())
        print("client", level())
    print("closed", level())
"""


def test_local_workers_log_nothing_below_warning_and_keep_the_clients_environment(tmp_path):
    """A Dask INFO line reached the terminal after a cluster's SIGTERM: the worker processes
    log at INFO unless told before they import distributed, and the client's own silencing
    was undone by a later first import of distributed.

    The programs a worker measures inherit its environment, which Dask's nanny had given one
    thread per numeric library (OMP_NUM_THREADS=1...), its malloc trimming and a fixed hash
    seed: a client without them has workers without them (PYTHONHASHSEED=random: Python's
    default)."""
    script = tmp_path / "levels.py"
    script.write_text(LEVELS)
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "MALLOC_TRIM_THRESHOLD_", "PYTHONHASHSEED")
    # this process's own nanny (an earlier test's LocalCluster) may have written them here
    clean = {k: v for k, v in os.environ.items() if k not in names}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=clean)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[1:] == [f"{name}=None" for name in names[:-1]] + [
        "PYTHONHASHSEED=random"], lines[0]
    levels = dict(line.split() for line in lines[1:])
    assert {k: int(v) >= 30 for k, v in levels.items()} == {"worker": True, "client": True,
                                                            "closed": True}, levels
    assert "distributed." not in proc.stderr, proc.stderr


DASHBOARD = """
import os, sys, urllib.request
sys.path.insert(0, os.getcwd())
from benchlab.core.cluster.address import open_cluster, parse_cluster
from benchlab.core.cluster.local import set_local_options
from tests.cluster.helpers import descendants
from tests.cluster.test_local_access import listening

if __name__ == "__main__":
    said = []
    set_local_options(dashboard=True, announce=said.append)
    with open_cluster(parse_cluster("local:1")) as client:
        link = said[0].split(": ", 1)[1].split()[0]
        with urllib.request.urlopen(link, timeout=30) as reply:
            print("status", reply.status, link)
        pids = [os.getpid(), *descendants(os.getpid())]
        print("addresses", *sorted({ip for _, ip, _ in listening(pids)}))
"""


def test_the_dashboard_only_on_request_and_on_loopback(tmp_path):
    script = tmp_path / "dashboard.py"
    script.write_text(DASHBOARD)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["status"].startswith("200 http://127.0.0.1:"), proc.stdout
    assert lines["addresses"] == "127.0.0.1", proc.stdout
    # a team's scheduler serves its own dashboard, or none: one line before connecting
    refused = run_cli("run", "--cluster", f"tcp://127.0.0.1:{free_port()}", "--dashboard", "-r",
                      "1", "true", db=tmp_path / "d.db")
    assert_one_line_error(refused, "--dashboard")
