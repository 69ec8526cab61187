"""The container engine's own view of a run's CPU time, from a cgroup parent per worker.

The harness times the engine's client (``podman run`` / ``podman exec``): the container's
processes are not its children, so its rusage holds the client's CPU time, not the program's.
With the ``cgroupfs`` cgroup manager, each worker's containers are created under a parent cgroup
``benchlab-containers/<pid>-w<worker>`` (``--cgroup-parent``). CPU time is charged to every
ancestor of the cgroup that used it, and stays there after the container's own cgroup is removed
(``run --rm``), so the parent's counter before and after a run, minus what the engine's monitor
(``conmon``, in a sub-cgroup ``conmon``) used meanwhile, is the CPU time of the container: the
program and the runtime's start-up inside it.

After a run the harness killed in a worker's long-lived container (``exec`` model), every
process of that container but its init is SIGKILLed from the host through the container's own
cgroup, frozen while its members are listed and killed (:func:`kill_exec_programs`): nothing in
the image is needed.

This process removes its parents at exit; the next start removes those of owners that are gone
(``kill -9``). With the ``systemd`` cgroup manager (a parent must then be a slice) there is no
such view; :func:`cgroup_parent` says so by returning None.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from benchlab.control.cgroups import detect_layout

PARENT = "benchlab-containers"


def _roots() -> list[Path]:
    """Every cgroup hierarchy's mount point, named ones (``name=systemd``) too: the engine
    creates a parent in each."""
    layout = detect_layout()
    mounts = {str(m.path) for m in layout.v1.values()}
    if layout.unified is not None:
        mounts.add(str(layout.unified.path))
    seen: set[str] = set()  # one mount per hierarchy (a bind mount elsewhere is the same one)
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                head, sep, tail = line.partition(" - ")
                fields = head.split()
                if sep and tail.split()[0] in ("cgroup", "cgroup2") and fields[2] not in seen:
                    seen.add(fields[2])
                    if fields[4] not in mounts and fields[3] == "/":
                        mounts.add(fields[4])
    except OSError:
        pass
    return sorted(Path(p) for p in mounts)


def _cpu_root() -> tuple[Path, str] | None:
    """(root, counter file) of the hierarchy that counts CPU time: v1 cpuacct, else cgroup2."""
    layout = detect_layout()
    if "cpuacct" in layout.v1:
        return Path(layout.v1["cpuacct"].path), "cpuacct.usage"
    if layout.unified is not None:
        return Path(layout.unified.path), "cpu.stat"
    return None


def cgroup_parent(worker: int) -> str:
    """The ``--cgroup-parent`` of worker ``worker``'s containers (cgroupfs manager). The
    containers' owner removes the parents after the containers
    (:func:`benchlab.control.containers.remove_own_containers`)."""
    return f"/{PARENT}/{os.getpid()}-w{worker}"


def cpu_ns(worker: int, monitor: str | None = None) -> int | None:
    """CPU time (ns) charged so far to worker ``worker``'s parent minus its engine monitor's
    sub-cgroup ``monitor`` (podman's ``conmon``; None: nothing to subtract); None when the
    parent or the counter does not exist (yet)."""
    found = _cpu_root()
    if found is None:
        return None
    root, counter = found
    base = root / PARENT / f"{os.getpid()}-w{worker}"

    def read(path: Path) -> int | None:
        try:
            text = (path / counter).read_text()
        except OSError:
            return None
        if counter == "cpuacct.usage":
            return int(text.strip())
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
        return None

    total = read(base)
    if total is None:
        return None
    return total - ((read(base / monitor) if monitor else None) or 0)


def _remove_tree(path: Path) -> None:
    """rmdir a cgroup directory and its sub-cgroups, deepest first (cgroupfs needs rmdir)."""
    if not path.is_dir():
        return
    # os.walk bottom-up, not rglob: another benchlab's sweep or the engine may remove a
    # sub-cgroup while this one walks (rglob raised FileNotFoundError; os.walk skips it).
    for parent, dirs, _files in os.walk(path, topdown=False):
        for name in dirs:
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass
    try:
        path.rmdir()
    except OSError:
        pass


def remove_own_parents(timeout_s: float = 3.0) -> None:
    """Remove this process's container parents in every hierarchy (at exit, after the engine
    removed the containers; safe to call twice). Retries for ``timeout_s`` (s) while the
    engine's monitor (conmon) of a just-removed container is still exiting."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = [p for root in _roots() for p in _worker_parents(root, os.getpid())]
        for path in left:
            _remove_tree(path)
        if not any(p.exists() for p in left) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for root in _roots():
        try:
            (root / PARENT).rmdir()  # shared by benchlab processes: only once it is empty
        except OSError:
            pass


