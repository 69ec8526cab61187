"""What one run is asked to do (:class:`SpawnRequest`) and what it did (:class:`RunMeasurement`),
and the checks every request passes before either spawn method sees it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import field

from benchlab.errors import UserError
from benchlab.records import record

#: Values of ``RunMeasurement.status``.
STATUSES = ("ok", "failed", "signaled", "timeout", "error")

#: Environment variable choosing the spawn method: "helper", "python" or "auto" (default).
SPAWN_METHOD_ENV = "BENCHLAB_SPAWN"


#: The default of a field made by ``field(default_factory=dict)`` in a written-out __init__:
#: a new dict for each instance.
_NEW_DICT: dict = {}


@record(frozen=True)
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

    def __init__(self, argv: Sequence[str], cwd: str | None = None,
                 env: Mapping[str, str] | None = None, stdin_path: str | None = None,
                 stdout_path: str | None = None, stderr_path: str | None = None,
                 timeout_s: float | None = None, cpus: Sequence[int] | None = None,
                 cgroup_procs: Sequence[str] = (), rlimits: Mapping[str, int] = _NEW_DICT
                 ) -> None:
        # written out (frozen: straight into __dict__, as @dataclass's own does): one is made
        # per run, and the generic record __init__ costs ~3 us
        self.__dict__.update({
            "argv": argv, "cwd": cwd, "env": env, "stdin_path": stdin_path,
            "stdout_path": stdout_path, "stderr_path": stderr_path, "timeout_s": timeout_s,
            "cpus": cpus, "cgroup_procs": cgroup_procs,
            "rlimits": {} if rlimits is _NEW_DICT else rlimits})


@record(frozen=True)
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
        them all; the Python fallback searches the target's process group and its cgroups (a
        ``setsid`` descendant of a run without cgroups escapes it).
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

    def __init__(self, status: str, exit_code: int | None, signal: int | None, wall_ns: int,
                 user_ns: int, sys_ns: int, max_rss_kib: int, minflt: int, majflt: int,
                 nvcsw: int, nivcsw: int, start_mono_ns: int, end_mono_ns: int,
                 start_unix_ns: int, error: str | None, method: str,
                 cpus: tuple[int, ...] | None, descendants_killed: int | None = None) -> None:
        # written out (frozen: straight into __dict__, as @dataclass's own does): one is made
        # per run, and the generic record __init__ costs ~3 us
        self.__dict__.update({
            "status": status, "exit_code": exit_code, "signal": signal, "wall_ns": wall_ns,
            "user_ns": user_ns, "sys_ns": sys_ns, "max_rss_kib": max_rss_kib,
            "minflt": minflt, "majflt": majflt, "nvcsw": nvcsw, "nivcsw": nivcsw,
            "start_mono_ns": start_mono_ns, "end_mono_ns": end_mono_ns,
            "start_unix_ns": start_unix_ns, "error": error, "method": method, "cpus": cpus,
            "descendants_killed": descendants_killed})


# ---------------------------------------------------------------------------------------------
# Request validation (shared by both methods)


def rlimit_number(name: str) -> int:
    """The ``resource`` module's number of limit ``name`` (``nofile`` or ``RLIMIT_NOFILE``);
    UserError naming the known limits when there is none."""
    import resource  # only for --rlimit: a C extension run need not load

    key = name.upper()
    if not key.startswith("RLIMIT_"):
        key = "RLIMIT_" + key
    number = getattr(resource, key, None)
    if not isinstance(number, int):
        known = sorted(n[7:] for n in dir(resource) if n.startswith("RLIMIT_"))
        raise UserError(f"unknown resource limit {name!r}; use one of {', '.join(known)}")
    return number


def validate_request(request: SpawnRequest) -> None:
    """UserError when ``request`` cannot be run: an empty command, a NUL byte in an argument,
    a timeout (s) that is not positive, a bad CPU list or resource limit."""
    if isinstance(request.argv, str) or len(request.argv) == 0:
        raise UserError("empty or non-list command; give the command as a list of arguments")
    for arg in request.argv:  # a str holds NUL exactly when its file-system bytes do
        if ("\0" in arg) if type(arg) is str else (b"\0" in os.fsencode(arg)):
            raise UserError(f"command argument {arg!r} contains a NUL byte; remove it")
    if request.timeout_s is not None and not request.timeout_s > 0:
        raise UserError(f"timeout {request.timeout_s} s is not positive; give a positive timeout")
    if request.cpus is not None:
        if len(request.cpus) == 0 or any(int(c) < 0 for c in request.cpus):
            raise UserError(f"invalid CPU list {list(request.cpus)}; give CPU numbers >= 0")
    for name, value in request.rlimits.items():
        rlimit_number(name)
        if int(value) < 0:
            raise UserError(f"resource limit {name}={value} is negative; give a value >= 0")


def absolute_or_none(path: str | None) -> str | None:
    """``path`` made absolute against the current directory, or None."""
    return None if path is None else os.path.abspath(path)
