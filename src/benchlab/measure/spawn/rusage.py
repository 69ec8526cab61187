"""Timing and resource usage of a finished run, turned into a :class:`RunMeasurement`.

The exec helper reports one line of ``key=value`` fields (its own ``wait4`` rusage and
``CLOCK_MONOTONIC`` stamps); the Python fallback waits with ``wait4`` itself (with a pidfd for the
timeout). Both end here: times in ns, memory in KiB.
"""

from __future__ import annotations

import os
import select
import time

from benchlab.measure.spawn._process import _kill_group
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


def _measurement_from_fields(request: SpawnRequest, f: dict[str, str]) -> RunMeasurement:
    def num(key: str) -> int:
        return int(f.get(key, "0"))

    status = f["status"]
    error = None
    if status == "error":
        error = _error_message(request, f.get("stage", "?"), num("index"), num("errno"))
    elif status == "interrupted":
        status = "error"
        error = "interrupted: the exec helper was told to stop and killed the run"
    exit_code = num("exit") if num("exit") >= 0 and status in ("ok", "failed") else None
    term_signal = num("signal") if num("signal") > 0 else None
    cpus_field = f.get("cpus", "-")
    cpus = None if cpus_field in ("-", "") else tuple(int(c) for c in cpus_field.split(","))
    return RunMeasurement(
        status=status,
        exit_code=exit_code,
        signal=term_signal,
        wall_ns=num("wall_ns"),
        user_ns=num("user_ns"),
        sys_ns=num("sys_ns"),
        max_rss_kib=num("maxrss_kib"),
        minflt=num("minflt"),
        majflt=num("majflt"),
        nvcsw=num("nvcsw"),
        nivcsw=num("nivcsw"),
        start_mono_ns=num("start_mono_ns"),
        end_mono_ns=num("end_mono_ns"),
        start_unix_ns=num("start_unix_ns"),
        error=error,
        method="exec-helper",
        cpus=cpus,
        descendants_killed=num("descendants"),
    )


def _wait_python(pid: int, timeout_s: float | None, start_ns: int):
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
                _kill_group(pid)
        finally:
            os.close(pidfd)
    _, status, usage = os.wait4(pid, 0)
    end_ns = time.monotonic_ns()
    return status, usage, timed_out, end_ns


def _python_error(message: str, start_ns: int | None = None,
                  start_unix_ns: int | None = None) -> RunMeasurement:
    now = time.monotonic_ns()
    start = now if start_ns is None else start_ns
    return RunMeasurement(
        status="error", exit_code=None, signal=None, wall_ns=now - start, user_ns=0, sys_ns=0,
        max_rss_kib=0, minflt=0, majflt=0, nvcsw=0, nivcsw=0, start_mono_ns=start,
        end_mono_ns=now, start_unix_ns=time.time_ns() if start_unix_ns is None else start_unix_ns,
        error=message, method="python", cpus=None,
    )
