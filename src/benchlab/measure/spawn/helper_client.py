"""The exec-helper client: one long-lived ``exec_helper`` process per harness thread.

The helper (``exec_helper.c``, compiled on first use) starts each target, waits for it, kills
every orphaned descendant it left (the helper is their subreaper) and reports one result line;
see the package docstring for why a C helper and why long-lived.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import atexit
import contextlib
import fcntl
import os
import struct
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from weakref import WeakSet

from benchlab.measure.spawn._cgroup_homes import home_cgroups
from benchlab.measure.spawn._process import (
    DeferredSigint,
    kill_group,
    reap_or_kill,
    thread_children,
)
from benchlab.measure.spawn.rusage import measurement_from_fields
from benchlab.measure.spawn.types import RunMeasurement, SpawnRequest, rlimit_number

HELPER_SOURCE = Path(__file__).resolve().parent.parent / "exec_helper.c"
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()

#: Start targets with fork() instead of clone(CLONE_VM|CLONE_VFORK) in the helper.  Same
#: results, ~0.2 ms more overhead per run; kept for comparison (``BENCHLAB_HELPER_FORK=1``).
helper_uses_fork = os.environ.get("BENCHLAB_HELPER_FORK") == "1"


_helper_path: str | None = None

#: Why the exec helper cannot be built here (the UserError's text), once a build was refused;
#: the fallback reads it to say, once per process, what runs spawned from Python cannot do.
unavailable_reason: str | None = None


def helper_path() -> str:
    """Path of the compiled exec helper (compiled once per source/compiler; cached per process).

    The first call compiles it into ``bin`` of the user's cache
    (:func:`benchlab.paths.user_cache_dir`) under a file lock (``benchlab.measure.build``); later
    calls cost one ``stat``.
    Raises UserError when no C compiler is installed.
    """
    global _helper_path, unavailable_reason
    if _helper_path is None:
        from benchlab.errors import UserError
        from benchlab.measure.build import build

        try:
            _helper_path = str(build(HELPER_SOURCE, flags=("-O2",), try_static=True))
        except UserError as exc:
            unavailable_reason = str(exc)
            raise
    return _helper_path


def _helper_tokens(request: SpawnRequest) -> list[bytes]:
    """The request as the helper's option tokens: options, "--", argv (see exec_helper.c)."""
    args = ["-F"] if helper_uses_fork else []
    if request.cwd is not None:
        args += ["-d", request.cwd]
    for flag, path in (("-i", request.stdin_path), ("-o", request.stdout_path),
                       ("-e", request.stderr_path)):
        if path is not None:  # the helper needs no normalised path, only an absolute one
            args += [flag, path if path[:1] == "/" else os.path.abspath(path)]
    if request.timeout_s is not None:
        args += ["-t", str(max(1, round(request.timeout_s * 1e9)))]
    if request.cpus is not None:
        args += ["-c", ",".join(str(int(c)) for c in request.cpus)]
    for procs in request.cgroup_procs:
        args += ["-g", procs]
    if request.cgroup_procs:
        homes = home_cgroups(request.cgroup_procs)
        if homes is not None:
            for home in homes:
                args += ["-G", home]
    for name, value in request.rlimits.items():
        args += ["-l", f"{rlimit_number(name)}:{int(value)}"]
    args.append("--")
    args += request.argv
    # str.encode as os.fsencode does it, without its Python frame per token (~7 a run)
    return [arg.encode(_FS_ENCODING, _FS_ERRORS) if type(arg) is str else os.fsencode(arg)
            for arg in args]


def _reply_fields(text: str) -> dict[str, str]:
    """The ``key=value`` fields of one result line of the helper (values never hold spaces)."""
    pairs = text.split()
    parts = text.replace("=", " ").split()
    if len(parts) == 2 * len(pairs):  # every pair has one '=' and a value: split in C
        return dict(zip(parts[0::2], parts[1::2]))
    fields = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        fields[key] = value
    return fields


class _HelperGone(Exception):
    """The helper had exited before it got the request (nothing ran); start a new one."""


def _high_fd(fd: int) -> int:
    """Move ``fd`` to a number >= 10 (close-on-exec), so dup2 onto 3 and 4 cannot collide."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


def _track(pid: int):
    """Put the helper in a tracking cgroup (see :mod:`benchlab.control.cgroups.tracking`).

    Then even if the harness and the helper are both killed with SIGKILL, what a run left behind
    is found and killed by the next start's sweep. None where cgroups cannot be used (not root,
    no freezer or pids hierarchy): the helper's subreaper still covers every other case.
    """
    if os.geteuid() != 0:
        return None
    from benchlab.control.cgroups.tracking import track_process

    return track_process(pid)


def _tracked_spawns():  # what this thread starts is born tracked (None: not possible)
    if os.geteuid() != 0:
        return contextlib.nullcontext()
    from benchlab.control.cgroups.tracking import tracked_spawns
    return tracked_spawns()


class _HelperServer:
    """One long-lived exec helper process, used by one thread of one process.

    The first clone+exec+wait4 of a freshly exec'd process is measurably slower than later
    ones, and exec'ing the helper per run would double the harness's cost per run; so each
    thread keeps a helper and sends it one request per run.

    The helper is born in its tracking cgroup (``tracked_spawns``); where it cannot be, moving
    it in waits 7-15 ms in the kernel (an RCU grace period), so a thread does that while the
    set-up goes on, and the first request waits for it (no target may start outside the leaf).
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
            with DeferredSigint() as deferred, _tracked_spawns() as leaf:
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
        self._last_tokens: list[bytes] | None = None
        self._last_env: Mapping | None = None
        self._last_message = b""
        self.tracking, self._tracking_done = leaf, threading.Event()
        if leaf is not None:  # born tracked; else a thread moves it in
            self._tracking_done.set()
        else:
            threading.Thread(target=self._track_in_background, name="benchlab-helper-tracking",
                             daemon=True).start()
        _live_servers.add(self)
        if deferred.pending:
            self.abort()
            deferred.raise_if_pending()

    def _track_in_background(self) -> None:
        # the tracker thread's whole work; any error leaves the helper untracked, as before
        try:
            self.tracking = _track(self.pid)
        except Exception:
            self.tracking = None
        finally:
            self._tracking_done.set()

    def _tracked(self) -> None:
        """Wait until the helper is in its tracking cgroup (or known not to be).

        On an Event, never ``Thread.join``, and again after an interrupted wait: a Ctrl-C or
        SIGTERM in this wait (the first run's) once left ``abort`` reaping the helper while
        the tracker still moved its pid into a cgroup (by then maybe another process's) and
        set ``tracking`` after ``_untrack`` had looked (a cgroup left behind). In a forked
        child the tracker thread does not exist: nothing to wait for.
        """
        if self.owner_pid != os.getpid():
            return
        while not self._tracking_done.wait(0.1):
            pass

    def _message(self, tokens: list[bytes], env: Mapping[str, str] | None) -> bytes:
        """The request's bytes: header, tokens, environment (``exec_helper.c``'s format).

        A session sends the same request run after run, so the last one is kept and sent again
        while its tokens and the environment (``env``, or this process's when None) compare
        equal: a comparison of the environment's dict instead of encoding and joining it.
        """
        if env is None:
            # os.environ's underlying bytes dict: 20x cheaper than iterating os.environb.
            raw = getattr(os.environ, "_data", None)
            source = raw if isinstance(raw, dict) else dict(os.environb)
        else:
            source = env
        if tokens == self._last_tokens and source == self._last_env:
            return self._last_message
        if env is None:
            env_items = [k + b"=" + v for k, v in source.items()]
        else:
            env_items = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
        body = b"\0".join(tokens + env_items) + b"\0"
        message = struct.pack("=III", len(tokens), len(env_items), len(body)) + body
        # a copy: os.environ's dict changes in place
        self._last_tokens, self._last_env, self._last_message = tokens, dict(source), message
        return message

    def run(self, tokens: list[bytes], env: Mapping[str, str] | None) -> dict[str, str]:
        """Send one request; block until its result line arrives; return its fields."""
        message = self._message(tokens, env)
        if not self._tracking_done.is_set():
            self._tracked()
        try:
            sent = os.write(self.request_fd, message)
            if sent < len(message):  # a request larger than the pipe holds
                rest = memoryview(message)[sent:]
                while rest:
                    rest = rest[os.write(self.request_fd, rest):]
        except BrokenPipeError:
            self.abort()
            raise _HelperGone from None
        except BaseException:
            self.abort()
            raise
        try:
            line = os.read(self.result_fd, 4096)  # the whole line, but for a slow writer
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
        return _reply_fields(line.decode(errors="replace"))

    def _death_message(self) -> str:
        self.abort()
        return (f"exec helper {self.helper} exited unexpectedly (wait status "
                f"{getattr(self, 'exit_status', '?')}); this is a bug in benchlab")

    def abort(self) -> None:
        """Kill the running target's process group and the helper; reap the helper."""
        if self.closed:
            return
        self.closed = True
        self._tracked()
        for child in thread_children(self.pid, pid=self.pid):
            kill_group(child)
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        os.close(self.request_fd)
        os.close(self.result_fd)
        self.exit_status = reap_or_kill(self.pid)
        self._untrack()

    def _untrack(self) -> None:
        tracking, self.tracking = getattr(self, "tracking", None), None
        if tracking is not None:
            tracking.remove()

    def close(self) -> None:
        """Let the helper finish (EOF on its request pipe) and reap it."""
        if self.closed:
            return
        self.closed = True
        os.close(self.request_fd)
        os.close(self.result_fd)
        if self.owner_pid == os.getpid():
            self._tracked()
            reap_or_kill(self.pid)
            self._untrack()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


servers = threading.local()
#: Every helper this process started and has not closed (any thread's).
_live_servers: WeakSet = WeakSet()


def close_helpers() -> None:
    """Let every exec helper of this process finish and reap it (registered with atexit).

    The helpers end on EOF and leave their tracking cgroups empty, so removing those is one
    rmdir each; left to the cgroup registry's own atexit handler, each helper would be killed
    and waited for in 5 ms polls. Registered after the registry's handler, so it runs first.
    """
    for server in list(_live_servers):
        if server.owner_pid == os.getpid():
            server.close()


def _close_at_exit() -> None:
    if getattr(_close_at_exit, "done", False):
        return
    _close_at_exit.done = True  # type: ignore[attr-defined]
    if os.geteuid() == 0:
        # atexit runs last-registered first: the registry's handler must be registered before
        from benchlab.control.cgroups import registry  # noqa: F401
    atexit.register(close_helpers)


def thread_helper() -> _HelperServer:
    """This thread's exec helper, started (or started again after a fork or a removed binary) when needed."""
    helper = helper_path()
    server = getattr(servers, "server", None)
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
            from benchlab.measure.build import build_cached

            build_cached.cache_clear()
            _helper_path = None
            server = _HelperServer(helper_path())
        servers.server = server
        _close_at_exit()
    return server


def spawn_with_helper(request: SpawnRequest) -> RunMeasurement:
    """Run ``request`` through this thread's exec helper (started on first use): times in ns,
    memory in KiB, as :func:`benchlab.measure.spawn.spawn` returns them."""
    tokens = _helper_tokens(request)
    server = thread_helper()
    try:
        fields = server.run(tokens, request.env)
    except _HelperGone:
        server = thread_helper()
        fields = server.run(tokens, request.env)
    if fields.get("status") == "interrupted":
        server.close()  # the helper was told to stop (SIGINT/SIGTERM) and is exiting
    if fields.get("stage") == "usage" or "status" not in fields:
        raise RuntimeError(f"exec helper rejected the request ({fields}); this is a bug in benchlab")
    return measurement_from_fields(request, fields)
