"""Launch ONE run of a command and measure it precisely.

:func:`spawn_measured` hands the run to the bundled C exec helper (``exec_helper.c``, compiled
on first use, one long-lived helper process per harness thread).  The helper starts the target
with ``clone(CLONE_VM|CLONE_VFORK)`` (as glibc's ``posix_spawn`` does), puts it in its own
process group, joins the requested cgroups, applies rlimits, directory and redirections,
``execvp``s it, ``wait4``s it and reports the target's own ``rusage`` plus ``CLOCK_MONOTONIC``
timestamps taken immediately before the clone and immediately after ``wait4`` returns.

Why not spawn from Python directly: at exec, Linux keeps the maximum of the replaced memory
map's RSS high-water mark in the new program's ``ru_maxrss``.  glibc's ``posix_spawn`` (and
Python's ``subprocess``) share or copy Python's memory map, so ``/bin/true`` would report the
harness's peak RSS (tens to hundreds of MB).  The helper is small, so the target's number is its
own (``/bin/true``: about 1 MB, as ``/usr/bin/time`` says).  Why long-lived: the first
clone+exec+wait of a freshly exec'd process is measurably slower than later ones, which would
put benchlab's floor above ``hyperfine -N``'s.

Without a C compiler, or with ``BENCHLAB_SPAWN=python``, a pure-Python fallback spawns the target
itself (``method="python"``): times, exit status, timeout and process-group handling are the
same, but ``max_rss_kib`` is inflated by the harness's own peak RSS and timestamps include some
Python overhead.  The runner stores ``method`` so analysis can tell.
"""

from __future__ import annotations

import os

from benchlab.errors import UserError
from benchlab.measure.spawn import helper_client
from benchlab.measure.spawn._process import thread_children
from benchlab.measure.spawn.helper_client import (
    HELPER_SOURCE,
    helper_path,
    servers,
    spawn_with_helper,
)
from benchlab.measure.spawn.types import (
    SPAWN_METHOD_ENV,
    STATUSES,
    RunMeasurement,
    SpawnRequest,
    validate_request,
)

__all__ = [
    "HELPER_SOURCE", "SPAWN_METHOD_ENV", "STATUSES", "RunMeasurement", "SpawnRequest",
    "helper_client", "helper_path", "spawn_measured", "spawn_method", "start_helper",
    "thread_children",
]
# ``servers`` (the per-thread helper) stays reachable here for tests that kill the helper.
_ = servers

#: ``$BENCHLAB_SPAWN`` as os.environ's underlying dict holds it (bytes).
_SPAWN_KEY = SPAWN_METHOD_ENV.encode()


def _environment_choice() -> str | None:
    """``$BENCHLAB_SPAWN``, or None. Read from os.environ's bytes dict: ``os.environ.get`` of
    an unset variable raises and catches a KeyError inside, once a run."""
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        return os.environ.get(SPAWN_METHOD_ENV)
    value = data.get(_SPAWN_KEY)
    return None if value is None else os.fsdecode(value)


def spawn_method(method: str | None = None) -> str:
    """Resolve the spawn method: "exec-helper" or "python".

    ``method`` (or ``$BENCHLAB_SPAWN`` when None) is "helper", "python" or "auto"; "auto" uses
    the exec helper when a C compiler is available and Python otherwise.  Raises UserError when
    "helper" is demanded but cannot be built.
    """
    choice = (method or _environment_choice() or "auto").lower()
    if choice in ("python", "py"):
        return "python"
    if choice in ("helper", "exec-helper", "c"):
        helper_path()
        return "exec-helper"
    if choice != "auto":
        raise UserError(f"{SPAWN_METHOD_ENV}={choice!r} is not a spawn method; "
                        "use helper, python or auto")
    try:
        helper_path()
    except UserError:
        return "python"
    return "exec-helper"


def start_helper(method: str | None = None) -> None:
    """Start this thread's exec helper now if runs will use it (``method`` as in
    :func:`spawn_measured`), so that its start and its move into a tracking cgroup (7-15 ms of
    waiting in the kernel, as root) overlap what the caller does before the first run.

    Raises UserError as :func:`spawn_method` does.
    """
    if spawn_method(method) == "exec-helper":
        helper_client.thread_helper()


def spawn_measured(request: SpawnRequest, method: str | None = None) -> RunMeasurement:
    """Run ``request`` once and measure it.

    Parameters
    ----------
    request : SpawnRequest
        What to run and how.
    method : str or None
        "helper", "python" or "auto"; None = ``$BENCHLAB_SPAWN`` or "auto" (see :func:`spawn_method`).

    Returns
    -------
    RunMeasurement
        Times in ns, memory in KiB.  A program that could not be started gives status "error"
        with a message, never an exception.

    Raises
    ------
    UserError
        Invalid request (empty command, non-positive timeout, unknown rlimit, ...).
    KeyboardInterrupt
        Re-raised after the target's whole process group has been killed and reaped.
    """
    validate_request(request)
    if spawn_method(method) == "python":
        # imported here: the fallback (and the cgroup helpers it uses) only without a helper
        from benchlab.measure.spawn.fallback import spawn_in_python

        return spawn_in_python(request)
    return spawn_with_helper(request)
