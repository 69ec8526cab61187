"""Shared by every reader: the unknown marker, small /proc and /sys reads, and short probes.

Every leaf the readers return is either a plain value or ``{"unknown": "<reason>"}``: a field this
machine does not expose is never guessed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchlab.digests import sha256_hex
from benchlab.paths import user_cache_dir

if TYPE_CHECKING:
    import subprocess

SUBPROCESS_TIMEOUT_S = 1.0


# --------------------------------------------------------------------------------------------
# Unknown values


def unknown(reason: str) -> dict[str, str]:
    """Return the marker for a field that could not be determined, with the reason."""
    return {"unknown": reason}


def is_unknown(value: Any) -> bool:
    """Tell whether ``value`` is an unknown marker produced by :func:`unknown`."""
    return isinstance(value, dict) and len(value) == 1 and "unknown" in value


def utc_now_iso() -> str:
    """Current UTC time as ISO 8601 with microseconds and a trailing ``Z``."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")


def iso_from_epoch(epoch_s: float) -> str:
    moment = _dt.datetime.fromtimestamp(epoch_s, _dt.timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


#: The files read since the outermost :func:`reading_once` began (path -> what
#: :func:`read_text` returned; "\0"-prefixed keys: :func:`once`'s answers); None outside one.
_READ_ONCE: dict[str, Any] | None = None


@contextlib.contextmanager
def reading_once() -> Iterator[None]:
    """Within it, :func:`read_text` reads each file once and gives the same answer after.

    A session's start reads ~20 files twice within milliseconds (the system checks, then the
    environment probe: cpuinfo, meminfo, the SMT, boost, THP and clocksource settings...);
    inside this, the checks and the probe see one reading. Not for code that reads a file twice
    to see it change (a counter's delta)."""
    global _READ_ONCE
    if _READ_ONCE is not None:
        yield
        return
    _READ_ONCE = {}
    try:
        yield
    finally:
        _READ_ONCE = None


def once(key: str, compute: Callable[[], Any]) -> Any:
    """``compute()``; inside :func:`reading_once`, the first answer again for the same ``key``
    (what the checks and the probe both derive from the machine: a program found on PATH, a
    directory listed, a per-boot key)."""
    memo = _READ_ONCE
    if memo is None:
        return compute()
    key = "\0" + key  # never a path
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def which(program: str) -> str | None:
    """:func:`shutil.which` of ``program`` (once inside :func:`reading_once`)."""
    import shutil

    return once(f"which {program}", lambda: shutil.which(program))


def read_text(path: str | Path) -> str | dict[str, str]:
    """Read a small /proc or /sys file, stripped; an unknown marker naming why it failed.
    Inside :func:`reading_once`, a file already read gives its first answer again."""
    once = _READ_ONCE
    if once is None:
        return _read_file(path)
    key = os.fspath(path)
    found = once.get(key)
    if found is None:
        found = once[key] = _read_file(key)
    return found


def _read_file(path: str | Path) -> str | dict[str, str]:
    try:  # open(), not Path.read_text: ~50 files a session, pathlib's parsing was a third
        with open(path, errors="replace") as fh:
            return fh.read().strip()
    except FileNotFoundError:
        return unknown(f"{path} does not exist")
    except PermissionError:
        return unknown(f"{path} is not readable (permission denied)")
    except OSError as exc:
        return unknown(f"{path} could not be read: {exc.strerror or exc}")


def read_int(path: str | Path) -> int | dict[str, str]:
    text = read_text(path)
    if is_unknown(text):
        return text
    try:
        return int(text)
    except ValueError:
        return unknown(f"{path} holds {text!r}, not an integer")


def bracketed_choice(text: str) -> str:
    """``"always [madvise] never"`` -> ``"madvise"`` (the sysfs way of showing the active one)."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


# --------------------------------------------------------------------------------------------
# Concurrent short subprocesses


class Probe:
    """A short external command started now and read later, so several run concurrently.

    ``per_boot=True`` is for commands whose answer cannot change until the machine reboots or
    the process moves to other namespaces (``systemd-detect-virt``): the answer is remembered in
    this process and in ``probes`` of the user's cache (``benchlab.paths``; keyed by the boot
    id, the pid and mount namespaces and the argv), so a session does not fork for it again
    (each fork of the harness costs milliseconds of ``benchlab run``'s start-up).
    """

    _remembered: dict[str, tuple[int, str, str]] = {}

    def __init__(self, argv: Sequence[str], cwd: str | None = None,
                 env: Mapping[str, str] | None = None, *, per_boot: bool = False):
        self.argv = list(argv)
        self.proc: subprocess.Popen[str] | None = None
        self.error: str | None = None
        self.known: tuple[int, str, str] | None = None
        self.cache_key = _per_boot_key(self.argv) if per_boot else None
        if self.cache_key is not None:
            self.known = Probe._remembered.get(self.cache_key)
            if self.known is None:
                self.known = _read_cached(self.cache_key)
                if self.known is not None:  # the checks and the probe both ask, once a session
                    Probe._remembered[self.cache_key] = self.known
            if self.known is not None:
                return
        import shutil
        import subprocess  # here: compare and show read environments, they run no probe

        exe = shutil.which(self.argv[0])
        if exe is None:
            self.error = f"{self.argv[0]} is not installed"
            return
        try:
            self.proc = subprocess.Popen(
                [exe, *self.argv[1:]], cwd=cwd, env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
        except OSError as exc:
            self.error = f"could not run {self.argv[0]}: {exc.strerror or exc}"

    @classmethod
    def finished(cls, argv: Sequence[str], returncode: int, stdout: str, stderr: str) -> "Probe":
        """A probe whose answer is already known without running it (see
        :func:`outside_git_work_tree`)."""
        probe = cls.__new__(cls)
        probe.argv, probe.proc, probe.error = list(argv), None, None
        probe.cache_key, probe.known = None, (returncode, stdout, stderr)
        return probe

    def result(self, deadline: float) -> tuple[int, str, str] | str:
        """(returncode, stdout, stderr), or a reason string when it could not run in time."""
        if self.known is not None:
            return self.known
        if self.proc is None:
            return self.error or "not started"
        import subprocess

        try:
            out, err = self.proc.communicate(timeout=max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return f"{' '.join(self.argv)} did not finish within {SUBPROCESS_TIMEOUT_S:g} s"
        self.known = (self.proc.returncode, out, err)
        if self.cache_key is not None and out.strip():  # an answer, not a failure to answer
            Probe._remembered[self.cache_key] = self.known
            _write_cached(self.cache_key, self.known)
        return self.known


def _probe_cache_dir() -> Path:
    return user_cache_dir() / "probes"


def _per_boot_key(argv: Sequence[str]) -> str | None:
    """A key naming this boot, this process's pid and mount namespaces and ``argv``; None when
    the boot id cannot be read (then nothing is remembered)."""
    parts = once("boot and namespaces", _boot_and_namespaces)
    return None if parts is None else sha256_hex("\0".join(parts + list(argv)).encode())[:24]


def _boot_and_namespaces() -> list[str] | None:
    boot_id = read_text("/proc/sys/kernel/random/boot_id")
    if is_unknown(boot_id):
        return None
    try:
        return [boot_id] + [os.readlink(f"/proc/self/ns/{ns}") for ns in ("pid", "mnt")]
    except OSError:
        return None


def _read_cached(key: str) -> tuple[int, str, str] | None:
    try:
        code, out, err = json.loads((_probe_cache_dir() / f"{key}.json").read_text())
        return int(code), str(out), str(err)
    except (OSError, ValueError, TypeError):
        return None


def _write_cached(key: str, value: tuple[int, str, str]) -> None:
    directory = _probe_cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{key}.{os.getpid()}"
        tmp.write_text(json.dumps(list(value)))
        os.replace(tmp, directory / f"{key}.json")  # readers see the old answer or the new one
    except OSError:
        pass  # an unwritable cache only costs the fork next time


def outside_git_work_tree(cwd: str) -> bool:
    """True when no ``.git`` exists in ``cwd`` or any parent and git's location variables are
    unset: ``git rev-parse`` would only say "not a git repository", so it need not be run."""
    if any(os.environ.get(name) for name in ("GIT_DIR", "GIT_WORK_TREE")):
        return False
    path = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


NOT_A_REPOSITORY = "fatal: not a git repository (or any of the parent directories): .git"
