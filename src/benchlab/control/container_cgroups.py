"""The container engine's own view of a run's CPU time, from a cgroup parent per worker.

The harness times the engine's client (``podman run`` / ``podman exec``): the container's
processes are not its children, so its rusage holds the client's CPU time, not the program's.
With the ``cgroupfs`` cgroup manager, each worker's containers are created under a parent cgroup
``benchlab-containers/<pid>-w<worker>`` (``--cgroup-parent``). CPU time is charged to every
ancestor of the cgroup that used it, and stays there after the container's own cgroup is removed
(``run --rm``), so the parent's counter before and after a run, minus what the engine's monitor
(``conmon``, in a sub-cgroup ``conmon``) used meanwhile, is the CPU time of the container: the
program and the runtime's start-up inside it.

This process removes its parents at exit; the next start removes those of owners that are gone
(``kill -9``). With the ``systemd`` cgroup manager (a parent must then be a slice) there is no
such view; :func:`cgroup_parent` says so by returning None.
"""

from __future__ import annotations

import os
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


def cpu_ns(worker: int) -> int | None:
    """CPU time (ns) charged so far to worker ``worker``'s parent minus its ``conmon`` part;
    None when the parent or the counter does not exist (yet)."""
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
    return total - (read(base / "conmon") or 0)


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
        left = [p for root in _roots() for p in (root / PARENT).glob(f"{os.getpid()}-w*")]
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


def sweep_dead_parents() -> list[str]:
    """Remove the container parents of benchlab processes that are gone; return their paths.
    A parent still holding a process stays (rmdir refuses it)."""
    removed = []
    for root in _roots():
        for path in (root / PARENT).glob("*-w*"):
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
