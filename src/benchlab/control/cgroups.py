"""Per-run cgroups (v1, v2 and hybrid): limits, accounting and reliable removal.

A :class:`RunCgroup` is a fresh leaf cgroup for one run (or one worker), created under a
single benchlab parent in every hierarchy it needs::

    v1:  <mount of controller>/benchlab/<session>-<pid>-<n>   e.g. /sys/fs/cgroup/cpu/benchlab/run-4242-0
    v2:  <cgroup2 mount>/benchlab/<session>-<pid>-<n>          e.g. /sys/fs/cgroup/benchlab/run-4242-0

``<pid>`` is the process that created the cgroup, so :func:`sweep_stale` can remove leaves
left behind by a benchlab that was killed with SIGKILL. The measured program joins the leaf
itself before exec by writing its pid to every path in :attr:`RunCgroup.procs_paths`
(``SpawnRequest.cgroup_procs``), so none of its CPU time is missed; after the run,
:meth:`RunCgroup.usage` reads CPU time, throttling and memory peak back.

Layouts: on a *hybrid* machine (v1 controllers plus a cgroup2 mount, often without
controllers) each controller is used where it is attached: on v1 when a v1 hierarchy has it,
otherwise on cgroup2. The cgroup filesystem location is injectable (:class:`CgroupLayout`),
which lets tests use a fake tree for layouts the machine does not have.

Limits are described once, in cgroup v2 terms, by :class:`CgroupLimits`:

========================  ===========================================  ==========================
limit                     v1 file                                      v2 file
========================  ===========================================  ==========================
cpu_quota_us/period_us    cpu.cfs_quota_us, cpu.cfs_period_us          cpu.max "quota period"
cpu_weight (1..10000)     cpu.shares = weight * 1024 / 100 (systemd)   cpu.weight
cpuset_cpus/cpuset_mems   cpuset.cpus, cpuset.mems                     cpuset.cpus, cpuset.mems
memory_limit_bytes        memory.limit_in_bytes (+ memsw if present)   memory.max (+ swap.max 0)
========================  ===========================================  ==========================

Swap is included in the memory limit (v1 ``memory.memsw.limit_in_bytes`` set to the same value,
v2 ``memory.swap.max`` = 0, when those files exist) so that a program over the limit fails
instead of being slowed down by swapping, which would distort its timings.
"""

from __future__ import annotations

import atexit
import errno
import itertools
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from benchlab.units import format_cpu_list, parse_cpu_list
from benchlab.errors import NotAvailable, UserError

__all__ = [
    "CgroupLimits",
    "CgroupUsage",
    "CgroupMount",
    "CgroupLayout",
    "RunCgroup",
    "detect_layout",
    "cgroup_support",
    "sweep_stale",
    "list_benchlab_cgroups",
    "cleanup_all",
    "install_signal_cleanup",
    "weight_to_shares",
    "shares_to_weight",
    "UNCONSTRAINED_HINT",
]

log = logging.getLogger(__name__)

UNCONSTRAINED_HINT = (
    "run as root or pass --allow-unconstrained to run without limits (stored as unconstrained)"
)
DEFAULT_PARENT = "benchlab"
DEFAULT_CPU_PERIOD_US = 100_000
_LEAF_NAME = re.compile(r"^(?P<session>[A-Za-z0-9_.-]+)-(?P<pid>\d+)-(?P<n>\d+)$")
_SESSION = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# Controllers a run joins when they exist, for accounting even without limits.
_ACCOUNTING_CONTROLLERS = ("cpu", "cpuacct", "memory")
_V2_CONTROLLERS = ("cpu", "memory", "cpuset")


# ---------------------------------------------------------------------------------------------
# Limits