def _worker_parents(root: Path, pid: int | None = None) -> list[Path]:
    """The ``<pid>-w<worker>`` parents under ``root``'s shared parent (of process ``pid``, or of
    every process); none when the shared parent is gone. Another benchlab process removes it
    once it is empty, between any look and the listing (``Path.glob`` checks, then scans, and
    raised FileNotFoundError out of ``run --isolation podman`` in a parallel test run)."""
    prefix = f"{pid}-w" if pid is not None else ""
    try:
        with os.scandir(root / PARENT) as entries:
            return [Path(entry.path) for entry in entries
                    if entry.name.startswith(prefix) and "-w" in entry.name]
    except (FileNotFoundError, NotADirectoryError):
        return []


def sweep_dead_parents() -> list[str]:
    """Remove the container parents of benchlab processes that are gone; return their paths.
    A parent still holding a process stays (rmdir refuses it)."""
    removed = []
    for root in _roots():
        for path in _worker_parents(root):
            pid = path.name.partition("-")[0]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
                continue
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            _remove_tree(path)
            if not path.exists():
                removed.append(str(path))
    return removed


def container_cgroup(init_pid: int) -> tuple[Path, str] | None:
    """(directory, kind) of the cgroup of a container's init process ``init_pid`` where the
    container can be frozen: the v1 ``freezer`` hierarchy (kind ``"v1"``), else the unified
    one (``"v2"``, ``cgroup.freeze``); None when neither is found (the process is gone, or a
    hierarchy's mount does not show the container's cgroup)."""
    layout = detect_layout()
    try:
        lines = Path(f"/proc/{init_pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    where = {}
    for line in lines:
        _id, controllers, rel = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            where[name] = rel.lstrip("/")
    mounts = []
    if "freezer" in layout.v1 and "freezer" in where:
        mounts.append((Path(layout.v1["freezer"].path) / where["freezer"], "v1"))
    if layout.unified is not None and "" in where:
        mounts.append((Path(layout.unified.path) / where[""], "v2"))
    for path, kind in mounts:
        if (path / "cgroup.procs").exists() and (kind == "v1" or (path / "cgroup.freeze").exists()):
            return path, kind
    return None


def _freeze(path: Path, kind: str, frozen: bool, timeout_s: float = 1.0) -> None:
    """Freeze (or thaw) a cgroup and wait up to ``timeout_s`` (s) until the kernel says so: a
    frozen cgroup's processes cannot fork between the read of its members and their kill."""
    if kind == "v1":
        (path / "freezer.state").write_text("FROZEN" if frozen else "THAWED")
        want, state = ("FROZEN" if frozen else "THAWED"), path / "freezer.state"
    else:
        (path / "cgroup.freeze").write_text("1" if frozen else "0")
        want, state = f"frozen {int(frozen)}", path / "cgroup.events"
    deadline = time.monotonic() + timeout_s
    while want not in state.read_text() and time.monotonic() < deadline:
        time.sleep(0.002)


def kill_all_but(path: Path, kind: str, keep: set[int], timeout_s: float = 5.0) -> bool:
    """SIGKILL every process in the container cgroup ``path`` but ``keep`` (its init, and the
    worker's ``sleep`` under an engine's init), with the cgroup frozen during each round so no
    fork escapes the list; True once only ``keep`` is left, False after ``timeout_s`` (s).

    This runs from the host, so it needs nothing inside the image (a distroless image has no
    ``kill``). The cgroup is always thawed again, even on error. Raises OSError when the cgroup
    cannot be written (a rootless engine's cgroup).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _freeze(path, kind, True)
            left = [pid for pid in map(int, (path / "cgroup.procs").read_text().split())
                    if pid not in keep]
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        finally:
            _freeze(path, kind, False)
        if not left:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)  # the killed leave cgroup.procs once they have died


def kill_exec_programs(init_pid: int, *, with_init: bool) -> bool:
    """SIGKILL every process of the container whose init is ``init_pid`` but that init and,
    ``with_init`` (an engine's init such as catatonit runs the worker's ``sleep``), its oldest
    child; True when only those are left, False when the container's cgroup cannot be found or
    written (a rootless engine) or is not emptied in time."""
    found = container_cgroup(init_pid)
    if found is None:
        return False
    keep = {init_pid} | (_oldest_child(init_pid) if with_init else set())
    try:
        return kill_all_but(*found, keep=keep)
    except OSError:
        return False


def _oldest_child(pid: int) -> set[int]:
    """The child of ``pid`` that started first, as a set of one (empty when it has none): the
    worker's ``sleep``, born before any ``exec``."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return set()
    started = {}
    for kid in kids:
        try:  # field 22 of stat: the start time, in clock ticks after boot
            fields = Path(f"/proc/{kid}/stat").read_text().rpartition(")")[2].split()
            started[int(kid)] = int(fields[19])
        except (OSError, ValueError, IndexError):
            pass  # died meanwhile: not the worker's sleep, which lives as long as its container
    return {min(started, key=started.__getitem__)} if started else set()
