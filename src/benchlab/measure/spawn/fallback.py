"""The pure-Python fallback: spawn the target with ``subprocess`` when no C compiler exists.

Times, exit status, timeout and process-group handling are the same as the exec helper's, but
``max_rss_kib`` is inflated by the harness's own peak RSS, timestamps include some Python
overhead, and without a subreaper the descendants a run leaves are found by process group and,
when the run is in cgroups (``cgroup_procs``), by cgroup membership: a ``setsid`` descendant of a
run without cgroups escapes (the exec helper catches those too).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from pathlib import Path

from benchlab.control.cgroups.fs import kill_members
from benchlab.measure.spawn import helper_client
from benchlab.measure.spawn._process import DeferredSigint, kill_group
from benchlab.measure.spawn.rusage import python_error, wait_python
from benchlab.measure.spawn.types import (
    RunMeasurement,
    SpawnRequest,
    absolute_or_none,
    rlimit_number,
)

#: What runs spawned from Python cannot do, said once per process when the exec helper could not
#: be built (``BENCHLAB_SPAWN=python`` is a choice and says nothing).
FALLBACK_NOTICE = (
    "benchlab: note: {reason}; runs are spawned from Python instead of the C exec helper: "
    "max RSS includes benchlab's own (tens of MB), times include some Python overhead, and a "
    "setsid descendant of a run outside cgroups is not killed"
)

_noticed = False


def _notice_once() -> None:
    """Print :data:`FALLBACK_NOTICE` to stderr the first time a run falls back in this process."""
    global _noticed
    if _noticed or helper_client.unavailable_reason is None:
        return
    _noticed = True
    reason = helper_client.unavailable_reason.rstrip(".")
    try:
        os.write(2, (FALLBACK_NOTICE.format(reason=reason) + "\n").encode())
    except OSError:
        pass  # no stderr: nothing to tell


def _python_child_setup(request: SpawnRequest, report_fd: int):
    """preexec_fn for the fallback: cgroup join, affinity, rlimits, with precise failure notes."""
    cgroups = list(request.cgroup_procs)
    cpus = None if request.cpus is None else {int(c) for c in request.cpus}
    limits = [(name, rlimit_number(name), int(v)) for name, v in request.rlimits.items()]

    def setup() -> None:
        stage = "cgroup"
        try:
            for procs in cgroups:
                with open(procs, "w") as fh:
                    fh.write(f"{os.getpid()}\n")
            stage = "affinity"
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
                applied = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
                os.write(report_fd, f"cpus={applied}\n".encode())
            for name, number, value in limits:
                stage = "rlimit"
                soft, hard = resource.getrlimit(number)
                if hard != resource.RLIM_INFINITY and value > hard:
                    hard = value
                resource.setrlimit(number, (value, hard))
        except OSError as exc:
            detail = stage
            if stage == "cgroup":
                detail = f"cannot join cgroup via {procs}: {exc.strerror}"
            elif stage == "affinity":
                detail = f"cannot set CPU affinity to {sorted(cpus or ())}: {exc.strerror}"
            else:
                detail = f"cannot set resource limit {name}={value}: {exc.strerror}"
            os.write(report_fd, f"error={detail}\n".encode())
            raise

    return setup


def _open_redirects(request: SpawnRequest, opened: list[int]) -> list[int] | RunMeasurement:
    """The run's stdin, stdout and stderr descriptors (each one also appended to ``opened``,
    which the caller closes), or the failed measurement naming a file that cannot be opened."""
    fds = []
    for path, stage, flags in (
        (request.stdin_path, "stdin", os.O_RDONLY),
        (request.stdout_path, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (request.stderr_path, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        try:
            fd = os.open(absolute_or_none(path) or os.devnull, flags | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            return python_error(f"cannot open {stage} file {path!r}: {exc.strerror}")
        opened.append(fd)
        fds.append(fd)
    return fds


def _reported_cpus(report_r: int) -> tuple[int, ...] | None:
    """The CPUs the child's setup reports it was bound to (its ``cpus=`` line), None if none."""
    cpus = None
    for line in os.read(report_r, 65536).decode(errors="replace").splitlines():
        if line.startswith("cpus="):
            cpus = tuple(int(c) for c in line[5:].split(","))
    return cpus


