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
pids_max                  pids.max                                     pids.max
========================  ===========================================  ==========================

Swap is included in the memory limit (v1 ``memory.memsw.limit_in_bytes`` set to the same value,
v2 ``memory.swap.max`` = 0, when those files exist) so that a program over the limit fails
instead of being slowed down by swapping, which would distort its timings.
"""

from __future__ import annotations

from benchlab.control.cgroups.fs import DEFAULT_CPU_PERIOD_US, DEFAULT_PARENT, UNCONSTRAINED_HINT
from benchlab.control.cgroups.registry import cleanup_all, install_signal_cleanup
from benchlab.lazy import lazy_names

# The other names load on first use (PEP 562 ``__getattr__``): every run's start-up sweeps and
# tracks (layout, sweep), while only runs under limits need limits, accounting and run cgroups
# (~3 ms). The registry stays eager: its atexit handler must run after every later one.
_LAZY = {
    "CgroupUsage": "accounting", "read_usage": "accounting",
    "CgroupLayout": "layout", "CgroupMount": "layout", "detect_layout": "layout",
    "RunCgroup": "lifecycle",
    "CgroupLimits": "limits", "shares_to_weight": "limits", "weight_to_shares": "limits",
    "cgroup_support": "support",
    "list_benchlab_cgroups": "sweep", "sweep_stale": "sweep",
}


__getattr__ = lazy_names(__name__, _LAZY, globals())

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
    "DEFAULT_CPU_PERIOD_US",
    "DEFAULT_PARENT",
    "read_usage",
]
