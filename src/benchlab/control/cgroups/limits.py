"""What to limit, described once in cgroup v2 terms (see the package docstring's table).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from benchlab.control.cgroups.fs import DEFAULT_CPU_PERIOD_US
from benchlab.errors import UserError
from benchlab.units import format_cpu_list, parse_cpu_list

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
        pids_max: most processes and threads the cgroup may hold at once (>= 1): a fork bomb
            stops there (``fork`` fails with EAGAIN).
    """

    cpu_quota_us: int | None = None
    cpu_period_us: int | None = None
    cpu_weight: int | None = None
    cpuset_cpus: tuple[int, ...] | str | None = None
    cpuset_mems: tuple[int, ...] | str | None = None
    memory_limit_bytes: int | None = None
    pids_max: int | None = None

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
        if self.pids_max is not None and not (
            isinstance(self.pids_max, int) and not isinstance(self.pids_max, bool)
            and self.pids_max >= 1
        ):
            raise UserError(f"invalid pids limit {self.pids_max!r}; use a whole number >= 1")
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
        if self.pids_max is not None:
            needed.add("pids")
        return needed

    def to_dict(self) -> dict:
        """Plain data for storing with results (CPU lists as taskset strings)."""
        data = asdict(self)
        data["cpu_period_us"] = self.effective_period_us
        for key in ("cpuset_cpus", "cpuset_mems"):
            if data[key] is not None:
                data[key] = format_cpu_list(data[key])
        return data
