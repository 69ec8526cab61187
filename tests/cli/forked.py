"""``run_cli`` through a fork server: each call still runs the console script file in a real
process of its own (own session, pipes, cwd, environment, argv; exit as the interpreter exits),
forked from a server that has imported every command, so a call does not pay the interpreter's
start-up and the command's imports (~0.1-0.4 s of CPU, most of a short call). The server and
what a child shares with it are described and tested in tests/badinput/forkserver.py and
tests/badinput/test_forkserver.py; the bad-input corpus compares forked and console-script
outcomes case by case.

For tests whose point is a command's output and what it stores. Tests of start-up, of how the
process exits or is signalled, and those that watch the process from outside keep the console
script (``tests.conftest.run_cli`` or ``Popen([BENCHLAB, ...])``); so does any call whose
environment differs from the server's in what a fresh process reads at start.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from pathlib import Path

from tests import conftest
from tests.badinput.forkserver import ForkServer, RequestTooLarge, differs_at_start
from tests.conftest import BENCHLAB

_server: ForkServer | None = None
_busy = threading.Lock()


def _forks() -> ForkServer:
    """This worker's server, started on first use and ended at exit."""
    global _server
    if _server is None or _server.proc.poll() is not None:
        _server = ForkServer(BENCHLAB)
        atexit.register(_server.close)
    return _server


def run_cli(*args: str, db: Path | None = None, check: bool = False, timeout: float = 120,
            cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """:func:`tests.conftest.run_cli`, forked: same arguments, environment, result and errors
    (``subprocess.TimeoutExpired`` after ``timeout`` s, the process group killed)."""
    argv = [*args] + (["--db", str(db)] if db is not None else [])
    full_env = dict(os.environ, COLUMNS="160", **(env or {}))
    # The server runs one call at a time: a call made while another thread's is running (two
    # commands meant to overlap) runs the console script, so the two still overlap.
    if not _busy.acquire(blocking=False):
        return conftest.run_cli(*args, db=db, check=check, timeout=timeout, cwd=cwd, env=env)
    try:
        server = _forks()
        if differs_at_start(full_env, server.env, server.import_reads):
            return conftest.run_cli(*args, db=db, check=check, timeout=timeout, cwd=cwd, env=env)
        proc = server.run(argv, str(cwd or os.getcwd()), full_env, timeout)
    except RequestTooLarge:
        return conftest.run_cli(*args, db=db, check=check, timeout=timeout, cwd=cwd, env=env)
    finally:
        _busy.release()
    proc.args = [BENCHLAB, *argv]
    if proc.timed_out:
        raise subprocess.TimeoutExpired(proc.args, timeout, proc.stdout, proc.stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"benchlab {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc
