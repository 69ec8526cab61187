"""Waits on helper threads that a Ctrl-C/SIGTERM interrupts leave no thread touching what the
main thread then closes: the ``--output pipe`` drain and the exec helper's cgroup tracker.

Both waits are on Events, never ``Thread.join``: on Python 3.11 a KeyboardInterrupt that lands
in ``join`` can mark a running thread as stopped (bpo-45274), and a second close then went
ahead while the thread still ran. The interruption here is a real signal (SIGALRM from an
interval timer) whose handler raises KeyboardInterrupt, as ``interruptible``'s does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from benchlab.core.streams import _FifoDrain
from benchlab.measure.spawn import helper_client


@contextmanager
def _interrupt_after(seconds: float):
    """A KeyboardInterrupt in the main thread ``seconds`` after the block starts."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _fd_target(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def test_an_interrupted_drain_close_still_closes_the_fifo_once_its_thread_ends(tmp_path):
    """The close is interrupted while the drain thread still runs (its ``select`` lasts up to
    50 ms): the thread still reads what is left and closes the FIFO itself, and a second close
    returns at once. Before, the interrupted ``join`` left the descriptor open for good, and
    a second close could close it under the running thread."""
    for attempt in range(40):  # until the timer lands inside close's wait (most attempts)
        path = str(tmp_path / f"pipe-{attempt}")
        drain = _FifoDrain(path)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_NONBLOCK), "wb") as writer:
            writer.write(b"x" * 1000)
        time.sleep(0.06)  # the thread is back in select, mid-timeout at a random point
        returned = False
        try:
            with _interrupt_after(0.002):
                drain.close()
                returned = True
                time.sleep(0.01)  # close returned first: the timer lands here; try again
        except KeyboardInterrupt:
            if returned:
                continue
            drain.thread.join(5)  # the test's own wait, not interrupted
            assert not drain.thread.is_alive()
            assert _fd_target(drain.fd) != path, "the interrupted drain kept its FIFO open"
            drain.close()  # the second close: nothing left to do
            return
    pytest.skip("the timer never landed inside the close's wait in 40 attempts")


@pytest.mark.skipif(os.geteuid() != 0, reason="tracking cgroups need root")
def test_an_interrupted_first_run_waits_for_the_tracker_before_the_helper_is_closed(
        monkeypatch):
    """The first run waits for the helper to be moved into its tracking cgroup; a Ctrl-C in
    that wait, then the helper's close, must still wait for the tracker and remove the cgroup
    it made. Before, the close went ahead while the tracker still ran: the helper was reaped
    before its pid was written into the cgroup, and that cgroup stayed (``tracking`` set after
    the close had looked). The tracker is held 0.5 s before its real work, as a cgroup
    migration under load can be (7-15 ms here quiet), so the interruption lands in the wait."""
    real_track = helper_client._track
    probe = subprocess.Popen(["sleep", "30"])
    group = real_track(probe.pid)
    if group is None:
        probe.kill()
        probe.wait()
        pytest.skip("no freezer or pids cgroup v1 hierarchy to track processes in")
    group.remove()  # kills the probe
    probe.wait()
    made = []

    def slow_track(pid):
        time.sleep(0.5)
        made.append(real_track(pid))
        return made[-1]

    monkeypatch.setattr(helper_client, "_track", slow_track)
    # the fallback (the helper moved in by a thread) is what is tested: not born tracked
    monkeypatch.setattr(helper_client, "_tracked_spawns", nullcontext)
    server = helper_client._HelperServer(helper_client.helper_path())
    try:
        with pytest.raises(KeyboardInterrupt), _interrupt_after(0.1):
            server.run([b"--", b"/bin/true"], None)
            time.sleep(1)  # not reached: the run waits for the tracker past the timer
        server.close()
        time.sleep(0.6)  # longer than the tracker can still need
        tracking = server.tracking
        assert tracking is None, "the tracker set its cgroup after the helper was closed"
        # None: the tracker wrote the helper's pid after the helper had been reaped (gone,
        # or by then another process's)
        assert made and made[0] is not None, "the tracker ran after the helper was reaped"
        assert not Path(made[0].path).exists(), "the helper's tracking cgroup was left"
    finally:
        if server.tracking is not None:
            leaf = Path(server.tracking.path)
            server.tracking.remove()
            assert not leaf.exists()
        server.abort()
