"""The live-cgroup registry: removes what this process created at exit or on a fatal signal.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import atexit
import itertools
import os
import threading
from collections.abc import Sequence
from typing import Any

registry_lock = threading.Lock()
# id -> RunCgroup; values only need .creator_pid and .remove() (no import of lifecycle here).
live_cgroups: dict[int, Any] = {}
leaf_counter = itertools.count()


def cleanup_all() -> list[str]:
    """Remove every run cgroup this process created and has not removed yet.

    Registered with :mod:`atexit`; also called by the handlers of
    :func:`install_signal_cleanup`. Processes still inside are killed (SIGKILL).
    Returns the paths that could not be removed (left for :func:`sweep_stale`).
    """
    with registry_lock:
        groups = [group for group in live_cgroups.values() if group.creator_pid == os.getpid()]
    leftovers: list[str] = []
    for group in groups:
        leftovers.extend(group.remove())
    return leftovers


atexit.register(cleanup_all)


def install_signal_cleanup(signals: Sequence[int] = (signal.SIGTERM, signal.SIGHUP)) -> None:
    """Remove live run cgroups when this process gets one of ``signals``, then die of it.

    Python already turns Ctrl-C (SIGINT) into KeyboardInterrupt, which ``with RunCgroup(...)``
    handles; SIGTERM and SIGHUP would otherwise kill the process without running atexit
    handlers. SIGKILL cannot be caught: :func:`sweep_stale` handles that case at the next
    start. Call from the main thread (the CLI does it once at start-up).
    """

    def handler(signum, frame):
        cleanup_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in signals:
        signal.signal(signum, handler)
