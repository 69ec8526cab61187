"""A stop kills the exec helper that runs a program, never an idle one (which it used to turn
into a zombie until its thread's next request: a team's worker showed a defunct exec_helper
after a Ctrl-C during a fleet profile's set-up). Real helper, real processes; no Dask needed:
the stop's kill works on a thread of this process."""

from __future__ import annotations

import os
import threading
import time

from benchlab.core.cluster.stop import _kill_thread_children
from benchlab.measure.spawn import SpawnRequest, spawn_measured, start_helper, thread_children


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def test_the_stop_spares_an_idle_helper_and_kills_a_busy_one():
    tid: list[int] = []
    go, idle_checked = threading.Event(), threading.Event()
    result: list = []

    def run_thread() -> None:
        tid.append(threading.get_native_id())
        start_helper()
        go.set()
        idle_checked.wait(30)
        result.append(spawn_measured(SpawnRequest(argv=["/bin/sleep", "30"])))

    thread = threading.Thread(target=run_thread, daemon=True)
    thread.start()
    assert go.wait(30)
    helpers = thread_children(tid[0])
    assert len(helpers) == 1, helpers
    helper = helpers[0]

    assert _kill_thread_children(tid[0]) == []  # idle: nothing of a run to stop
    time.sleep(0.2)
    assert _state(helper) not in ("Z", "X"), "the idle helper was killed (a zombie follows)"

    idle_checked.set()
    deadline = time.monotonic() + 30
    while not thread_children(helper, helper) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread_children(helper, helper), "the run's program never started"
    started = time.monotonic()
    assert _kill_thread_children(tid[0]) == [helper]
    thread.join(30)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert result and result[0].status != "ok"  # the 30-s sleep was stopped, not completed
    assert not os.path.exists(f"/proc/{helper}") or _state(helper) != "Z"
