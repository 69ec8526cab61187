"""A study on a cluster starts ONE cluster for all its cells (and its resume), and leaves no
Dask process behind however it ends: real LocalClusters of worker processes, a real SQLite store,
the real ``benchlab study`` command stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest

from benchlab.core.study import run_study
from benchlab.core.suite import load_suite
from benchlab.store.db import Store
from tests.cluster.helpers import wait_for, worker_processes
from tests.conftest import run_cli

pytestmark = [pytest.mark.slow]

SUITE = """[study]
name = "two-cells"
runs = {runs}
warmup = 0
seed = 5

[[workload]]
name = "nap"
command = "{command}"

[matrix]
isolation = ["bare"]
workers = [1, 2]
"""


def _suite(tmp_path: Path, runs: int = 2, command: str = "true") -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(runs=runs, command=command))
    return path


def _cells(store: Store, study_id: int) -> list[dict]:
    return [s for s in store.sessions() if s.get("parent_id") == study_id]


def test_every_cell_runs_on_one_cluster_started_once(db_path, tmp_path):
    store = Store.open(db_path)
    study = run_study(store, load_suite(str(_suite(tmp_path))), cluster="local:2")
    assert store.get_session(study.uid)["status"] == "complete"
    cells = _cells(store, study.id)
    assert len(cells) == 2 and all(c["status"] == "complete" for c in cells)
    pids: dict[str, set[int]] = {}
    per_cell = []
    for cell in cells:
        runs = store.runs(session_id=cell["id"])
        per_cell.append(Counter(r["extra"]["machine"] for r in runs))
        for r in runs:
            pids.setdefault(r["extra"]["machine"], set()).add(r["extra"]["worker_pid"])
    # workers = 1: 2 runs per machine; workers = 2: 2 runs per slot, 2 slots per machine
    assert sorted(sorted(c.values()) for c in per_cell) == [[2, 2], [4, 4]], per_cell
    # one cluster for the study: every cell's runs on a machine came from the same worker
    # process (a cluster per cell would start new worker processes for each cell)
    assert set(pids) == {"127.0.0.1/0", "127.0.0.1/1"}
    assert all(len(p) == 1 for p in pids.values()), pids
    assert len(set().union(*pids.values())) == 2
    # and it is shut down: no worker process of this test's process is left
    wait_for(lambda: not worker_processes(), 30, "the LocalCluster's workers to exit")
    store.close()


def _marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``marker`` (everything the CLI started)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(entry))
    return found


def _cell_runs(db_path: Path) -> int:
    try:
        with Store.open(db_path, readonly=True) as store:
            return store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except Exception:  # the database is being created by the client
        return 0


def test_sigterm_mid_study_shuts_the_cluster_down_and_resume_completes(db_path, tmp_path):
    suite = _suite(tmp_path, runs=3, command="sleep 0.4")
    marker = f"BENCHLAB_TEST_MARK={uuid.uuid4().hex}"
    env = dict(os.environ, COLUMNS="160", BENCHLAB_TEST_MARK=marker.split("=", 1)[1])
    benchlab = os.path.join(os.path.dirname(sys.executable), "benchlab")
    client = subprocess.Popen([benchlab, "study", "run", str(suite), "--cluster", "local:2",
                               "--db", str(db_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for(lambda: _cell_runs(db_path) >= 2 or client.poll() is not None, 90,
                 "two stored runs")
        assert client.poll() is None, client.communicate()
        client.send_signal(signal.SIGTERM)
        out, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(10)
    assert client.returncode == 128 + signal.SIGTERM, (out, err)
    assert "Traceback" not in err and "--resume" in err, err
    # the workers, their nannies and every run's helper went with the client
    wait_for(lambda: not _marked(marker), 20, "no process started by the client to remain")
    with Store.open(db_path, readonly=True) as store:
        study = next(s for s in store.sessions() if s["kind"] == "study")
        assert study["status"] == "interrupted"
        uid = study["uid"]
        before = {r["id"] for c in _cells(store, study["id"])
                  for r in store.runs(session_id=c["id"])}
    resumed = run_cli("study", "run", "--resume", uid, db=db_path, timeout=180,
                      env={"BENCHLAB_TEST_MARK": marker.split("=", 1)[1]})
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: not _marked(marker), 20, "no process left after the resume")
    with Store.open(db_path, readonly=True) as store:
        study = store.get_session(uid)
        assert study["status"] == "complete"
        cells = _cells(store, study["id"])
        assert len(cells) == 2 and all(c["status"] == "complete" for c in cells)
        pids = set()
        for cell in cells:
            runs = store.runs(session_id=cell["id"])
            slots = cell["protocol"]["placement"]["workers"]
            # exact planned count per machine and slot, no sequence number twice
            assert len(runs) == 2 * slots * 3, (cell["name"], len(runs))
            assert len({r["seq"] for r in runs}) == len(runs)
            assert Counter((r["worker"], r["iteration"]) for r in runs) == \
                {(w, i): 1 for w in range(2 * slots) for i in range(3)}
            pids |= {r["extra"]["worker_pid"] for r in runs if r["id"] not in before}
        # the resume started one cluster too: its new runs came from two worker processes
        assert len(pids) == 2, pids


def test_a_failing_study_shuts_its_cluster_down_too(db_path, tmp_path):
    """The error path: the cell's command fails on the machines (exit 1), the cell's session
    fails with a one-line error naming the machine, and so does the study; its one cluster is
    gone afterwards."""
    from benchlab.errors import UserError

    store = Store.open(db_path)
    with pytest.raises(UserError) as info:
        run_study(store, load_suite(str(_suite(tmp_path, command="false"))), cluster="local:2")
    assert "127.0.0.1/" in str(info.value), info.value
    study = next(s for s in store.sessions() if s["kind"] == "study")
    assert study["status"] == "failed"
    wait_for(lambda: not worker_processes(), 30, "the LocalCluster's workers to exit")
    store.close()


class _SwallowedSigterm:
    """Sends SIGTERM to the main thread from its ``__del__`` and keeps running Python code
    there: the handler's KeyboardInterrupt is raised inside ``__del__``, and Python swallows
    it ("Exception ignored in ..."), as it does when a Dask future dropped after its run was
    stored is being collected when the signal lands (the window behind the study that exited
    0 after a SIGTERM)."""

    def __del__(self):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        sum(range(10_000))  # Python code, so the handler runs here, inside __del__


# the swallowed KeyboardInterrupt is the point: Python reports it as unraisable
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_sigterm_whose_interrupt_is_swallowed_still_ends_the_study(db_path, tmp_path):
    """SIGTERM lands while the first stored run's observer call drops an object (its
    KeyboardInterrupt lost in ``__del__``): the study still ends interrupted (signal 15), no
    further cell starts, the runs stored stay, and its cluster is gone."""
    from benchlab.core.session_types import SessionInterrupted, Silent

    class DropOnFirstRun(Silent):
        dropped = 0

        def run_finished(self, name, run, m, total, done):
            if not self.dropped:
                self.dropped += 1
                _SwallowedSigterm()  # collected at once: its __del__ runs here

    store = Store.open(db_path)
    with pytest.raises(SessionInterrupted) as info:
        run_study(store, load_suite(str(_suite(tmp_path, runs=3, command="sleep 0.2"))),
                  cluster="local:2", observer=DropOnFirstRun())
    assert info.value.signum == signal.SIGTERM, info.value.signum
    study = next(s for s in store.sessions() if s["kind"] == "study")
    assert study["status"] == "interrupted", study["status"]
    cells = _cells(store, study["id"])
    # the first cell was interrupted at its next poll; the second never started
    assert [c["status"] for c in cells] == ["interrupted"], [c["status"] for c in cells]
    stored = len(store.runs(session_id=cells[0]["id"]))
    planned = 2 * cells[0]["protocol"]["placement"]["workers"] * 3
    assert 1 <= stored < planned, (stored, planned)
    wait_for(lambda: not worker_processes(), 30, "the LocalCluster's workers to exit")
    store.close()
