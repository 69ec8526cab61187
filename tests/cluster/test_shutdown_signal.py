"""A SIGTERM that lands while a study's LocalCluster is being closed: the close still ends,
the command exits 143 with the resume hint at once, and no process it started is left.

Before, the signal cut Dask's close in half: the cluster stayed "closing" and Dask's exit hook
(``distributed.deploy.spec.close_clusters``) waited out its 10-s timeout on it.

Real: the ``benchlab study run`` command in a process of its own, a LocalCluster of worker
processes, a SQLite store, SIGTERM. The one hook: Dask's ``SpecCluster._close`` coroutine sends
the signal to the main thread as it begins, so the signal always lands mid-close.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.cluster.helpers import wait_for

pytestmark = [pytest.mark.slow]

SUITE = """[study]
name = "one-cell"
runs = 2
warmup = 0
seed = 5

[[workload]]
name = "nap"
command = "true"

[matrix]
isolation = ["bare"]
workers = [1]
"""

CLIENT = """
import atexit, signal, sys, threading, time
from distributed.deploy.spec import SpecCluster

_close = SpecCluster._close
signalled = []

async def close_under_sigterm(self):
    if not signalled:
        signalled.append(time.monotonic())
        print("SIGTERM-AT", time.monotonic(), file=sys.stderr, flush=True)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
    return await _close(self)

SpecCluster._close = close_under_sigterm

def clusters_at_exit():  # registered after Dask's exit hook, so it runs before it
    states = [str(c.status) for c in SpecCluster._instances]
    print("CLUSTERS-AT-EXIT", states, time.monotonic(), file=sys.stderr, flush=True)

atexit.register(clusters_at_exit)
from benchlab.cli.main import main
sys.argv = ["benchlab", "study", "run", sys.argv[1], "--cluster", "local:1", "--db", sys.argv[2]]
main()
"""


def _marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``marker`` (the client and all it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if marker.encode() in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_sigterm_while_the_cluster_closes_exits_143_at_once_and_leaves_nothing(db_path,
                                                                                tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    marker = uuid.uuid4().hex
    env = dict(os.environ, BENCHLAB_TEST_MARK=marker)
    proc = subprocess.run([sys.executable, "-c", CLIENT, str(suite), str(db_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    ended = time.monotonic()
    err = proc.stderr
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "--resume" in err and "Traceback" not in err, err
    # the close ran to its end despite the signal: Dask's exit hook finds nothing to wait for
    states = re.search(r"CLUSTERS-AT-EXIT \[(.*)\]", err)
    assert states is not None, err
    assert "closing" not in states.group(1), states.group(1)
    # the old exit waited out Dask's 10-s close timeout, so it never took less than 10 s; now
    # ~1-1.5 s of orderly close and the interpreter's teardown: 2-3.5 s at load 8-12
    signalled = float(re.search(r"SIGTERM-AT ([\d.]+)", err).group(1))
    assert ended - signalled < 9.5, ended - signalled
    wait_for(lambda: not _marked(marker), 20, "no process started by the client to remain")
