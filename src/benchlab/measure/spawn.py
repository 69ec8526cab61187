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

import fcntl
import os
import resource
import select
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchlab.errors import UserError

HELPER_SOURCE = Path(__file__).with_name("exec_helper.c")

#: Values of ``RunMeasurement.status``.
STATUSES = ("ok", "failed", "signaled", "timeout", "error")

#: Environment variable choosing the spawn method: "helper", "python" or "auto" (default).
SPAWN_METHOD_ENV = "BENCHLAB_SPAWN"

#: Start targets with fork() instead of clone(CLONE_VM|CLONE_VFORK) in the helper.  Same
#: results, ~0.2 ms more overhead per run; kept for comparison (``BENCHLAB_HELPER_FORK=1``).
helper_uses_fork = os.environ.get("BENCHLAB_HELPER_FORK") == "1"


@dataclass(frozen=True)
class SpawnRequest:
    """One run of one command.

    Attributes
    ----------
    argv : sequence of str
        Command and arguments; no shell.  ``argv[0]`` is looked up in ``PATH`` of the target's
        environment (``execvp`` semantics).
    cwd : str or None
        Working directory of the target; None = the harness's.
    env : mapping or None
        Complete environment of the target; None = inherit the harness's.
    stdin_path, stdout_path, stderr_path : str or None
        Redirections; None = ``/dev/null``.  Output files are created or truncated.  Relative
        paths are relative to the harness's working directory, not ``cwd``.
    timeout_s : float or None
        Wall-clock limit in seconds; on expiry the target's whole process group gets SIGKILL.
    cpus : sequence of int or None
        CPU affinity of the target (``sched_setaffinity``); None = inherit.
    cgroup_procs : sequence of str
        Paths of ``cgroup.procs`` files the child writes its own pid into before exec
        (cgroup v1: one per controller hierarchy; v2: one), so all its CPU time is accounted.
    rlimits : mapping of str to int
        Resource limits by name (``"AS"`` or ``"RLIMIT_AS"``) to soft limit (bytes, seconds, ...
        as ``setrlimit`` defines); the hard limit is raised if it is lower.
    """

    argv: Sequence[str]
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    stdin_path: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    timeout_s: float | None = None
    cpus: Sequence[int] | None = None
    cgroup_procs: Sequence[str] = ()
    rlimits: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RunMeasurement:
    """What one run did and cost.

    Attributes
    ----------
    status : str
        "ok" (exit 0), "failed" (exit != 0), "signaled" (killed by a signal), "timeout" (killed
        at ``timeout_s``), "error" (could not be started: see ``error``).
    exit_code : int or None
        Exit status when the program exited.
    signal : int or None
        Terminating signal number when killed (SIGKILL=9 for a timeout).
    wall_ns : int
        Wall time in ns, CLOCK_MONOTONIC from just before fork to just after wait4 returned.
    user_ns, sys_ns : int
        CPU time of the target and its waited-for descendants, ns (microsecond resolution).
    max_rss_kib : int
        Peak resident set size of the target (largest of it and its waited-for descendants),
        KiB.  Inflated by the harness when ``method == "python"``.
    minflt, majflt : int
        Minor and major page faults.
    nvcsw, nivcsw : int
        Voluntary and involuntary context switches.
    start_mono_ns, end_mono_ns : int
        CLOCK_MONOTONIC at start and end, ns.
    start_unix_ns : int
        CLOCK_REALTIME at start, ns since the Unix epoch (timelines across workers).
    error : str or None
        Why the run could not start (exec, chdir, cgroup join, affinity, rlimit, redirection).
    method : str
        "exec-helper" or "python".
    cpus : tuple of int or None
        The CPU affinity actually applied, when one was requested.
    descendants_killed : int or None
        Processes the target left behind (orphaned descendants still running when it ended: a
        daemon, a ``setsid`` grandchild, one ignoring SIGTERM) that were SIGKILLed after the
        run so that no process outlives it.  The exec helper is their subreaper and finds
        them all; the Python fallback searches only the target's process group (a ``setsid``
        descendant escapes it).
    """

    status: str
    exit_code: int | None
    signal: int | None
    wall_ns: int
    user_ns: int
    sys_ns: int
    max_rss_kib: int
    minflt: int
    majflt: int
    nvcsw: int
    nivcsw: int
    start_mono_ns: int
    end_mono_ns: int
    start_unix_ns: int
    error: str | None
    method: str
    cpus: tuple[int, ...] | None
    descendants_killed: int | None = None


# ---------------------------------------------------------------------------------------------
# Request validation (shared by both methods)


