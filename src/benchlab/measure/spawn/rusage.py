"""Timing and resource usage of a finished run, turned into a :class:`RunMeasurement`.

The exec helper reports one line of ``key=value`` fields (its own ``wait4`` rusage and
``CLOCK_MONOTONIC`` stamps); the Python fallback waits with ``wait4`` itself (with a pidfd for the
timeout). Both end here: times in ns, memory in KiB.
"""

from __future__ import annotations

import os
import select
import time

from benchlab.measure.spawn._process import kill_group
from benchlab.measure.spawn.types import RunMeasurement, SpawnRequest


def _error_message(request: SpawnRequest, stage: str, index: int, errno_: int) -> str:
    reason = os.strerror(errno_) if errno_ else "unknown error"
    if stage == "exec":
        return f"exec failed: {reason} ({request.argv[0]!r})"
    if stage == "cgroup":
        return f"cannot join cgroup via {list(request.cgroup_procs)[index]}: {reason}"
    if stage == "affinity":
        return f"cannot set CPU affinity to {list(request.cpus or ())}: {reason}"
    if stage == "rlimit":
        name, value = list(request.rlimits.items())[index]
        return f"cannot set resource limit {name}={value}: {reason}"
    if stage == "chdir":
        return f"cannot change directory to {request.cwd!r}: {reason}"
    if stage in ("stdin", "stdout", "stderr"):
        path = getattr(request, f"{stage}_path")
        return f"cannot open {stage} file {path!r}: {reason}"
    return f"exec helper failed at {stage}: {reason}"


def measurement_from_fields(request: SpawnRequest, f: dict[str, str]) -> RunMeasurement:
    """The helper's result fields as a measurement (times in ns, memory in KiB); a missing
    number reads 0. Each field is read inline (no helper function: ~15 frames a run)."""
    get = f.get
    status = f["status"]
    error = None
    if status == "error":
        error = _error_message(request, get("stage", "?"), int(get("index", 0)),
                               int(get("errno", 0)))
    elif status == "interrupted":
        status = "error"
        error = "interrupted: the exec helper was told to stop and killed the run"
    exit_code = int(get("exit", 0))
    if exit_code < 0 or status not in ("ok", "failed"):
        exit_code = None
    term_signal = int(get("signal", 0))
    cpus_field = get("cpus", "-")
    cpus = None if cpus_field in ("-", "") else tuple(int(c) for c in cpus_field.split(","))
    return RunMeasurement(
        status=status,
        exit_code=exit_code,
        signal=term_signal if term_signal > 0 else None,
        wall_ns=int(get("wall_ns", 0)),
        user_ns=int(get("user_ns", 0)),
        sys_ns=int(get("sys_ns", 0)),
        max_rss_kib=int(get("maxrss_kib", 0)),
        minflt=int(get("minflt", 0)),
        majflt=int(get("majflt", 0)),
        nvcsw=int(get("nvcsw", 0)),
        nivcsw=int(get("nivcsw", 0)),
        start_mono_ns=int(get("start_mono_ns", 0)),
        end_mono_ns=int(get("end_mono_ns", 0)),
        start_unix_ns=int(get("start_unix_ns", 0)),
        error=error,
        method="exec-helper",
        cpus=cpus,
        descendants_killed=int(get("descendants", 0)),
    )


def wait_python(pid: int, timeout_s: float | None, start_ns: int):
    """wait4 with an optional wall-clock limit (pidfd + poll); returns status, rusage, timed_out, end."""
    timed_out = False
    if timeout_s is not None:
        pidfd = os.pidfd_open(pid)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while True:
                remaining_ms = (start_ns + timeout_s * 1e9 - time.monotonic_ns()) / 1e6
                if remaining_ms <= 0:
                    break
                if poller.poll(max(1, int(remaining_ms + 0.999))):
                    break
            if not poller.poll(0):
                timed_out = True
                kill_group(pid)
        finally:
            os.close(pidfd)
    _, status, usage = os.wait4(pid, 0)
    end_ns = time.monotonic_ns()
    return status, usage, timed_out, end_ns


def python_error(message: str, start_ns: int | None = None,
                 start_unix_ns: int | None = None) -> RunMeasurement:
    """A measurement of a run that could not be started: status 'error', ``message`` as its
    error, wall time (ns) from ``start_ns`` (monotonic) to now."""
    now = time.monotonic_ns()
    start = now if start_ns is None else start_ns
    return RunMeasurement(
        status="error", exit_code=None, signal=None, wall_ns=now - start, user_ns=0, sys_ns=0,
        max_rss_kib=0, minflt=0, majflt=0, nvcsw=0, nivcsw=0, start_mono_ns=start,
        end_mono_ns=now, start_unix_ns=time.time_ns() if start_unix_ns is None else start_unix_ns,
        error=message, method="python", cpus=None,
    )