def spawn_in_python(request: SpawnRequest) -> RunMeasurement:
    """Run ``request`` with ``os.posix_spawn`` and ``wait4`` in this process (no exec helper):
    times in ns, memory in KiB, as :func:`benchlab.measure.spawn.spawn` returns them."""
    _notice_once()
    opened: list[int] = []
    report_r, report_w = os.pipe()
    try:
        fds = _open_redirects(request, opened)
        if isinstance(fds, RunMeasurement):
            return fds
        needs_setup = bool(request.cgroup_procs) or request.cpus is not None or bool(request.rlimits)
        env = None if request.env is None else dict(request.env)
        start_unix_ns = time.time_ns()
        start_ns = time.monotonic_ns()
        deferred = DeferredSigint()
        try:
            with deferred:
                proc = subprocess.Popen(
                    list(request.argv),
                    cwd=request.cwd, env=env, stdin=fds[0], stdout=fds[1], stderr=fds[2],
                    process_group=0,
                    pass_fds=(report_w,) if needs_setup else (),
                    preexec_fn=_python_child_setup(request, report_w) if needs_setup else None,
                )
        except subprocess.SubprocessError:
            deferred.raise_if_pending()
            os.close(report_w)
            report_w = -1
            detail = os.read(report_r, 65536).decode(errors="replace")
            message = next((line[6:] for line in detail.splitlines() if line.startswith("error=")),
                           "child setup failed")
            return python_error(message, start_ns, start_unix_ns)
        except OSError as exc:
            deferred.raise_if_pending()
            if request.cwd is not None and exc.filename == request.cwd:
                message = f"cannot change directory to {request.cwd!r}: {exc.strerror}"
            else:
                message = f"exec failed: {exc.strerror} ({request.argv[0]!r})"
            return python_error(message, start_ns, start_unix_ns)
        os.close(report_w)
        report_w = -1
        try:
            deferred.raise_if_pending()
            status, usage, timed_out, end_ns = wait_python(proc.pid, request.timeout_s, start_ns)
        except BaseException:
            kill_group(proc.pid)
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen never waits again
        descendants_killed = (_kill_process_group_members(proc.pid)
                              + _kill_cgroup_members(request.cgroup_procs))
        cpus = _reported_cpus(report_r) if request.cpus is not None else None
    finally:
        for fd in opened:
            os.close(fd)
        os.close(report_r)
        if report_w >= 0:
            os.close(report_w)

    exit_code = term_signal = None
    if os.WIFEXITED(status):
        exit_code = os.WEXITSTATUS(status)
        kind = "ok" if exit_code == 0 else "failed"
    else:
        term_signal = os.WTERMSIG(status)
        kind = "timeout" if timed_out and term_signal == signal.SIGKILL else "signaled"
    return RunMeasurement(
        status=kind,
        exit_code=exit_code,
        signal=term_signal,
        wall_ns=end_ns - start_ns,
        user_ns=round(usage.ru_utime * 1e6) * 1000,
        sys_ns=round(usage.ru_stime * 1e6) * 1000,
        max_rss_kib=usage.ru_maxrss,
        minflt=usage.ru_minflt,
        majflt=usage.ru_majflt,
        nvcsw=usage.ru_nvcsw,
        nivcsw=usage.ru_nivcsw,
        start_mono_ns=start_ns,
        end_mono_ns=end_ns,
        start_unix_ns=start_unix_ns,
        error=None,
        method="python",
        cpus=cpus,
        descendants_killed=descendants_killed,
    )


def _kill_cgroup_members(procs_paths, timeout_s: float = 2.0) -> int:
    """SIGKILL every task left in the run's cgroups (``cgroup.procs`` files), until they are empty.

    A run cgroup holds only the target and its descendants (this process never joins it), so
    whatever is still inside when the target has ended outlived its run -- including a
    ``setsid`` descendant the process-group search misses. Returns how many were killed.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + timeout_s
    for path in procs_paths:  # a cgroup.procs file per hierarchy; one shared time budget
        killed |= kill_members(Path(path).parent, max(0.0, deadline - time.monotonic()))
    return len(killed)


def _kill_process_group_members(pgid: int) -> int:
    """SIGKILL what is left of the finished target's process group; how many were alive.

    The fallback has no subreaper: descendants that stayed in the target's group are found in
    /proc by process group id (a ``setsid`` one is not: only the exec helper catches those).
    """
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                text = fh.read()
        except OSError:
            continue
        # "pid (comm) S ppid pgrp ...": comm may hold spaces and ')', so split after the last ')'.
        fields = text[text.rfind(b")") + 2:].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed
