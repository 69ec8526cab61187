"""A fork server for the bad-input corpus: the console script's own code in a real process per
case, without paying the interpreter's start-up and benchlab's imports each time.

Each corpus case used to start ``.venv/bin/benchlab`` afresh, and ~0.1 s of CPU of each went to
starting Python and importing Click and the command's modules, not to the refusal under test.
Here one server process (``python forkserver.py``, started once per pytest worker) imports
``benchlab.cli.main`` and every command module listed in ``COMMANDS``, then forks one child per
case. The child makes itself what a fresh ``Popen([benchlab, ...], start_new_session=True)``
would be: its own session, the case's fds 0/1/2 (real pipes made by the test), current
directory, environment and ``sys.argv``; then it runs the console script file itself
(``runpy.run_path(benchlab, run_name="__main__")``), and the interpreter ends it as it ends the
console script (``SystemExit`` -> exit status, an uncaught exception -> traceback and 1, atexit
handlers, stdio flushed; ``run``/``show``/``compare``/``list`` take their own ``os._exit``).
One thing is skipped: the teardown of the interpreter's modules after atexit (:func:`_exit`).

What a child cannot get from a fork, and how that is handled:

- Environment read while importing: the server records every ``os.environ`` key looked up while
  it imports (``import_reads`` in its hello message). :func:`differs_at_start` tells the harness
  when a case's environment differs from the server's in one of those keys, or in what the
  interpreter itself reads at start (``PYTHON*``, ``LC_*``, ``LANG``); such a case runs the real
  console script instead. (The corpus varies only ``COLUMNS``, ``TMPDIR`` and ``BENCHLAB_DB``.)
- ``tempfile.tempdir`` (the cached ``$TMPDIR``) is reset in each child; ``random`` re-seeds
  itself after a fork; the server starts no thread (it refuses to run if an import did).
- Caches filled on first use (the exec helper's path, compiler identity, stress-ng's version,
  open stores, the cgroup and helper registries) are empty in the server, which only imports:
  every child fills its own, as a fresh process does.

The corpus still runs a fixed, spread sample of its cases through the real console script, and
runs each of those forked too: both outcomes must agree (tests/badinput/test_corpus.py);
tests/badinput/test_forkserver.py checks a child's state directly. tests/cli/forked.py runs the
CLI tests' ``run_cli`` through the same server.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time

#: The largest request (argv, cwd, environment as JSON) one datagram carries.
MAX_REQUEST = 200_000


def differs_at_start(env: dict[str, str], server_env: dict[str, str],
                     import_reads: list[str]) -> list[str]:
    """The keys in which ``env`` differs from the server's environment that a fresh process
    would have read before the command ran (imports, interpreter start); empty: a fork is
    equivalent."""
    keys = set(env) | set(server_env)
    read_early = {k for k in keys if k.startswith(("PYTHON", "LC_")) or k == "LANG"}
    return sorted(k for k in read_early | set(import_reads) if env.get(k) != server_env.get(k))


class RequestTooLarge(ValueError):
    """A command line and environment too large for one request: run the console script."""


class ForkServer:
    """The test side: starts the server, asks it to run one case at a time."""

    def __init__(self, benchlab: str) -> None:
        self.benchlab = benchlab
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, benchlab, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        theirs.close()
        self.sock = ours
        hello = self.sock.recv(MAX_REQUEST)
        if not hello:
            self.proc.wait(timeout=30)
            raise RuntimeError(f"the fork server did not start:\n{self.proc.stderr.read()[-3000:]}")
        self.import_reads: list[str] = json.loads(hello)["import_reads"]

    def close(self) -> None:
        """End the server (it exits on EOF) and reap it."""
        self.sock.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self.proc.stderr.close()

    def run(self, argv: list[str], cwd: str, env: dict[str, str],
            timeout: float) -> subprocess.CompletedProcess:
        """``benchlab *argv`` in a forked child; the same result as ``run_case`` gives for the
        console script: its status (negative: killed by that signal), stdout and stderr as
        text with universal newlines, invalid bytes replaced; ``timed_out`` says whether the
        case's process group was killed after ``timeout`` seconds."""
        request = json.dumps({"argv": argv, "cwd": cwd, "env": env}).encode()
        if len(request) > MAX_REQUEST:
            raise RequestTooLarge(f"request of {len(request)} bytes: run the console script")
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            socket.send_fds(self.sock, [request], [0, out_w, err_w])
        finally:
            os.close(out_w)
            os.close(err_w)
        pid = int(self.sock.recv(64))
        out, err, timed_out = _read_until_eof(out_r, err_r, pid, timeout)
        status = int(self.sock.recv(64))
        text = [_text(b) for b in (out, err)]
        if timed_out:
            text[1] += f"\n[badinput] still running after {timeout:.0f} s: killed"
        proc = subprocess.CompletedProcess(argv, os.waitstatus_to_exitcode(status), *text)
        proc.timed_out = timed_out  # type: ignore[attr-defined]
        return proc


def _text(data: bytes) -> str:
    # What Popen(text=True, errors="replace").communicate() makes of the bytes.
    import locale

    text = data.decode(locale.getpreferredencoding(False), "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_until_eof(out_r: int, err_r: int, pid: int,
                    timeout: float) -> tuple[bytes, bytes, bool]:
    """Both pipes read to EOF (every writer gone, the case's own children too); on timeout the
    case's whole process group is killed, as ``run_case`` does, and the reading goes on."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    deadline = time.monotonic() + timeout
    timed_out = False
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0 and not timed_out:
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for key, _ in sel.select(None if timed_out else max(left, 0.0)):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), timed_out


# --------------------------------------------------------------------------- the server side


def _import_commands() -> list[str]:
    """Import the console script's modules and every command's; the environment keys read."""
    reads: set[str] = set()
    environ_class = type(os.environ)
    plain_getitem = environ_class.__getitem__

    def recording_getitem(self, key):
        reads.add(key)
        return plain_getitem(self, key)

    environ_class.__getitem__ = recording_getitem  # get(), `in` and [] all come through here
    try:
        import importlib

        import click  # noqa: F401

        from benchlab.cli import main

        for module, _ in main.COMMANDS.values():
            importlib.import_module(f"benchlab.cli.{module}")
    finally:
        environ_class.__getitem__ = plain_getitem
    return sorted(reads)


def _child(sock: socket.socket, request: dict, fds: list[int]) -> None:
    """Become the process ``Popen([benchlab, *argv], start_new_session=True)`` would start."""
    import random  # noqa: F401 - re-seeds itself after fork (os.register_at_fork)
    import tempfile

    os.setsid()
    sock.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # tempfile caches $TMPDIR on first use
    sys.argv = [request["benchlab"], *request["argv"]]


def serve(sock: socket.socket, benchlab: str) -> bool:
    """Answer requests until EOF; True in a forked child (which then runs the case)."""
    import threading

    reads = _import_commands()
    if threading.active_count() != 1:
        raise RuntimeError("an import started a thread: a fork would not carry it")
    import gc

    gc.collect()
    gc.freeze()  # the children share the imported modules' pages instead of copying them
    sock.send(json.dumps({"import_reads": reads}).encode())
    while True:
        data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 3)
        if not data:
            return False
        request = dict(json.loads(data), benchlab=benchlab)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(sock, request, fds)
            return True
        for fd in fds:
            os.close(fd)
        sock.send(str(pid).encode())
        _, status = os.waitpid(pid, 0)
        sock.send(str(status).encode())


def _exit(status: int) -> None:
    """End the case's process as the interpreter would end it with ``status``, up to and
    including its atexit handlers and stdio flush, and then ``os._exit``: the interpreter's
    teardown of the server's ~450 modules touched every page the child shares with the server
    (~50 ms of CPU a case; a fresh process tears down only its own modules, ~12 ms). What that
    teardown would finalise of the case's own doing is collected first: objects made by the
    case are in the collector's young generations (the imports are frozen), so their cycles
    and finalizers run here. With another thread alive, or an unflushable stdout (exit 120 and
    a message), it returns, and the interpreter's own exit does it all."""
    import atexit
    import gc
    import threading

    if threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    gc.collect(1)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(status)


def _run_case() -> None:
    """In a forked child: the console script as ``__main__``; how it exits, as Python exits."""
    import runpy

    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
        status = None
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise  # printed and exit 1 by the interpreter itself
        status = exc.code
    _exit(0 if status is None else status & 0xFF)
    sys.exit(status)


if __name__ == "__main__":
    _benchlab, _fd = sys.argv[1], int(sys.argv[2])
    # The console script's own sys.path: its directory first, not this file's.
    sys.path[0] = os.path.dirname(_benchlab)
    if serve(socket.socket(fileno=_fd), _benchlab):
        del _benchlab, _fd
        _run_case()