def weight_to_shares(weight: int) -> int:
    """cgroup v2 ``cpu.weight`` (1..10000, default 100) -> v1 ``cpu.shares`` (2..262144, default 1024).

    Same linear mapping as systemd: ``shares = weight * 1024 / 100``, clamped to v1's range.
    """
    return max(2, min(262_144, weight * 1024 // 100))


def shares_to_weight(shares: int) -> int:
    """v1 ``cpu.shares`` -> v2 ``cpu.weight``, the inverse of :func:`weight_to_shares`, clamped to 1..10000."""
    return max(1, min(10_000, round(shares * 100 / 1024)))


def _cpu_tuple(value, what: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    cpus = parse_cpu_list(value, what=what) if isinstance(value, str) else tuple(sorted({int(v) for v in value}))
    if not cpus:
        raise UserError(f"invalid {what}: empty; give at least one number, e.g. 0 or 0-1")
    if cpus[0] < 0:
        raise UserError(f"invalid {what}: negative number; use numbers as for taskset -c, e.g. 0,2-3")
    return cpus


@dataclass(frozen=True)
class CgroupLimits:
    """Resource limits for one run cgroup; None means "not limited".

    Attributes:
        cpu_quota_us: CPU time the cgroup may use per period, microseconds (>= 1000).
            ``50_000`` with the default period is half of one CPU; ``200_000`` is two CPUs.
        cpu_period_us: CFS period, microseconds (1000..1000000); default 100000 when a quota
            is set. Only meaningful with ``cpu_quota_us``.
        cpu_weight: relative CPU weight in v2 units, 1..10000 (100 = default). On v1 it is
            written as ``cpu.shares = weight * 1024 / 100`` (systemd's conversion).
        cpuset_cpus: CPUs the cgroup may run on; a tuple, or a taskset-style string "0,2-3".
        cpuset_mems: NUMA memory nodes the cgroup may allocate from; tuple or string.
        memory_limit_bytes: memory limit including swap, bytes (>= 1 MiB).
    """

    cpu_quota_us: int | None = None
    cpu_period_us: int | None = None
    cpu_weight: int | None = None
    cpuset_cpus: tuple[int, ...] | str | None = None
    cpuset_mems: tuple[int, ...] | str | None = None
    memory_limit_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.cpu_quota_us is not None and not (isinstance(self.cpu_quota_us, int) and self.cpu_quota_us >= 1000):
            raise UserError(f"invalid CPU quota {self.cpu_quota_us!r} us: the kernel needs at least 1000 us per period")
        if self.cpu_period_us is not None:
            if self.cpu_quota_us is None:
                raise UserError("a CPU period was given without a CPU quota; give both, e.g. quota 50000 us period 100000 us")
            if not (isinstance(self.cpu_period_us, int) and 1000 <= self.cpu_period_us <= 1_000_000):
                raise UserError(f"invalid CPU period {self.cpu_period_us!r} us; use 1000..1000000 us (default 100000)")
        if self.cpu_weight is not None and not (isinstance(self.cpu_weight, int) and 1 <= self.cpu_weight <= 10_000):
            raise UserError(f"invalid CPU weight {self.cpu_weight!r}; use 1..10000 (default 100)")
        if self.memory_limit_bytes is not None and not (
            isinstance(self.memory_limit_bytes, int) and self.memory_limit_bytes >= 1 << 20
        ):
            raise UserError(f"invalid memory limit {self.memory_limit_bytes!r} bytes; use at least 1 MiB (1048576)")
        object.__setattr__(self, "cpuset_cpus", _cpu_tuple(self.cpuset_cpus, "cpuset CPU list"))
        object.__setattr__(self, "cpuset_mems", _cpu_tuple(self.cpuset_mems, "cpuset memory node list"))

    @property
    def effective_period_us(self) -> int | None:
        """CFS period that will be written, microseconds; None without a quota."""
        if self.cpu_quota_us is None:
            return None
        return self.cpu_period_us if self.cpu_period_us is not None else DEFAULT_CPU_PERIOD_US

    @property
    def unconstrained(self) -> bool:
        """True when no limit is set (the cgroup is then used for accounting only)."""
        return all(value is None for value in asdict(self).values())

    def required_controllers(self) -> set[str]:
        """Controllers that must exist to apply these limits."""
        needed = set()
        if self.cpu_quota_us is not None or self.cpu_weight is not None:
            needed.add("cpu")
        if self.cpuset_cpus is not None or self.cpuset_mems is not None:
            needed.add("cpuset")
        if self.memory_limit_bytes is not None:
            needed.add("memory")
        return needed

    def to_dict(self) -> dict:
        """Plain data for storing with results (CPU lists as taskset strings)."""
        data = asdict(self)
        data["cpu_period_us"] = self.effective_period_us
        for key in ("cpuset_cpus", "cpuset_mems"):
            if data[key] is not None:
                data[key] = format_cpu_list(data[key])
        return data


# ---------------------------------------------------------------------------------------------
# Layout detection


@dataclass(frozen=True)
class CgroupMount:
    """One mounted cgroup hierarchy.

    Attributes:
        path: mount point.
        version: "v1" or "v2".
        controllers: v1: controllers attached to this hierarchy (from mount options);
            v2: controllers available at its root (``cgroup.controllers``).
        read_only: mounted read-only.
    """

    path: Path
    version: Literal["v1", "v2"]
    controllers: frozenset[str]
    read_only: bool = False


@dataclass(frozen=True)
class CgroupLayout:
    """Where each cgroup controller is mounted.

    Attributes:
        version: "v1", "v2", "hybrid" (v1 controllers and a cgroup2 mount) or "none".
        v1: controller -> v1 hierarchy holding it. Named hierarchies (``name=systemd``)
            are not controllers and are left out.
        unified: the cgroup2 mount, if any.
    """

    version: Literal["v1", "v2", "hybrid", "none"]
    v1: Mapping[str, CgroupMount] = field(default_factory=dict)
    unified: CgroupMount | None = None

    @classmethod
    def from_mountinfo(cls, text: str) -> "CgroupLayout":
        """Build a layout from the text of ``/proc/self/mountinfo`` (or a fake copy of it).

        For the cgroup2 mount, available controllers are read from its ``cgroup.controllers``
        file (empty when unreadable).
        """
        v1: dict[str, CgroupMount] = {}
        unified: CgroupMount | None = None
        for line in text.splitlines():
            left, sep, right = line.partition(" - ")
            if not sep:
                continue
            fields = left.split()
            rest = right.split()
            if len(fields) < 6 or len(rest) < 3:
                continue
            fstype, super_options = rest[0], rest[2].split(",")
            mount_point = Path(_unescape_mount(fields[4]))
            read_only = "ro" in fields[5].split(",") or "ro" in super_options
            if fstype == "cgroup":
                controllers = frozenset(
                    opt for opt in super_options
                    if opt not in ("rw", "ro") and "=" not in opt and opt not in _V1_NON_CONTROLLER_OPTIONS
                )
                if not controllers:
                    continue
                mount = CgroupMount(mount_point, "v1", controllers, read_only)
                for controller in controllers:
                    v1.setdefault(controller, mount)
            elif fstype == "cgroup2" and unified is None:
                unified = CgroupMount(mount_point, "v2", _read_controllers(mount_point), read_only)
        if v1 and unified is not None:
            version = "hybrid"
        elif v1:
            version = "v1"
        elif unified is not None:
            version = "v2"
        else:
            version = "none"
        return cls(version=version, v1=v1, unified=unified)

    @classmethod
    def v2_at(cls, root: str | os.PathLike, *, read_only: bool = False) -> "CgroupLayout":
        """A pure cgroup v2 layout mounted at ``root`` (real or a fake tree)."""
        root = Path(root)
        return cls(version="v2", unified=CgroupMount(root, "v2", _read_controllers(root), read_only))

    @classmethod
    def v1_at(cls, root: str | os.PathLike, controllers: Iterable[str]) -> "CgroupLayout":
        """A pure v1 layout with each controller mounted at ``root/<controller>``."""
        root = Path(root)
        v1 = {ctrl: CgroupMount(root / ctrl, "v1", frozenset({ctrl})) for ctrl in controllers}
        return cls(version="v1", v1=v1)

    def mount_for(self, controller: str) -> CgroupMount | None:
        """Hierarchy to use for ``controller``: its v1 hierarchy, else cgroup2 if available there.

        ``cpuacct`` (v1 only) maps to cgroup2 when there is no v1 cpuacct, because v2 keeps CPU
        time in every cgroup's ``cpu.stat`` without any controller.
        """
        if controller in self.v1:
            return self.v1[controller]
        if self.unified is not None:
            if controller == "cpuacct" or controller in self.unified.controllers:
                return self.unified
        return None

    def mounts(self) -> list[CgroupMount]:
        """Every distinct hierarchy (v1 hierarchies, then cgroup2)."""
        seen: dict[Path, CgroupMount] = {}
        for mount in self.v1.values():
            seen.setdefault(mount.path, mount)
        if self.unified is not None:
            seen.setdefault(self.unified.path, self.unified)
        return list(seen.values())


_V1_NON_CONTROLLER_OPTIONS = frozenset(
    {"relatime", "noatime", "nosuid", "nodev", "noexec", "clone_children", "noprefix", "xattr",
     "cpuset_v2_mode", "favordynmods"}
)


def _unescape_mount(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _read_controllers(root: Path) -> frozenset[str]:
    try:
        return frozenset((root / "cgroup.controllers").read_text().split())
    except OSError:
        return frozenset()


def detect_layout(mountinfo: str | os.PathLike = "/proc/self/mountinfo") -> CgroupLayout:
    """Detect the cgroup layout of this process's mount namespace (v1, v2, hybrid or none)."""
    try:
        text = Path(mountinfo).read_text()
    except OSError as err:
        raise NotAvailable(f"cannot read {mountinfo}: {err.strerror}; is /proc mounted?") from None
    return CgroupLayout.from_mountinfo(text)


# ---------------------------------------------------------------------------------------------
# Accounting


@dataclass(frozen=True)
class CgroupUsage:
    """Resource use of a run cgroup, read after the run.

    Attributes:
        cpu_time_ns: total CPU time of every process that was in the cgroup, ns
            (v1 ``cpuacct.usage``; v2 ``cpu.stat`` usage_usec * 1000).
        cpu_user_ns, cpu_system_ns: the user/kernel split, ns. The kernel derives it from
            tick sampling, so their sum only roughly (within ~10-20 %) equals cpu_time_ns.
        nr_periods: CFS periods with runnable tasks (only counted while a quota is set).
        nr_throttled: periods in which the cgroup hit its quota and was stopped.
        throttled_time_ns: total time the cgroup was stopped by its quota, ns.
        memory_peak_bytes: peak memory charged to the cgroup (RSS and page cache), bytes
            (v1 ``memory.max_usage_in_bytes``; v2 ``memory.peak``).
        oom_kills: processes killed by the OOM killer for this cgroup's limit.
        unknown: field name -> why it is None (controller missing, file absent on this kernel).
    """

    cpu_time_ns: int | None = None
    cpu_user_ns: int | None = None
    cpu_system_ns: int | None = None
    nr_periods: int | None = None
    nr_throttled: int | None = None
    throttled_time_ns: int | None = None
    memory_peak_bytes: int | None = None
    oom_kills: int | None = None
    unknown: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain data for storing with results."""
        data = asdict(self)
        data["unknown"] = dict(self.unknown)
        return data


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read_text(path)
    if text is None:
        return None
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def _read_keyed(path: Path) -> dict[str, int] | None:
    text = _read_text(path)
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


# ---------------------------------------------------------------------------------------------
# Live-cgroup registry: removes what this process created at exit or on a fatal signal.

_registry_lock = threading.Lock()
_live: dict[int, "RunCgroup"] = {}
_counter = itertools.count()


def cleanup_all() -> list[str]:
    """Remove every run cgroup this process created and has not removed yet.

    Registered with :mod:`atexit`; also called by the handlers of
    :func:`install_signal_cleanup`. Processes still inside are killed (SIGKILL).
    Returns the paths that could not be removed (left for :func:`sweep_stale`).
    """
    with _registry_lock:
        groups = [group for group in _live.values() if group.creator_pid == os.getpid()]
    leftovers: list[str] = []
    for group in groups:
        leftovers.extend(group.remove())
    return leftovers


atexit.register(cleanup_all)


def install_signal_cleanup(signals: Sequence[int] = (signal.SIGTERM, signal.SIGHUP)) -> None:
    """Remove live run cgroups when this process gets one of ``signals``, then die of it.

    Python already turns Ctrl-C (SIGINT) into KeyboardInterrupt, which ``with RunCgroup(...)``
    handles; SIGTERM and SIGHUP would otherwise kill the process without running atexit
    handlers. SIGKILL cannot be caught: :func:`sweep_stale` handles that case at the next
    start. Call from the main thread (the CLI does it once at start-up).
    """

    def handler(signum, frame):
        cleanup_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in signals:
        signal.signal(signum, handler)


# ---------------------------------------------------------------------------------------------
# Run cgroups


def _os_reason(err: OSError) -> str:
    if err.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if err.errno == errno.EROFS:
        return "read-only file system"
    return err.strerror or str(err)


def _write(path: Path, value: str) -> None:
    # One write() per value: cgroup files parse each write as one command. No O_CREAT: on
    # cgroupfs that turns a missing interface file into a misleading EACCES.
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _make_dir(path: Path) -> None:
    """mkdir a cgroup directory (the kernel populates its interface files)."""
    os.mkdir(path)


def _subtree_control(cgroup: Path) -> set[str]:
    # The kernel lists enabled controllers bare ("cpu memory"); accept "+cpu" as written.
    return {token.lstrip("+") for token in (_read_text(cgroup / "cgroup.subtree_control") or "").split()}


def _remove_dir(path: Path) -> None:
    """rmdir a cgroup directory (its interface files go with it on a real cgroupfs)."""
    os.rmdir(path)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _procs(cgroup: Path) -> list[int]:
    text = _read_text(cgroup / "cgroup.procs")
    if not text:
        return []
    return [int(pid) for pid in text.split()]


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
        if not _SESSION.match(session):
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
        wanted = set(required) | set(_ACCOUNTING_CONTROLLERS)
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
            found.update(_procs(leaf.path))
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
            name = f"{self.session}-{self.creator_pid}-{next(_counter)}"
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
            with _registry_lock:
                _live[id(self)] = self
            return self
        raise UserError(f"cannot find a free cgroup name for session {self.session!r}; run benchlab's sweep of stale cgroups")

    def _create_all(self, name: str) -> None:
        for mount, controllers in self._plan:
            parent = mount.path / self.parent_name
            leaf_path = parent / name
            for _retry in range(20):
                self._prepare_parent(mount, controllers, parent)
                try:
                    _make_dir(leaf_path)
                except FileNotFoundError:
                    # Another benchlab removed the (empty) parent between our mkdirs.
                    continue
                except FileExistsError:
                    raise
                except OSError as err:
                    raise UserError(f"cannot create cgroup under {mount.path}: {_os_reason(err)}; {UNCONSTRAINED_HINT}") from None
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
                _make_dir(parent)
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
                    if not (_read_text(parent / key) or "").strip():
                        _write(parent / key, (_read_text(mount.path / key) or "").strip() or "0")
            if "memory" in mount.controllers and (_read_text(parent / "memory.use_hierarchy") or "").strip() == "0":
                # Old kernels: make the parent count its children's memory; harmless to fail
                # when children already exist.
                try:
                    _write(parent / "memory.use_hierarchy", "1")
                except OSError:
                    pass
        except OSError as err:
            raise UserError(f"cannot create cgroup under {mount.path}: {_os_reason(err)}; {UNCONSTRAINED_HINT}") from None

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
            _write(parent / "cpu.weight", str(weight))
        else:
            _write(parent / "cpu.shares", str(weight_to_shares(weight)))

    def _enable_v2_controllers(self, cgroup: Path, mount: CgroupMount) -> None:
        if cgroup == mount.path:
            available = set(mount.controllers)
        else:
            # A child's cgroup.controllers is exactly its parent's subtree_control.
            available = _subtree_control(cgroup.parent)
        enabled = _subtree_control(cgroup)
        wanted = [c for c in _V2_CONTROLLERS if c in available]
        missing = [c for c in wanted if c not in enabled]
        if not missing:
            return
        try:
            # Re-enabling an enabled controller is a no-op, so write the whole wanted set.
            _write(cgroup / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        except OSError as err:
            if err.errno == errno.EBUSY:
                raise UserError(
                    f"cannot enable cgroup controllers {' '.join(missing)} in {cgroup}: it contains processes "
                    "(cgroup v2 no-internal-process rule); run benchlab from a cgroup with delegated "
                    "subtree (e.g. systemd-run --scope -p Delegate=yes) or pass --allow-unconstrained"
                ) from None
            raise

    def _apply_limits(self, leaf: _Leaf, parent: Path) -> None:
        limits = self.limits
        writes: list[tuple[str, str]] = []
        if leaf.mount.version == "v1":
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
        else:
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
        for filename, value in writes:
            try:
                _write(leaf.path / filename, value)
            except FileNotFoundError:
                raise NotAvailable(
                    f"cgroup file {leaf.path / filename} does not exist (controller not enabled or not built "
                    "into this kernel); drop that limit or pass --allow-unconstrained"
                ) from None
            except OSError as err:
                if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise UserError(f"cannot create cgroup under {leaf.mount.path}: {_os_reason(err)}; {UNCONSTRAINED_HINT}") from None
                raise UserError(
                    f"the kernel refused {value!r} for {leaf.path / filename}: {_os_reason(err)}; check the limit "
                    "values against this machine (benchlab system)"
                ) from None

    def _cpuset_writes(self, parent: Path, only_requested: bool = False) -> list[tuple[str, str]]:
        writes = []
        for key, requested, what in (
            ("cpuset.cpus", self.limits.cpuset_cpus, "CPU"),
            ("cpuset.mems", self.limits.cpuset_mems, "memory node"),
        ):
            parent_text = _cpuset_value(parent, key) or _cpuset_value(parent.parent, key)
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
                _remove_dir(leaf.path)
            except OSError:
                pass
        self._leaves = []
        for mount, _controllers in self._plan:
            _remove_empty_parent(mount.path / self.parent_name)

    # -- accounting ----------------------------------------------------------------------------

    def usage(self) -> CgroupUsage:
        """Read CPU time, throttling and memory peak (call after the run's processes exited).

        Raises:
            RuntimeError: the cgroup is not created or already removed (a caller bug).
        """
        if not self._leaves:
            raise RuntimeError("RunCgroup.usage() needs a created cgroup: call it inside the with block")
        values: dict[str, int | None] = {}
        unknown: dict[str, str] = {}

        def leaf_with(controller: str) -> _Leaf | None:
            for leaf in self._leaves:
                if controller in leaf.controllers:
                    return leaf
            return None

        cpu_fields = ("cpu_time_ns", "cpu_user_ns", "cpu_system_ns")
        throttle_fields = ("nr_periods", "nr_throttled", "throttled_time_ns")
        acct = leaf_with("cpuacct")
        if acct is None:
            for name in cpu_fields:
                unknown[name] = "no cpuacct controller (v1) or cgroup2 hierarchy"
        elif acct.mount.version == "v1":
            values["cpu_time_ns"] = _read_int(acct.path / "cpuacct.usage")
            user = _read_int(acct.path / "cpuacct.usage_user")
            system = _read_int(acct.path / "cpuacct.usage_sys")
            if user is None or system is None:
                # Kernels before 4.7 only have cpuacct.stat, in USER_HZ ticks.
                stat = _read_keyed(acct.path / "cpuacct.stat") or {}
                tick_ns = 1_000_000_000 // os.sysconf("SC_CLK_TCK")
                user = stat["user"] * tick_ns if "user" in stat else None
                system = stat["system"] * tick_ns if "system" in stat else None
            values["cpu_user_ns"], values["cpu_system_ns"] = user, system
        else:
            stat = _read_keyed(acct.path / "cpu.stat") or {}
            for name, key in zip(cpu_fields, ("usage_usec", "user_usec", "system_usec")):
                values[name] = stat[key] * 1000 if key in stat else None

        cpu = leaf_with("cpu")
        if cpu is None:
            for name in throttle_fields:
                unknown[name] = "no cpu controller"
        else:
            stat = _read_keyed(cpu.path / "cpu.stat") or {}
            values["nr_periods"] = stat.get("nr_periods")
            values["nr_throttled"] = stat.get("nr_throttled")
            if "throttled_time" in stat:
                values["throttled_time_ns"] = stat["throttled_time"]
            elif "throttled_usec" in stat:
                values["throttled_time_ns"] = stat["throttled_usec"] * 1000

        memory = leaf_with("memory")
        if memory is None:
            unknown["memory_peak_bytes"] = "no memory controller"
            unknown["oom_kills"] = "no memory controller"
        elif memory.mount.version == "v1":
            values["memory_peak_bytes"] = _read_int(memory.path / "memory.max_usage_in_bytes")
            values["oom_kills"] = (_read_keyed(memory.path / "memory.oom_control") or {}).get("oom_kill")
            if values["oom_kills"] is None:
                unknown["oom_kills"] = "memory.oom_control has no oom_kill count (kernel < 4.13)"
        else:
            values["memory_peak_bytes"] = _read_int(memory.path / "memory.peak")
            if values["memory_peak_bytes"] is None:
                unknown["memory_peak_bytes"] = "memory.peak not present (kernel < 5.19)"
            values["oom_kills"] = (_read_keyed(memory.path / "memory.events") or {}).get("oom_kill")

        for name in cpu_fields + throttle_fields + ("memory_peak_bytes", "oom_kills"):
            if values.get(name) is None and name not in unknown:
                unknown[name] = "not reported by this kernel"
        return CgroupUsage(**{k: v for k, v in values.items() if v is not None}, unknown=unknown)

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
                    _remove_dir(leaf.path)
                    break
                except FileNotFoundError:
                    break
                except OSError as err:
                    if err.errno != errno.EBUSY or time.monotonic() > deadline:
                        log.warning("could not remove cgroup %s: %s", leaf.path, _os_reason(err))
                        failed.append(str(leaf.path))
                        break
                    self.kill_remaining()
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
            _remove_empty_parent(leaf.path.parent)
        self._leaves = []
        with _registry_lock:
            _live.pop(id(self), None)
        return failed


def _cpuset_value(cgroup: Path, key: str) -> str:
    """Effective cpuset.cpus/cpuset.mems of a cgroup (v1 or v2 file names); "" when empty.

    Falling back to the hierarchy root covers a parent that another benchlab has just
    re-created and not filled in yet.
    """
    kind = key.split(".")[1]  # "cpus" or "mems"
    for name in (f"cpuset.effective_{kind}", f"cpuset.{kind}.effective", key):
        text = (_read_text(cgroup / name) or "").strip()
        if text:
            return text
    return ""


def _remove_empty_parent(parent: Path) -> None:
    try:
        _remove_dir(parent)
    except OSError:
        pass  # still used by another run (EBUSY/ENOTEMPTY) or already gone


# ---------------------------------------------------------------------------------------------
# Stale cgroups and support report


def list_benchlab_cgroups(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT) -> list[str]:
    """Every benchlab leaf cgroup directory in every hierarchy (live or stale), sorted."""
    layout = layout if layout is not None else detect_layout()
    found: list[str] = []
    for mount in layout.mounts():
        parent = mount.path / parent_name
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        found.extend(str(entry) for entry in entries if entry.is_dir() and _LEAF_NAME.match(entry.name))
    return sorted(found)


def _kill_members(path: Path, timeout_s: float) -> set[int]:
    """SIGKILL every task in cgroup ``path`` until it is empty (or ``timeout_s`` passes).

    Repeated because a task may fork between reading cgroup.procs and the kill; the new child
    is born in the same cgroup and is seen in the next round. Returns the pids killed.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while True:
        members = _procs(path)
        if not members or time.monotonic() > deadline:
            return killed
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def sweep_stale(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT, *,
                observer: Callable[[str], None] | None = None,
                kill_timeout_s: float = 5.0) -> list[str]:
    """Kill what is left in leaf cgroups of dead benchlab processes, and remove the leaves.

    A leaf is stale when the pid in its name is not a running process (its benchlab was killed
    with SIGKILL). Tasks still inside -- benchmark descendants that outlived their run -- are
    SIGKILLed until the leaf is empty (at most ``kill_timeout_s`` s per leaf), then it is
    removed. A reused pid makes a stale leaf survive until that process exits: harmless. Run
    at start-up, before creating new run cgroups.

    Args:
        observer: called with one line per stale leaf handled (processes killed, leaf removed
            or why not); nothing is printed here, so the caller decides (``-q`` passes None).
        kill_timeout_s: longest wait for one leaf to empty, s.

    Returns the removed paths.
    """
    layout = layout if layout is not None else detect_layout()
    tell = observer if observer is not None else (lambda message: log.debug("%s", message))
    removed: list[str] = []
    for path_text in list_benchlab_cgroups(layout, parent_name):
        path = Path(path_text)
        owner = int(_LEAF_NAME.match(path.name).group("pid"))
        if _pid_alive(owner):
            continue
        killed = _kill_members(path, kill_timeout_s)
        if killed:
            tell(f"killed {len(killed)} process(es) left in stale cgroup {path} by dead "
                 f"benchlab pid {owner}: {' '.join(map(str, sorted(killed)))}")
        if _procs(path):
            tell(f"stale cgroup {path} still holds processes {_procs(path)} after SIGKILL; "
                 "not removed")
            continue
        for attempt in range(50):
            try:
                _remove_dir(path)
                removed.append(str(path))
                tell(f"removed stale cgroup {path}")
                break
            except OSError as err:
                # Killed tasks leave the cgroup a moment after they die (EBUSY meanwhile).
                if err.errno != errno.EBUSY or attempt == 49:
                    tell(f"could not remove stale cgroup {path}: {_os_reason(err)}")
                    break
                time.sleep(0.02)
    for mount in layout.mounts():
        if (mount.path / parent_name).is_dir():
            _remove_empty_parent(mount.path / parent_name)
    return removed


def _writable(mount: CgroupMount) -> bool:
    return not mount.read_only and os.access(mount.path, os.W_OK)


def cgroup_support(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT) -> dict:
    """What cgroup control this machine offers to this process, as plain data.

    Keys: ``version`` (v1/v2/hybrid/none); ``is_root``; ``controllers`` (controller ->
    {version, path, writable}); ``unified`` (cgroup2 path and its controllers, or None);
    ``limits`` (which of cpu_quota, cpu_weight, cpuset, memory_limit can be applied);
    ``accounting`` (cpu_time, throttling, memory_peak availability); ``writable`` (a run
    cgroup can be created); ``reason`` (why not, or None); ``stale_cgroups`` (leaves left by
    dead processes, removed by :func:`sweep_stale`).
    """
    layout = layout if layout is not None else detect_layout()
    controllers: dict[str, dict] = {}
    for controller in ("cpu", "cpuacct", "cpuset", "memory"):
        mount = layout.mount_for(controller)
        if mount is not None:
            controllers[controller] = {"version": mount.version, "path": str(mount.path), "writable": _writable(mount)}
    usable = {name for name, info in controllers.items() if info["writable"]}
    reason = None
    if layout.version == "none":
        reason = "no cgroup filesystem is mounted"
    elif not controllers:
        reason = "no cpu, cpuacct, cpuset or memory controller is available"
    elif not usable:
        first = next(iter(controllers.values()))
        mount_path = first["path"]
        ro = any(m.read_only for m in layout.mounts() if str(m.path) == mount_path)
        reason = f"cannot create cgroup under {mount_path}: {'read-only file system' if ro else 'permission denied'}"
    memory = layout.mount_for("memory")
    kernel = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    memory_peak = memory is not None and (memory.version == "v1" or kernel >= (5, 19))
    stale = [
        path for path in list_benchlab_cgroups(layout, parent_name)
        if not _pid_alive(int(_LEAF_NAME.match(Path(path).name).group("pid")))
    ]
    return {
        "version": layout.version,
        "is_root": os.geteuid() == 0,
        "controllers": controllers,
        "unified": (
            {"path": str(layout.unified.path), "controllers": sorted(layout.unified.controllers)}
            if layout.unified is not None else None
        ),
        "limits": {
            "cpu_quota": "cpu" in usable,
            "cpu_weight": "cpu" in usable,
            "cpuset": "cpuset" in usable,
            "memory_limit": "memory" in usable,
        },
        "accounting": {
            "cpu_time": "cpuacct" in usable,
            "throttling": "cpu" in usable,
            "memory_peak": memory_peak and "memory" in usable,
        },
        "writable": bool(usable),
        "reason": reason,
        "stale_cgroups": stale,
    }