def _rlimit_number(name: str) -> int:
    key = name.upper()
    if not key.startswith("RLIMIT_"):
        key = "RLIMIT_" + key
    number = getattr(resource, key, None)
    if not isinstance(number, int):
        known = sorted(n[7:] for n in dir(resource) if n.startswith("RLIMIT_"))
        raise UserError(f"unknown resource limit {name!r}; use one of {', '.join(known)}")
    return number


def _validate(request: SpawnRequest) -> None:
    if isinstance(request.argv, str) or len(request.argv) == 0:
        raise UserError("empty or non-list command; give the command as a list of arguments")
    for arg in request.argv:
        if b"\0" in os.fsencode(arg):
            raise UserError(f"command argument {arg!r} contains a NUL byte; remove it")
    if request.timeout_s is not None and not request.timeout_s > 0:
        raise UserError(f"timeout {request.timeout_s} s is not positive; give a positive timeout")
    if request.cpus is not None:
        if len(request.cpus) == 0 or any(int(c) < 0 for c in request.cpus):
            raise UserError(f"invalid CPU list {list(request.cpus)}; give CPU numbers >= 0")
    for name, value in request.rlimits.items():
        _rlimit_number(name)
        if int(value) < 0:
            raise UserError(f"resource limit {name}={value} is negative; give a value >= 0")


