"""A SIGTERM whose KeyboardInterrupt is lost in a ``__del__`` still stops a local study cell
within one run: the executor's single-worker loop and its parallel wait loop check for it.
And a second SIGTERM does not end a session before its worker threads have.

Real processes (``sleep``), a real SQLite store, a real signal sent to the main thread from a
real ``__del__``, which Python reports as "Exception ignored" and otherwise forgets.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.core.session_types import SessionInterrupted, Silent
from benchlab.core.study import run_study
from benchlab.core.suite import load_suite
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner

RUNS = 20

SUITE = """[study]
name = "one-cell"
runs = {runs}
warmup = 0
seed = 5

[[workload]]
name = "nap"
command = "sleep 0.05"

[matrix]
isolation = ["bare"]
workers = [{workers}]
"""


class _SwallowedSigterm:
    """Sends SIGTERM to the main thread from its ``__del__`` and keeps running Python code
    there: the handler's KeyboardInterrupt is raised inside ``__del__`` and Python swallows it,
    as when a collected object's finalizer runs as the signal lands."""

    def __del__(self):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        sum(range(10_000))  # Python code, so the handler runs here, inside __del__


class _DropOnce(Silent):
    """Drops a :class:`_SwallowedSigterm` in the main thread: at the session's start (before
    the worker threads run) or after its first stored run (the one-worker loop's thread)."""

    def __init__(self, when: str):
        self.when, self.dropped = when, False

    def _drop(self) -> None:
        if not self.dropped:
            self.dropped = True
            _SwallowedSigterm()  # collected at once: its __del__ runs here

    def started(self, session, plan, total):
        if self.when == "started":
            self._drop()

    def run_finished(self, name, run, m, total, done):
        if self.when == "first run":
            self._drop()


# the swallowed KeyboardInterrupt is the point: Python reports it as unraisable
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("workers, when", [(1, "first run"), (2, "started")],
                         ids=["one-worker-loop", "parallel-wait-loop"])
def test_a_swallowed_sigterm_ends_a_local_cell_within_a_run(db_path, tmp_path: Path,
                                                             workers: int, when: str):
    """The cell ends ``interrupted`` with few of its runs stored (without the checks it ran all
    of them and only the study noticed), the study too, signal 15, no killed run stored."""
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(runs=RUNS, workers=workers))
    store = Store.open(db_path)
    # a child of this process that is not the session's (a test suite's fork server, a
    # notebook's helper): the interruption must not signal it (every child once got SIGTERM)
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(SessionInterrupted) as info:
            run_study(store, load_suite(str(suite)), observer=_DropOnce(when))
        time.sleep(0.1)
        assert bystander.poll() is None, f"a bystander child got killed: {bystander.returncode}"
    finally:
        bystander.kill()
        bystander.wait()
    assert info.value.signum == signal.SIGTERM, info.value.signum
    study = next(s for s in store.sessions() if s["kind"] == "study")
    assert study["status"] == "interrupted", study["status"]
    cells = [s for s in store.sessions() if s.get("parent_id") == study["id"]]
    assert [c["status"] for c in cells] == ["interrupted"], [c["status"] for c in cells]
    runs = store.runs(session_id=cells[0]["id"])
    planned = workers * RUNS
    # one worker: the run whose observer lost the signal, and no other; two: the runs that
    # ended in the first 0.2-s poll (the killed ones are not stored)
    assert len(runs) <= (1 if workers == 1 else planned // 2), (len(runs), planned)
    assert {r["status"] for r in runs} <= {"ok"}, [r["status"] for r in runs]
    store.close()


class _SlowToEnd(ScriptedRunner):
    """Each run takes ``run_s`` of the worker thread's time (a scripted runner: the point is
    when the main thread returns, not a process; after a kill, a real run ends as soon as its
    program dies, too soon to land a second signal in between)."""

    def __init__(self, run_s: float):
        super().__init__()
        self.run_s = run_s
        self.ended: list[float] = []

    def run(self, planned, worker):
        time.sleep(self.run_s)
        try:
            return super().run(planned, worker)
        finally:
            self.ended.append(time.monotonic())


def test_a_second_sigterm_does_not_end_the_session_before_its_workers(db_path):
    """SIGTERM, then another while the main thread waits for the two workers to end (each in
    a 0.8-s run): the session still ends only after both workers have (the second signal is
    held, then delivered), interrupted, signal 15. Before, the second signal cut the wait
    short and the session was finished, and its store could be closed, under a worker still
    writing (b984c40's segfault)."""
    plan = RunPlan(benchmarks=[BenchmarkSpec("nap", "true")], runs=4, warmup=0, min_runs=1,
                   cwd="/tmp", seed=7)
    plan.placement.workers = 2
    runner = _SlowToEnd(0.8)
    main = threading.main_thread().ident
    signals = [threading.Timer(t, signal.pthread_kill, (main, signal.SIGTERM))
               for t in (0.3, 0.5)]
    store = Store.open(db_path)
    with pytest.raises(SessionInterrupted) as info:
        for timer in signals:
            timer.start()
        execute(plan, store, Here(runner=runner))
    returned = time.monotonic()
    for timer in signals:
        timer.join()
    assert info.value.signum == signal.SIGTERM, info.value.signum
    assert len(runner.ended) == 2, runner.ended  # each worker's first run, and no other
    assert max(runner.ended) <= returned, (max(runner.ended), returned)
    assert store.get_session(info.value.session.uid)["status"] == "interrupted"
    store.close()
