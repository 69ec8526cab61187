"""Run lifecycle: one fresh leaf cgroup per run (or worker), created with its limits and
removed reliably (leftover processes killed) when the run ends.

Long because: one cgroup's whole life (create, place, limit, read, remove) is one class whose
steps share its state; split, a reader would follow it across files.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from benchlab.control.cgroups import fs
from benchlab.control.cgroups.accounting import CgroupUsage, read_usage
from benchlab.control.cgroups.fs import (
    ACCOUNTING_CONTROLLERS,
    DEFAULT_PARENT,
    SESSION_NAME,
    UNCONSTRAINED_HINT,
    V2_CONTROLLERS,
    cpuset_value,
    os_reason,
    procs,
    read_text,
    subtree_control,
    write,
)
from benchlab.control.cgroups.layout import CgroupLayout, CgroupMount, detect_layout
from benchlab.control.cgroups.limits import CgroupLimits, weight_to_shares
from benchlab.control.cgroups.registry import leaf_counter, live_cgroups, registry_lock
from benchlab.errors import NotAvailable, UserError
from benchlab.units import format_cpu_list, parse_cpu_list


@dataclass
class _Leaf:
    mount: CgroupMount
    controllers: frozenset[str]
    path: Path


class RunCgroup:
    """A fresh leaf cgroup for one run or one worker; a context manager.

    Usage::

        with RunCgroup(CgroupLimits(cpu_quota_us=50_000), session="s1") as group:
            result = spawn_measured(SpawnRequest(argv, cgroup_procs=group.procs_paths))
            usage = group.usage()

    Creation writes the limits; leaving the ``with`` block (normally, by exception or by
    Ctrl-C) kills any process still inside and removes the leaf in every hierarchy, retrying
    for ``remove_timeout_s`` while exiting tasks drain (EBUSY). An empty benchlab parent is
    removed too. Leaves of a process killed with SIGKILL are removed by :func:`sweep_stale`.

    Args:
        limits: what to limit; None or an empty :class:`CgroupLimits` gives an
            accounting-only cgroup.
        session: label in the leaf name (letters, digits, ``_ . -``), e.g. a run-set id.
        layout: where cgroups are mounted; default :func:`detect_layout`.
        parent_name: name of the benchlab parent cgroup in each hierarchy.
        remove_timeout_s: how long removal retries while the cgroup is busy, s.

    Raises (on creation):
        NotAvailable: a controller needed for the limits is not mounted.
        UserError: no permission, read-only cgroupfs, or limits the kernel refuses (e.g.
            cpuset CPUs outside the parent's); one line ending in the fix.
    """

    def __init__(
        self,
        limits: CgroupLimits | None = None,
        *,
        session: str = "run",
        layout: CgroupLayout | None = None,
        parent_name: str = DEFAULT_PARENT,
        remove_timeout_s: float = 2.0,
    ):
        if not SESSION_NAME.match(session):
            raise UserError(f"invalid cgroup session label {session!r}; use 1-64 letters, digits, '_', '.' or '-'")
        self.limits = limits if limits is not None else CgroupLimits()
        self.session = session
        self.layout = layout if layout is not None else detect_layout()
        self.parent_name = parent_name
        self.remove_timeout_s = remove_timeout_s
        self.creator_pid = os.getpid()
        self.name: str | None = None
        self._leaves: list[_Leaf] = []
        self._plan = self._plan_hierarchies()

    # -- planning ------------------------------------------------------------------------------

    def _plan_hierarchies(self) -> list[tuple[CgroupMount, frozenset[str]]]:
        required = self.limits.required_controllers()
        for controller in sorted(required):
            if self.layout.mount_for(controller) is None:
                raise NotAvailable(
                    f"cgroup controller {controller!r} is not available (layout {self.layout.version}, "
                    f"limits need it); enable it or pass --allow-unconstrained to run without limits "
                    "(stored as unconstrained)"
                )
        wanted = set(required) | set(ACCOUNTING_CONTROLLERS)
        by_path: dict[Path, tuple[CgroupMount, set[str]]] = {}
        for controller in sorted(wanted):
            mount = self.layout.mount_for(controller)
            if mount is None:
                continue
            by_path.setdefault(mount.path, (mount, set()))[1].add(controller)
        if not by_path:
            raise NotAvailable(
                f"no cgroup hierarchy is mounted (layout {self.layout.version}); mount cgroupfs "
                "or pass --allow-unconstrained to run without limits (stored as unconstrained)"
            )
        return [(mount, frozenset(ctrls)) for mount, ctrls in by_path.values()]

    # -- public view ---------------------------------------------------------------------------

    @property
    def paths(self) -> list[str]:
        """Leaf cgroup directories, one per hierarchy joined (empty before creation)."""
        return [str(leaf.path) for leaf in self._leaves]

    @property
    def procs_paths(self) -> list[str]:
        """``cgroup.procs`` files the measured child must write its pid to before exec."""
        return [str(leaf.path / "cgroup.procs") for leaf in self._leaves]

    @property
    def created(self) -> bool:
        return bool(self._leaves)

    def pids(self) -> list[int]:
        """Processes currently in the cgroup (any hierarchy), sorted."""
        found: set[int] = set()
        for leaf in self._leaves:
            found.update(procs(leaf.path))
        return sorted(found)

    def describe(self) -> dict:
        """Plain data for storing with results: name, paths, layout and limits."""
        return {
            "name": self.name,
            "layout": self.layout.version,
            "paths": self.paths,
            "limits": self.limits.to_dict(),
        }

    # -- creation ------------------------------------------------------------------------------

    def __enter__(self) -> "RunCgroup":
        self.create()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.remove()

    def create(self) -> "RunCgroup":
        """Create the leaf in every hierarchy and write the limits. Idempotent."""
        if self._leaves:
            return self
        for _attempt in range(1000):
            name = f"{self.session}-{self.creator_pid}-{next(leaf_counter)}"
            try:
                self._create_all(name)
            except FileExistsError:
                # A leftover of an earlier process with our pid (pid reuse) or a concurrent
                # RunCgroup in a forked copy of this process: try the next number.
                self._discard_partial()
                continue
            except BaseException:
                self._discard_partial()
                raise
            self.name = name
            with registry_lock:
                live_cgroups[id(self)] = self
            return self
        raise UserError(f"cannot find a free cgroup name for session {self.session!r}; run benchlab's sweep of stale cgroups")

    def _create_all(self, name: str) -> None:
        for mount, controllers in self._plan:
            parent = mount.path / self.parent_name
            leaf_path = parent / name
            for _retry in range(20):
                self._prepare_parent(mount, controllers, parent)
                try:
                    fs.make_dir(leaf_path)
                except FileNotFoundError:
                    # Another benchlab removed the (empty) parent between our mkdirs.
                    continue
                except FileExistsError:
                    raise
                except OSError as err:
                    raise UserError(f"cannot create cgroup under {mount.path}: {os_reason(err)}; {UNCONSTRAINED_HINT}") from None
                break
            else:
                raise UserError(f"cannot create cgroup under {parent}: it keeps disappearing; retry")
            leaf = _Leaf(mount, controllers, leaf_path)
            self._leaves.append(leaf)
            self._apply_limits(leaf, parent)

    def _prepare_parent(self, mount: CgroupMount, controllers: frozenset[str], parent: Path) -> None:
        try:
            if mount.version == "v2":
                self._enable_v2_controllers(mount.path, mount)
            try:
                fs.make_dir(parent)
            except FileExistsError:
                pass
            if mount.version == "v2":
                self._enable_v2_controllers(parent, mount)
                self._weight_parent(mount, controllers, parent)
                return
            self._weight_parent(mount, controllers, parent)
            if "cpuset" in mount.controllers:
                # A new v1 cpuset cgroup starts with empty cpus/mems and accepts no task.
                for key in ("cpuset.cpus", "cpuset.mems"):
                    if not (read_text(parent / key) or "").strip():
                        write(parent / key, (read_text(mount.path / key) or "").strip() or "0")
            if "memory" in mount.controllers and (read_text(parent / "memory.use_hierarchy") or "").strip() == "0":
                # Old kernels: make the parent count its children's memory; harmless to fail
                # when children already exist.
                try:
                    write(parent / "memory.use_hierarchy", "1")
                except OSError:
                    pass
        except OSError as err:
            raise UserError(f"cannot create cgroup under {mount.path}: {os_reason(err)}; {UNCONSTRAINED_HINT}") from None

    def _weight_parent(self, mount: CgroupMount, controllers: frozenset[str], parent: Path) -> None:
        """Give the benchlab parent the run's CPU weight.

        A weight only counts against siblings: a leaf's weight under a parent of default weight
        would still compete with every other task of the machine at the default weight. The
        parent is shared by concurrent runs, so the last weight written wins.
        """
        weight = self.limits.cpu_weight
        if weight is None or "cpu" not in controllers:
            return
        if mount.version == "v2":
            write(parent / "cpu.weight", str(weight))
        else:
            write(parent / "cpu.shares", str(weight_to_shares(weight)))

    def _enable_v2_controllers(self, cgroup: Path, mount: CgroupMount) -> None:
        if cgroup == mount.path:
            available = set(mount.controllers)
        else:
            # A child's cgroup.controllers is exactly its parent's subtree_control.
            available = subtree_control(cgroup.parent)
        enabled = subtree_control(cgroup)
        wanted = [c for c in V2_CONTROLLERS if c in available]
        missing = [c for c in wanted if c not in enabled]
        if not missing:
            return
        try:
            # Re-enabling an enabled controller is a no-op, so write the whole wanted set.
            write(cgroup / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        except OSError as err:
            if err.errno == errno.EBUSY:
                raise UserError(
                    f"cannot enable cgroup controllers {' '.join(missing)} in {cgroup}: it contains processes "
                    "(cgroup v2 no-internal-process rule); run benchlab from a cgroup with delegated "
                    "subtree (e.g. systemd-run --scope -p Delegate=yes) or pass --allow-unconstrained"
                ) from None
            raise

    def _apply_limits(self, leaf: _Leaf, parent: Path) -> None:
        """Write this group's limits into ``leaf``, one line of error naming the file."""
        writes = (self._v1_writes(leaf, parent) if leaf.mount.version == "v1"
                  else self._v2_writes(leaf, parent))
        for filename, value in writes:
            try:
                write(leaf.path / filename, value)
            except FileNotFoundError:
                raise NotAvailable(
                    f"cgroup file {leaf.path / filename} does not exist (controller not enabled or not built "
                    "into this kernel); drop that limit or pass --allow-unconstrained"
                ) from None
            except OSError as err:
                if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise UserError(f"cannot create cgroup under {leaf.mount.path}: {os_reason(err)}; {UNCONSTRAINED_HINT}") from None
                raise UserError(
                    f"the kernel refused {value!r} for {leaf.path / filename}: {os_reason(err)}; check the limit "
                    "values against this machine (benchlab system)"
                ) from None

    def _v1_writes(self, leaf: _Leaf, parent: Path) -> list[tuple[str, str]]:
        """(file, value) pairs of the limits in a cgroup v1 leaf of its controllers."""
        limits, writes = self.limits, []
        if "cpu" in leaf.controllers:
            if limits.cpu_quota_us is not None:
                writes += [("cpu.cfs_period_us", str(limits.effective_period_us)),
                           ("cpu.cfs_quota_us", str(limits.cpu_quota_us))]
            if limits.cpu_weight is not None:
                writes.append(("cpu.shares", str(weight_to_shares(limits.cpu_weight))))
        if "cpuset" in leaf.controllers:
            writes += self._cpuset_writes(parent)
        if "memory" in leaf.controllers and limits.memory_limit_bytes is not None:
            writes.append(("memory.limit_in_bytes", str(limits.memory_limit_bytes)))
            if (leaf.path / "memory.memsw.limit_in_bytes").exists():
                writes.append(("memory.memsw.limit_in_bytes", str(limits.memory_limit_bytes)))
        if "pids" in leaf.controllers and limits.pids_max is not None:
            writes.append(("pids.max", str(limits.pids_max)))
        return writes

    def _v2_writes(self, leaf: _Leaf, parent: Path) -> list[tuple[str, str]]:
        """(file, value) pairs of the limits in a cgroup2 leaf."""
        limits, writes = self.limits, []
        if limits.cpu_quota_us is not None:
            writes.append(("cpu.max", f"{limits.cpu_quota_us} {limits.effective_period_us}"))
        if limits.cpu_weight is not None:
            writes.append(("cpu.weight", str(limits.cpu_weight)))
        if limits.cpuset_cpus is not None or limits.cpuset_mems is not None:
            writes += self._cpuset_writes(parent, only_requested=True)
        if limits.memory_limit_bytes is not None:
            writes.append(("memory.max", str(limits.memory_limit_bytes)))
            if (leaf.path / "memory.swap.max").exists():
                writes.append(("memory.swap.max", "0"))
        if limits.pids_max is not None:
            writes.append(("pids.max", str(limits.pids_max)))
        return writes

    def _cpuset_writes(self, parent: Path, only_requested: bool = False) -> list[tuple[str, str]]:
        writes = []
        for key, requested, what in (
            ("cpuset.cpus", self.limits.cpuset_cpus, "CPU"),
            ("cpuset.mems", self.limits.cpuset_mems, "memory node"),
        ):
            parent_text = cpuset_value(parent, key) or cpuset_value(parent.parent, key)
            if requested is None:
                if not only_requested:
                    writes.append((key, parent_text))
                continue
            if parent_text:
                available = set(parse_cpu_list(parent_text))
                outside = [n for n in requested if n not in available]
                if outside:
                    raise UserError(
                        f"cpuset {what} {format_cpu_list(outside)} is not available to benchlab's cgroup; "
                        f"available: {parent_text}"
                    )
            writes.append((key, format_cpu_list(requested)))
        return writes

    def _discard_partial(self) -> None:
        for leaf in reversed(self._leaves):
            try:
                fs.remove_dir(leaf.path)
            except OSError:
                pass
        self._leaves = []
        for mount, _controllers in self._plan:
            fs.remove_empty_parent(mount.path / self.parent_name)

    # -- accounting ----------------------------------------------------------------------------

    def usage(self) -> CgroupUsage:
        """Read CPU time, throttling and memory peak (call after the run's processes exited).

        Raises:
            RuntimeError: the cgroup is not created or already removed (a caller bug).
        """
        if not self._leaves:
            raise RuntimeError("RunCgroup.usage() needs a created cgroup: call it inside the with block")
        return read_usage(self._leaves)

    # -- removal -------------------------------------------------------------------------------

    def kill_remaining(self) -> int:
        """SIGKILL every process still in the cgroup (left-over daemons of the benchmark).

        Returns how many were signalled. Never signals this process.
        """
        count = 0
        for pid in self.pids():
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                count += 1
            except ProcessLookupError:
                pass
        return count

    def remove(self) -> list[str]:
        """Kill leftovers and remove the leaf (and the benchlab parent if empty) in every hierarchy.

        Retries for ``remove_timeout_s`` while the kernel reports EBUSY (exiting tasks). Safe
        to call twice. Returns the leaf paths that could not be removed (logged; a later
        :func:`sweep_stale` removes them).
        """
        if os.getpid() != self.creator_pid:
            return []  # a forked copy must not remove its parent's cgroups
        failed: list[str] = []
        deadline = time.monotonic() + self.remove_timeout_s
        for leaf in reversed(self._leaves):
            delay = 0.001
            while True:
                try:
                    fs.remove_dir(leaf.path)
                    break
                except FileNotFoundError:
                    break
                except OSError as err:
                    if err.errno != errno.EBUSY or time.monotonic() > deadline:
                        # Not printed from control: the caller gets the path back, and the next
                        # start's sweep_stale removes it and reports through its observer.
                        import logging  # here only: logging costs every run ~3 ms to import

                        logging.getLogger(__name__).debug("could not remove cgroup %s: %s",
                                                          leaf.path, os_reason(err))
                        failed.append(str(leaf.path))
                        break
                    self.kill_remaining()
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
            fs.remove_empty_parent(leaf.path.parent)
        self._leaves = []
        with registry_lock:
            live_cgroups.pop(id(self), None)
        return failed
