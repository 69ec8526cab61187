"""Shared by the cgroup modules: names, constants and the small filesystem operations.

``make_dir`` and ``remove_dir`` are looked up through this module at call time, so tests
can stand in a fake cgroupfs for layouts this machine does not have.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import errno
import os
import time
from pathlib import Path

from benchlab.lazy import lazy_pattern  # run's path matches no leaf or session name

UNCONSTRAINED_HINT = (
    "run as root or pass --allow-unconstrained to run without limits (stored as unconstrained)"
)
DEFAULT_PARENT = "benchlab"
DEFAULT_CPU_PERIOD_US = 100_000
LEAF_NAME = lazy_pattern(r"^(?P<session>[A-Za-z0-9_.-]+)-(?P<pid>\d+)-(?P<n>\d+)$")
SESSION_NAME = lazy_pattern(r"^[A-Za-z0-9_.-]{1,64}$")
# Controllers a run joins when they exist, for accounting even without limits.
ACCOUNTING_CONTROLLERS = ("cpu", "cpuacct", "memory")
V2_CONTROLLERS = ("cpu", "memory", "cpuset")


def read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def read_int(path: Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def read_keyed(path: Path) -> dict[str, int] | None:
    text = read_text(path)
    if text is None:
        return None
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                values[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return values


def os_reason(err: OSError) -> str:
    if err.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if err.errno == errno.EROFS:
        return "read-only file system"
    return err.strerror or str(err)


def write(path: Path, value: str) -> None:
    # One write() per value: cgroup files parse each write as one command. No O_CREAT: on
    # cgroupfs that turns a missing interface file into a misleading EACCES.
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def make_dir(path: Path) -> None:
    """mkdir a cgroup directory (the kernel populates its interface files)."""
    os.mkdir(path)


def subtree_control(cgroup: Path) -> set[str]:
    # The kernel lists enabled controllers bare ("cpu memory"); accept "+cpu" as written.
    return {token.lstrip("+") for token in (read_text(cgroup / "cgroup.subtree_control") or "").split()}


def remove_dir(path: Path) -> None:
    """rmdir a cgroup directory (its interface files go with it on a real cgroupfs)."""
    os.rmdir(path)


def procs(cgroup: Path) -> list[int]:
    text = read_text(cgroup / "cgroup.procs")
    if not text:
        return []
    return [int(pid) for pid in text.split()]


def kill_members(cgroup: Path, timeout_s: float = 2.0, poll_s: float = 0.005) -> set[int]:
    """SIGKILL every task in ``cgroup`` (never this process) until it is empty; the pids killed.

    Repeated, because a task may fork between reading ``cgroup.procs`` and the kill (the child
    is born in the same cgroup and is seen in the next round), and a killed task leaves
    ``cgroup.procs`` only once it has died. Gives up after ``timeout_s`` seconds. The one
    implementation behind the stale-cgroup sweep, the exec helper's tracking leaf and the Python
    fallback's run cgroups.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + timeout_s
    me = os.getpid()
    while time.monotonic() < deadline:
        members = [pid for pid in procs(cgroup) if pid != me]
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(poll_s)
    return killed


def cpuset_value(cgroup: Path, key: str) -> str:
    """Effective cpuset.cpus/cpuset.mems of a cgroup (v1 or v2 file names); "" when empty.

    Falling back to the hierarchy root covers a parent that another benchlab has just
    re-created and not filled in yet.
    """
    kind = key.split(".")[1]  # "cpus" or "mems"
    for name in (f"cpuset.effective_{kind}", f"cpuset.{kind}.effective", key):
        text = (read_text(cgroup / name) or "").strip()
        if text:
            return text
    return ""


def remove_empty_parent(parent: Path) -> None:
    try:
        remove_dir(parent)
    except OSError:
        pass  # still used by another run (EBUSY/ENOTEMPTY) or already gone