def _abs(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(path)


# ---------------------------------------------------------------------------------------------
# Exec helper method

_helper_path: str | None = None


def helper_path() -> str:
    """Path of the compiled exec helper (compiled once per source/compiler; cached per process).

    Raises UserError when no C compiler is installed.
    """
    global _helper_path
    if _helper_path is None:
        from benchlab.measure._build import build

        _helper_path = str(build(HELPER_SOURCE, flags=("-O2",), try_static=True))
    return _helper_path


def _helper_tokens(request: SpawnRequest) -> list[bytes]:
    """The request as the helper's option tokens: options, "--", argv (see exec_helper.c)."""
    args = ["-F"] if helper_uses_fork else []
    if request.cwd is not None:
        args += ["-d", request.cwd]
    for flag, path in (("-i", request.stdin_path), ("-o", request.stdout_path),
                       ("-e", request.stderr_path)):
        if path is not None:
            args += [flag, os.path.abspath(path)]
    if request.timeout_s is not None:
        args += ["-t", str(max(1, round(request.timeout_s * 1e9)))]
    if request.cpus is not None:
        args += ["-c", ",".join(str(int(c)) for c in request.cpus)]
    for procs in request.cgroup_procs:
        args += ["-g", procs]
    if request.cgroup_procs:
        homes = _home_cgroups(request.cgroup_procs)
        if homes is not None:
            for home in homes:
                args += ["-G", home]
    for name, value in request.rlimits.items():
        args += ["-l", f"{_rlimit_number(name)}:{int(value)}"]
    args.append("--")
    args += request.argv
    return [os.fsencode(arg) for arg in args]


def _home_cgroups(procs_paths: Sequence[str]) -> list[str] | None:
    """cgroup.procs files of this process's own cgroups in the hierarchies of ``procs_paths``.

    The exec helper (a child of this process, in the same cgroups) joins a run's cgroups before
    its clock starts and returns to these after it stops. None when they cannot be worked out;
    the target then joins by itself, inside the measured time, as before.
    """
    try:
        with open("/proc/self/mountinfo") as fh:
            mounts = []
            for line in fh:
                left, _, right = line.partition(" - ")
                fields, rfields = left.split(), right.split()
                if rfields and rfields[0] in ("cgroup", "cgroup2"):
                    options = set(rfields[2].split(",")) if len(rfields) > 2 else set()
                    mounts.append((fields[4], rfields[0], options, fields[3]))
        with open("/proc/self/cgroup") as fh:
            own = [line.rstrip("\n").split(":", 2) for line in fh if line.strip()]
    except OSError:
        return None
    homes = []
    for procs in procs_paths:
        best = None
        for mount_point, fstype, options, root in mounts:
            if procs.startswith(mount_point.rstrip("/") + "/"):
                if best is None or len(mount_point) > len(best[0]):
                    best = (mount_point, fstype, options, root)
        if best is None:
            return None
        mount_point, fstype, options, root = best
        rel = None
        for _hid, controllers, path in own:
            names = set(controllers.split(",")) if controllers else set()
            if fstype == "cgroup2" and controllers == "":
                rel = path
            elif fstype == "cgroup" and names and names <= options:
                rel = path
            if rel is not None:
                break
        if rel is None:
            return None
        if root != "/" and rel.startswith(root):
            rel = rel[len(root):] or "/"
        home = os.path.join(mount_point, rel.lstrip("/"), "cgroup.procs")
        if not os.path.exists(home):
            return None
        homes.append(home)
    return homes


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


def _kill_group(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _DeferredSigint:
    """Hold back Ctrl-C while a child is being created, so its pid is never lost.

    A KeyboardInterrupt raised inside ``posix_spawn``/``Popen`` (or right after it returned,
    before the pid was stored) would leave a running child nobody kills.  In the main thread
    (the only one Python delivers SIGINT to) a recording handler replaces the current one for
    the duration; ``raise_if_pending`` re-raises after the caller stored the pid.
    """

    def __init__(self) -> None:
        self.pending = False
        self._previous = None

    def _record(self, signum, frame) -> None:
        self.pending = True

    def __enter__(self) -> "_DeferredSigint":
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # a Python-level handler (default: raise KeyboardInterrupt)
                self._previous = previous
                signal.signal(signal.SIGINT, self._record)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def raise_if_pending(self) -> None:
        """Run the original SIGINT handler now if Ctrl-C arrived meanwhile (usually raises)."""
        if self.pending:
            self.pending = False
            if self._previous is not None:
                self._previous(signal.SIGINT, None)


class _HelperGone(Exception):
    """The helper had exited before it got the request (nothing ran); start a new one."""


def _high_fd(fd: int) -> int:
    """Move ``fd`` to a number >= 10 (close-on-exec), so dup2 onto 3 and 4 cannot collide."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class _HelperServer:
    """One long-lived exec helper process, used by one thread of one process.

    The first clone+exec+wait4 of a freshly exec'd process is measurably slower than later
    ones, and exec'ing the helper per run would double the harness's cost per run; so each
    thread keeps a helper and sends it one request per run.
    """

    def __init__(self, helper: str):
        self.helper = helper
        self.owner_pid = os.getpid()
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        req_r, res_w = _high_fd(req_r), _high_fd(res_w)
        actions = [
            (os.POSIX_SPAWN_DUP2, req_r, 3),
            (os.POSIX_SPAWN_DUP2, res_w, 4),
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ]
        try:
            with _DeferredSigint() as deferred:
                self.pid = os.posix_spawn(helper, [helper, "3", "4"], os.environ,
                                          file_actions=actions)
        except BaseException:
            for fd in (req_r, req_w, res_r, res_w):
                os.close(fd)
            raise
        os.close(req_r)
        os.close(res_w)
        self.request_fd = req_w
        self.result_fd = res_r
        self.closed = False
        if deferred.pending:
            self.abort()
            deferred.raise_if_pending()

    def run(self, tokens: list[bytes], env: Mapping[str, str] | None) -> dict[str, str]:
        """Send one request; block until its result line arrives; return its fields."""
        if env is None:
            # os.environ's underlying bytes dict: 20x cheaper than iterating os.environb.
            raw = getattr(os.environ, "_data", None)
            source = raw.items() if isinstance(raw, dict) else os.environb.items()
            env_items = [k + b"=" + v for k, v in source]
        else:
            env_items = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
        body = b"\0".join(tokens + env_items) + b"\0"
        message = memoryview(struct.pack("=III", len(tokens), len(env_items), len(body)) + body)
        try:
            while message:
                message = message[os.write(self.request_fd, message):]
        except BrokenPipeError:
            self.abort()
            raise _HelperGone from None
        except BaseException:
            self.abort()
            raise
        try:
            line = b""
            while not line.endswith(b"\n"):
                chunk = os.read(self.result_fd, 4096)
                if not chunk:
                    raise RuntimeError(self._death_message())
                line += chunk
        except BaseException:
            # Ctrl-C (or anything else) while the target runs: the target must not outlive
            # us.  Kill its group and the helper (which also kills the group on SIGTERM).
            self.abort()
            raise
        fields = {}
        for pair in line.decode(errors="replace").split():
            key, _, value = pair.partition("=")
            fields[key] = value
        return fields

    def _death_message(self) -> str:
        self.abort()
        return (f"exec helper {self.helper} exited unexpectedly (wait status "
                f"{getattr(self, 'exit_status', '?')}); this is a bug in benchlab")

    def abort(self) -> None:
        """Kill the running target's process group and the helper; reap the helper."""
        if self.closed:
            return
        self.closed = True
        try:
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            children = []
        for child in children:
            _kill_group(int(child))
            try:
                os.kill(int(child), signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        os.close(self.request_fd)
        os.close(self.result_fd)
        self.exit_status = _reap(self.pid)

    def close(self) -> None:
        """Let the helper finish (EOF on its request pipe) and reap it."""
        if self.closed:
            return
        self.closed = True
        os.close(self.request_fd)
        os.close(self.result_fd)
        if self.owner_pid == os.getpid():
            _reap(self.pid)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _reap(pid: int, grace_s: float = 2.0) -> int | None:
    """Wait up to ``grace_s`` seconds for ``pid`` to exit, then SIGKILL it; return its status."""
    deadline = time.monotonic() + grace_s
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return status
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.002)


_servers = threading.local()


def _server() -> _HelperServer:
    helper = helper_path()
    server = getattr(_servers, "server", None)
    if server is not None and (server.closed or server.helper != helper
                               or server.owner_pid != os.getpid()):
        server.close()  # after a fork(), only closes our copies of the pipes
        server = None
    if server is None:
        try:
            server = _HelperServer(helper)
        except FileNotFoundError:
            # The cached binary was removed (cache cleaned) since this process built it.
            global _helper_path
            from benchlab.measure._build import _build_cached

            _build_cached.cache_clear()
            _helper_path = None
            server = _HelperServer(helper_path())
        _servers.server = server
    return server


def _spawn_helper(request: SpawnRequest) -> RunMeasurement:
    tokens = _helper_tokens(request)
    server = _server()
    try:
        fields = server.run(tokens, request.env)
    except _HelperGone:
        server = _server()
        fields = server.run(tokens, request.env)
    if fields.get("status") == "interrupted":
        server.close()  # the helper was told to stop (SIGINT/SIGTERM) and is exiting
    if fields.get("stage") == "usage" or "status" not in fields:
        raise RuntimeError(f"exec helper rejected the request ({fields}); this is a bug in benchlab")
    return _measurement_from_fields(request, fields)


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


# ---------------------------------------------------------------------------------------------
# Pure-Python fallback


def _python_child_setup(request: SpawnRequest, report_fd: int):
    """preexec_fn for the fallback: cgroup join, affinity, rlimits, with precise failure notes."""
    cgroups = list(request.cgroup_procs)
    cpus = None if request.cpus is None else {int(c) for c in request.cpus}
    limits = [(name, _rlimit_number(name), int(v)) for name, v in request.rlimits.items()]

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


def _spawn_python(request: SpawnRequest) -> RunMeasurement:
    opened: list[int] = []
    report_r, report_w = os.pipe()
    try:
        def open_redirect(path: str | None, stage: str, flags: int) -> int | RunMeasurement:
            try:
                fd = os.open(_abs(path) or os.devnull, flags | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                return _python_error(f"cannot open {stage} file {path!r}: {exc.strerror}")
            opened.append(fd)
            return fd

        fds = []
        for path, stage, flags in (
            (request.stdin_path, "stdin", os.O_RDONLY),
            (request.stdout_path, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (request.stderr_path, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            fd = open_redirect(path, stage, flags)
            if isinstance(fd, RunMeasurement):
                return fd
            fds.append(fd)
        needs_setup = bool(request.cgroup_procs) or request.cpus is not None or bool(request.rlimits)
        env = None if request.env is None else dict(request.env)
        start_unix_ns = time.time_ns()
        start_ns = time.monotonic_ns()
        deferred = _DeferredSigint()
        try:
            with deferred:
                proc = subprocess.Popen(
                    list(request.argv),
                    cwd=request.cwd,
                    env=env,
                    stdin=fds[0],
                    stdout=fds[1],
                    stderr=fds[2],
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
            return _python_error(message, start_ns, start_unix_ns)
        except OSError as exc:
            deferred.raise_if_pending()
            if request.cwd is not None and exc.filename == request.cwd:
                message = f"cannot change directory to {request.cwd!r}: {exc.strerror}"
            else:
                message = f"exec failed: {exc.strerror} ({request.argv[0]!r})"
            return _python_error(message, start_ns, start_unix_ns)
        os.close(report_w)
        report_w = -1
        try:
            deferred.raise_if_pending()
            status, usage, timed_out, end_ns = _wait_python(proc.pid, request.timeout_s, start_ns)
        except BaseException:
            _kill_group(proc.pid)
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen never waits again
        descendants_killed = _kill_process_group_members(proc.pid)
        cpus = None
        if request.cpus is not None:
            note = os.read(report_r, 65536).decode(errors="replace")
            for line in note.splitlines():
                if line.startswith("cpus="):
                    cpus = tuple(int(c) for c in line[5:].split(","))
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


# ---------------------------------------------------------------------------------------------
# Entry point


def spawn_method(method: str | None = None) -> str:
    """Resolve the spawn method: "exec-helper" or "python".

    ``method`` (or ``$BENCHLAB_SPAWN`` when None) is "helper", "python" or "auto"; "auto" uses
    the exec helper when a C compiler is available and Python otherwise.  Raises UserError when
    "helper" is demanded but cannot be built.
    """
    choice = (method or os.environ.get(SPAWN_METHOD_ENV) or "auto").lower()
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
    _validate(request)
    if spawn_method(method) == "python":
        return _spawn_python(request)
    return _spawn_helper(request)
