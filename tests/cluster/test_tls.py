"""A team's cluster over TLS with mutual authentication.

A real ``dask scheduler`` and ``dask worker`` (the dask CLIs, as a team starts them) with
certificates made by ``benchlab cluster certs``; ``benchlab run --cluster tls://`` end to end;
a client without the team's certificate is refused; ``tcp://`` to another machine is refused
without ``--insecure``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

from benchlab.store.db import Store
from tests.cluster.helpers import free_port, start_module, stop_group, wait_for
from tests.conftest import assert_one_line_error, run_cli


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls") / "team"
    proc = run_cli("cluster", "certs", str(d), "--hosts", "127.0.0.1,localhost")
    assert proc.returncode == 0, proc.stderr
    return d


@pytest.fixture(scope="module")
def tls_cluster(certs):
    """A TLS scheduler on 127.0.0.1 and one TLS worker with one benchlab slot."""
    port = free_port()
    tls = lambda role: ["--tls-ca-file", str(certs / "ca.pem"),  # noqa: E731
                        "--tls-cert", str(certs / f"{role}.pem"),
                        "--tls-key", str(certs / f"{role}-key.pem")]
    scheduler = start_module("distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", str(port), "--no-dashboard", "--protocol", "tls",
                             *tls("scheduler"))
    worker = start_module("distributed.cli.dask_worker", f"tls://127.0.0.1:{port}",
                          "--nthreads", "1", "--resources", "benchlab-slot=1", "--no-dashboard",
                          "--name", "w", *tls("worker"))
    address = f"tls://127.0.0.1:{port}"
    try:
        def joined():
            from distributed import Client

            from benchlab.core.cluster.tls import client_security, tls_from_directory

            try:
                with Client(address, timeout="3s",
                            security=client_security(tls_from_directory(certs, "dir"))) as c:
                    return len(c.scheduler_info()["workers"]) >= 1
            except Exception:
                return False

        wait_for(joined, 60, "the TLS worker to join")
        yield address
    finally:
        stop_group(worker)
        stop_group(scheduler)


def test_certs_keys_are_private_and_a_second_ca_is_refused(certs):
    for name in ("ca-key.pem", "scheduler-key.pem", "worker-key.pem", "client-key.pem"):
        assert stat.S_IMODE(os.stat(certs / name).st_mode) == 0o600, name
    again = run_cli("cluster", "certs", str(certs))
    assert_one_line_error(again, "exists")


def test_run_over_tls_end_to_end(tls_cluster, certs, tmp_path):
    db = tmp_path / "t.db"
    proc = run_cli("run", "--cluster", tls_cluster, "--tls-dir", str(certs), "-r", "3", "-w", "0",
                   "true", db=db, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with Store.open(db, readonly=True) as store:
        session = store.sessions()[0]
        runs = store.runs(session_id=session["id"], include_warmup=False)
        assert len(runs) == 3 and all(r["status"] == "ok" for r in runs)
        assert all(r["extra"]["machine"] == "127.0.0.1/w" for r in runs)


def test_per_person_client_certificate_and_env_variable(tls_cluster, certs, tmp_path):
    added = run_cli("cluster", "certs", str(certs), "--client", "alice")
    assert added.returncode == 0, added.stderr
    proc = run_cli("run", "--cluster", tls_cluster, "-r", "2", "-w", "0", "true",
                   db=tmp_path / "a.db", env={"BENCHLAB_TLS_DIR": str(certs / "alice")})
    assert proc.returncode == 0, proc.stderr


def test_client_with_a_foreign_certificate_is_refused(tls_cluster, tmp_path):
    """A certificate from another CA: the scheduler refuses the handshake; one line, quickly,
    and no Dask traceback at exit."""
    other = tmp_path / "other"
    assert run_cli("cluster", "certs", str(other)).returncode == 0
    t0 = time.monotonic()
    proc = run_cli("run", "--cluster", tls_cluster, "--tls-dir", str(other), "-r", "2", "true",
                   db=tmp_path / "x.db", timeout=90)
    assert_one_line_error(proc, "cannot reach the cluster")
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "x.db").exists() or _sessions(tmp_path / "x.db") == 0


def test_plain_dask_client_without_certificate_cannot_run_code(tls_cluster):
    """What the audit did with the open scheduler (``Client.run``): without a certificate the
    connection itself fails."""
    code = ("import sys\nfrom distributed import Client\n"
            f"try:\n    c = Client({tls_cluster.replace('tls://', 'tcp://')!r}, timeout='3s')\n"
            "except Exception:\n    sys.exit(7)\nprint(c.run(lambda: 1))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 7, proc.stdout


def _sessions(db) -> int:
    with Store.open(db, readonly=True) as store:
        return len(store.sessions())


def test_tls_without_certificates_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHLAB_TLS", "DASK_"))}
    proc = subprocess.run([sys.executable, "-m", "benchlab.cli.main", "run", "--cluster",
                           f"tls://127.0.0.1:{free_port()}", "true", "--db",
                           str(tmp_path / "n.db")], capture_output=True, text=True, timeout=60,
                          env=env)
    assert_one_line_error(proc, "no TLS certificate configured")


@pytest.mark.parametrize("address", ["tcp://10.1.2.3:8786", "tcp://lab-scheduler:8786",
                                     "tcp://0.0.0.0:8786"])
def test_plain_tcp_to_another_machine_needs_insecure(address, tmp_path):
    proc = run_cli("run", "--cluster", address, "true", db=tmp_path / "n.db")
    assert_one_line_error(proc, "--insecure")


def test_insecure_lets_plain_tcp_through_to_the_connection(tmp_path):
    """With --insecure the address is accepted and the connection is tried: a listener that
    closes every connection at once, reached as ``tcp://0.0.0.0:PORT`` (not a loopback name:
    refused without --insecure, as the test above checks), sees the client connect, and the
    error is about reaching it.
    (A TEST-NET address took Dask's whole 10 s connect timeout to say the same.)"""
    import socket
    import threading

    with socket.create_server(("127.0.0.1", 0)) as server:
        accepted = []

        def close_each():
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                accepted.append(True)
                conn.close()

        threading.Thread(target=close_each, daemon=True).start()
        address = f"tcp://0.0.0.0:{server.getsockname()[1]}"
        proc = run_cli("run", "--cluster", address, "--insecure", "true", db=tmp_path / "n.db",
                       timeout=90)
        assert_one_line_error(proc, "cannot reach the cluster")
        assert accepted, "--insecure did not try the connection"


def test_client_certificate_from_dasks_own_configuration(tls_cluster, certs, tmp_path):
    env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(certs / "ca.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(certs / "client.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(certs / "client-key.pem")}
    proc = run_cli("run", "--cluster", tls_cluster, "-r", "2", "-w", "0", "true",
                   db=tmp_path / "d.db", env=env)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl")
def test_the_documented_openssl_recipe_makes_working_certificates(tmp_path):
    """docs/cluster.md's openssl recipe, run verbatim: a TLS scheduler and a client with its
    files connect (mutual authentication), and the keys are 0600."""
    import asyncio
    import re
    from pathlib import Path

    from benchlab.core.cluster.tls import ClientTLS, client_security

    doc = (Path(__file__).resolve().parents[2] / "docs" / "cluster.md").read_text()
    recipe = next(b for b in re.findall(r"```sh\n(.*?)```", doc, re.S) if "openssl req" in b)
    made = subprocess.run(["bash", "-e", "-c", recipe], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "client-key.pem").st_mode) == 0o600

    from distributed import Client, Scheduler
    from distributed.security import Security

    server = Security(tls_ca_file=str(tmp_path / "ca.pem"),
                      tls_scheduler_cert=str(tmp_path / "scheduler.pem"),
                      tls_scheduler_key=str(tmp_path / "scheduler-key.pem"),
                      require_encryption=True)
    client = client_security(ClientTLS(str(tmp_path / "ca.pem"), str(tmp_path / "client.pem"),
                                       str(tmp_path / "client-key.pem")))

    async def connect() -> str:
        async with Scheduler(security=server, protocol="tls", host="127.0.0.1", port=0,
                             dashboard_address=":0") as scheduler:
            async with Client(scheduler.address, security=client, asynchronous=True,
                              timeout="10s") as c:
                return c.scheduler.address

    assert asyncio.run(connect()).startswith("tls://127.0.0.1:")
