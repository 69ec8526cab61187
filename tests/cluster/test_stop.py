"""The worker side of stopping a session (benchlab.core.cluster.stop) on real processes, without
Dask: two threads of this process stand for two task threads of one worker, each executing a run
of a different session. Stopping one session kills only what its thread started — through the
real exec helper (SIGTERM: it kills the program and reports the run interrupted) — and leaves the
other session's program running."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading

from benchlab.core.cluster.stop import clear_stop, running, stop_session_runs, was_stopped
from benchlab.measure.spawn import SpawnRequest, spawn_measured
from tests.cluster.helpers import comm, descendants, wait_for


def test_stopping_one_session_kills_its_run_only_and_blocks_later_runs():
    results: dict[str, object] = {}
    other: dict[str, subprocess.Popen] = {}
    release = threading.Event()

    def run_of_a():  # through the exec helper, as a cluster run executes
        with running("sess-a") as stopped_before:
            assert not stopped_before
            results["a"] = spawn_measured(SpawnRequest(argv=["sleep", "30"]))

    def run_of_b():  # another session's program on the same worker
        with running("sess-b"):
            other["b"] = subprocess.Popen(["sleep", "31"], start_new_session=True)
            release.wait(60)
            other["b"].kill()
            other["b"].wait()

    threads = [threading.Thread(target=run_of_a), threading.Thread(target=run_of_b)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: sum(comm(p) == "sleep" for p in descendants(os.getpid())) == 2, 30,
                 "both programs running")
        answer = asyncio.run(stop_session_runs("sess-a", wait_s=20))
        # the stop returned once session a's thread had returned from its run
        assert answer["still_running"] == 0 and answer["signalled"], answer
        threads[0].join(5)
        assert not threads[0].is_alive()
        m = results["a"]
        assert m.status == "error" and "interrupted" in (m.error or ""), m
        sleeps = [p for p in descendants(os.getpid()) if comm(p) == "sleep"]
        assert sleeps == [other["b"].pid], "the other session's program was touched"
        # the helper that ran it exited and was reaped (the run's thread closed it)
        assert not any(os.path.exists(f"/proc/{pid}") for pid in answer["signalled"])
        # a run of the stopped session that starts now does not run; a resume clears that
        assert was_stopped("sess-a") and not was_stopped("sess-b")
        with running("sess-a") as stopped_before:
            assert stopped_before
        clear_stop("sess-a")
        with running("sess-a") as stopped_before:
            assert not stopped_before
    finally:
        release.set()
        for t in threads:
            t.join(10)
        if "b" in other and other["b"].poll() is None:
            os.kill(other["b"].pid, signal.SIGKILL)
