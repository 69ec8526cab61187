"""A real, throwaway PostgreSQL server for the team-store tests (never a mock).

``pg_server`` (session scope) makes a cluster with ``initdb`` in a fresh temporary directory,
starts it with ``pg_ctl`` listening only on a Unix socket in that directory (no TCP port to
clash with anything), and stops and removes it at the end. PostgreSQL refuses to run as root,
so the cluster belongs to the system user ``benchlab-test`` (created when missing; the tests
run as root). ``pg_url`` gives each test its own empty database on that server.
``store_url`` parametrizes a test over both backends: an SQLite file and a PostgreSQL database.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import require_tool

PG_USER = "benchlab-test"
_counter = itertools.count()


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        PG_USER], check=True, capture_output=True)
        return pwd.getpwnam(PG_USER)


def _as_user(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", PG_USER, "--", *argv], capture_output=True, text=True,
                          **kw)


@contextlib.contextmanager
def throwaway_postgres():
    """Start a throwaway PostgreSQL cluster; yield (URL prefix, socket directory); remove it.

    Raises RuntimeError when the binaries are absent or this is not root (``bench/`` scripts
    use it too). The cluster runs as ``benchlab-test`` with ``fsync=off`` (a throwaway: a
    crash may lose it, and that costs nothing).
    """
    bindir = _pg_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL binaries are absent (/usr/lib/postgresql/*/bin/initdb); "
                           "apt-get install -y postgresql")
    if os.geteuid() != 0:
        raise RuntimeError("the throwaway PostgreSQL runs as a system user, which needs root")
    user = _ensure_user()
    base = Path(tempfile.mkdtemp(prefix="benchlab-pg-"))
    try:
        os.chown(base, user.pw_uid, user.pw_gid)
        data = base / "data"
        init = _as_user([str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust",
                         "--no-sync", "-E", "UTF8", "--locale=C"], timeout=120)
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr}")
        opts = f"-k {base} -c listen_addresses='' -p 5432 -c fsync=off -c max_connections=60"
        start = _as_user([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w",
                          "-t", "60", "-o", opts, "start"], timeout=90)
        if start.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {start.stderr}"
                               f"{(base / 'log').read_text(errors='replace')}")
        try:
            yield f"postgresql://{PG_USER}@/", str(base)
        finally:
            _as_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                     timeout=60)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def create_database(prefix: str, host: str, name: str) -> str:
    """Create database ``name`` on the throwaway server; return its URL."""
    import psycopg

    with psycopg.connect(f"{prefix}postgres?host={host}", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{prefix}{name}?host={host}"


@pytest.fixture(scope="session")
def pg_server():
    """URL prefix and socket directory of a running throwaway PostgreSQL cluster."""
    require_tool("postgres", "/usr/lib/postgresql/*/bin/initdb")  # fails in CI when absent
    if os.geteuid() != 0:
        pytest.skip("the PostgreSQL fixture runs the server as a system user, which needs root")
    with throwaway_postgres() as server:
        yield server


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the throwaway server (its URL)."""
    prefix, host = pg_server
    return create_database(prefix, host, f"t{os.getpid()}_{next(_counter)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """The same test on an SQLite file and on a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "bench.db")
    return request.getfixturevalue("pg_url")
