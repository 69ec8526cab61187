"""The core's placement step: affinity per worker, cgroup limits, isolation, perf events.

A plan's :class:`~benchlab.core.plan.Placement` is plain data; :func:`prepare_execution` checks
it against this machine (CPUs exist, cgroups can be created, perf is installed) and gives an
:class:`Execution` that turns one benchmark run into a spawn request and collects the extra
measurements (cgroup accounting, perf events, an isolator's meta file) afterwards.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import field
from typing import Any

from benchlab.core.plan import Placement
from benchlab.errors import NotAvailable, UserError
from benchlab.measure.isolation import CGROUP_PIDS_MAX, Isolation, parse_isolate_meta
from benchlab.measure.spawn import RunMeasurement, SpawnRequest, spawn_measured
from benchlab.records import record


@record
class Execution:
    """A validated setup ready to run: see :func:`prepare_execution`."""

    options: Placement
    worker_cpus: list[tuple[int, ...] | None]
    isolation: Isolation
    limits: Any = None
    use_cgroup: bool = False
    unconstrained_reason: str | None = None
    numa_prefix: list[str] = field(default_factory=list)
    perf_events: list[str] = field(default_factory=list)
    session_label: str = "run"
    #: ``--load`` parsed once here (a :class:`benchlab.control.load.LoadSpec`), None: no load.
    load: Any = None

    def setup_dict(self, shell: str | None = None) -> dict[str, Any]:
        """What is stored as the runs' setup (deduplicated in the store)."""
        return {
            "isolation": self.isolation.to_dict(),
            "affinity": self.options.affinity,
            "smt": self.options.smt,
            "worker_cpus": [list(c) if c else None for c in self.worker_cpus],
            "workers": self.options.workers,
            "cgroup": self.limits.to_dict() if self.limits is not None else None,
            "cgroup_accounting": self.use_cgroup,
            "unconstrained": self.unconstrained_reason,
            "numa": self.numa_prefix or None,
            "perf_events": self.perf_events or None,
            "load": self.options.load,
            "shell": shell,
            "calibration": self.options.calibration,
        }

    def run(self, argv: list[str], *, worker: int, cwd: str | None, timeout_s: float | None,
            stdout_path: str | None, stderr_path: str | None, scratch: str,
            env: dict[str, str] | None = None, stdin_path: str | None = None,
            ) -> tuple[RunMeasurement, list[dict], dict[str, Any]]:
        """Execute one run (stdin from ``stdin_path``, default /dev/null); return
        (measurement, extra measurements, extra notes)."""
        perf_out = meta_out = None
        if self.isolation.wants_meta:
            meta_out = os.path.join(scratch, f"meta-{worker}.txt")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(meta_out)
        # numactl and perf stay outside the sandbox (see outside_prefix)
        full = self.isolation.wrap(list(argv), meta_out, worker=worker,
                                   cpus=self.worker_cpus[worker], env=env,
                                   keep=(cwd or os.getcwd(), scratch))
        if self.perf_events:
            perf_out = os.path.join(scratch, f"perf-{worker}.csv")
        if self.numa_prefix or self.perf_events:  # a plain run skips the call
            full = outside_prefix(self.numa_prefix, self.perf_events, perf_out) + full
        measurements: list[dict] = self.isolation.startup_measurements()
        notes: dict[str, Any] = {}
        if self.use_cgroup:
            from benchlab.control.cgroups import RunCgroup

            with RunCgroup(self.limits, session=self.session_label,
                           layout=cgroup_layout()) as group:
                m = spawn_measured(SpawnRequest(
                    argv=full, cwd=cwd, env=env, stdin_path=stdin_path, stdout_path=stdout_path,
                    stderr_path=stderr_path,
                    timeout_s=timeout_s, cpus=self.worker_cpus[worker],
                    cgroup_procs=group.procs_paths))
                usage = group.usage()
            measurements += _cgroup_measurements(usage)
        else:
            m = spawn_measured(SpawnRequest(
                argv=full, cwd=cwd, env=env, stdin_path=stdin_path, stdout_path=stdout_path,
                    stderr_path=stderr_path,
                timeout_s=timeout_s, cpus=self.worker_cpus[worker]))
        measurements += self.isolation.after_run(worker, m.status)
        if perf_out is not None:
            from benchlab.measure.perf import parse_perf_csv

            try:
                with open(perf_out) as fh:
                    text = fh.read()
            except OSError:
                text = ""
            measurements += [v.as_measurement() for v in parse_perf_csv(text, self.perf_events)]
        if meta_out is not None:
            try:
                with open(meta_out) as fh:
                    measurements += parse_isolate_meta(fh.read())
            except OSError:
                notes["isolator_meta"] = "the isolator wrote no meta file"
        return m, measurements, notes


def outside_prefix(numa_prefix: list[str], perf_events: list[str],
                   perf_out: str | None) -> list[str]:
    """What goes in front of the isolated argv: ``perf stat`` then ``numactl``, both outside
    the isolation level.

    Inside a sandbox or a container they fail (numactl's set_mempolicy is refused by
    firejail's seccomp filter, perf's events by its dropped capabilities, and an image has
    neither tool); outside, the memory policy is inherited by the sandbox's processes down to
    the program (its ``/proc/self/numa_maps`` reads ``bind:N``), and perf's counts, inherited
    by children, cover the program plus the sandbox's own start-up, as the harness's rusage
    does. A container's program is not perf's descendant in time to be counted:
    :func:`check_outside_tools` refuses that combination.
    """
    out: list[str] = []
    if perf_events:  # measure.perf is imported for --perf-events only
        from benchlab.measure.perf import perf_prefix

        out = perf_prefix(perf_events, perf_out or os.devnull)
    return out + list(numa_prefix)


_COMPOSED_OK: set[tuple] = set()


def check_outside_tools(isolation: Isolation, numa_prefix: list[str],
                        perf_events: list[str]) -> None:
    """Refuse (one UserError line, before any session) an isolation level combined with
    ``numa:N`` affinity or ``--perf-events`` that cannot work here; cached per process.

    perf with a container is refused: the engine starts the program through its monitor
    (conmon, then the OCI runtime), which outlives the client perf watches, so perf would
    count the engine client's page faults, not the program's. Other combinations run an
    empty ``true`` through numactl, perf and the level once, as every run will.
    """
    if perf_events and isolation.mode == "container":
        raise UserError(f"--isolation {isolation.text} with --perf-events: perf cannot count a "
                        f"container's program here (only the engine client's events); use "
                        f"--isolation bwrap or firejail, or drop --perf-events")
    key = (isolation.text, tuple(numa_prefix), tuple(perf_events))
    if isolation.mode in ("bare", "cgroup") or not (numa_prefix or perf_events) \
            or key in _COMPOSED_OK:
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="benchlab-check-") as tmp:
        argv = outside_prefix(numa_prefix, perf_events, os.path.join(tmp, "perf.csv")) + \
            isolation.wrap(["true"], os.devnull)
        err = os.path.join(tmp, "stderr")
        m = spawn_measured(SpawnRequest(argv=argv, stderr_path=err, timeout_s=120.0))
        if m.status != "ok":
            with open(err, errors="replace") as fh:
                said = " ".join(ln.strip() for ln in fh if ln.strip())[:160]
            what = " and ".join(w for w, on in (("numa affinity", numa_prefix),
                                                 ("--perf-events", perf_events)) if on)
            raise UserError(f"--isolation {isolation.text} with {what} fails here "
                            f"({said or m.error or m.status}, exit code {m.exit_code}); "
                            f"drop {what} or choose another --isolation")
    _COMPOSED_OK.add(key)


def cgroup_layout():
    """Where cgroups are mounted: from ``$BENCHLAB_CGROUP_MOUNTINFO`` (a mountinfo file) if set,
    else this process's ``/proc/self/mountinfo``."""
    from benchlab.control.cgroups import detect_layout

    return detect_layout(os.environ.get("BENCHLAB_CGROUP_MOUNTINFO") or "/proc/self/mountinfo")


def _cgroup_measurements(usage) -> list[dict]:
    rows = []
    fields = {"cpu_time_ns": "ns", "cpu_user_ns": "ns", "cpu_system_ns": "ns",
              "nr_periods": "count", "nr_throttled": "count", "throttled_time_ns": "ns",
              "memory_peak_bytes": "bytes", "oom_kills": "count"}
    unknown = dict(getattr(usage, "unknown", {}) or {})
    for name, unit in fields.items():
        value = getattr(usage, name, None)
        if value is not None:
            rows.append({"source": "cgroup", "name": name, "value": float(value), "unit": unit,
                         "status": "ok"})
        else:
            rows.append({"source": "cgroup", "name": name, "value": None, "unit": unit,
                         "status": "unknown", "note": unknown.get(name, "not provided here")})
    return rows


def prepare_execution(options: Placement, *, session_label: str = "run") -> Execution:
    """Validate control options on this machine and plan CPUs per worker.

    Raises :class:`UserError` for bad values, :class:`NotAvailable` for what the machine lacks;
    with ``allow_unconstrained`` a cgroup that cannot be created is recorded, not fatal.
    """
    from benchlab.control.affinity import numa_membind_prefix, parse_affinity, plan_affinity
    from benchlab.environment.topology import read_topology

    if options.workers < 1:
        raise UserError(f"--workers must be at least 1 (got {options.workers})")
    if options.smt not in ("apart", "together"):
        raise UserError(f"--smt must be apart or together (got {options.smt!r})")
    spec = parse_affinity(options.affinity)
    options.affinity = spec.text
    topology = read_topology()
    if options.cpuset:
        from benchlab.units import parse_cpu_list as _cpus

        # the program joins the cpuset before its affinity is set: plan inside the cpuset
        topology = topology.restricted(_cpus(options.cpuset, what="--cpuset"))
    worker_cpus = list(plan_affinity(spec, options.workers, topology, smt=options.smt))
    numa_prefix: list[str] = []
    if spec.kind == "numa":
        numa_prefix = list(numa_membind_prefix(spec, topology))
    isolation, load = options.parsed()  # one line each, before any session
    isolation.check()
    perf_events: list = []
    if options.perf_events:
        from benchlab.measure.perf import check_events, parse_events

        perf_events = parse_events(options.perf_events)
    if perf_events:
        check_events(perf_events)  # perf installed, and it takes these events
    check_outside_tools(isolation, numa_prefix, perf_events)
    limits = None
    use_cgroup = False
    reason = None
    if options.wants_limits() or isolation.mode == "cgroup":
        from benchlab.control.cgroups import CgroupLimits, RunCgroup
        from benchlab.units import parse_cpu_list

        pids_max = options.pids_max
        if pids_max is None and isolation.mode == "cgroup" and cgroup_layout().mount_for("pids"):
            pids_max = CGROUP_PIDS_MAX  # safe by default: a fork bomb stops there
        limits = CgroupLimits(
            cpu_quota_us=options.cpu_quota_us, cpu_period_us=options.cpu_period_us,
            cpu_weight=options.cpu_weight,
            cpuset_cpus=parse_cpu_list(options.cpuset, what="--cpuset") if options.cpuset else None,
            memory_limit_bytes=options.memory_limit_bytes, pids_max=pids_max)
        try:
            with RunCgroup(limits, session=session_label, layout=cgroup_layout()):
                pass  # a trial creation: fail now, before anything is measured
            use_cgroup = True
        except (UserError, NotAvailable, OSError) as exc:
            if not options.allow_unconstrained:
                raise
            reason = str(exc)
            limits = None
    return Execution(options=options, worker_cpus=worker_cpus, isolation=isolation, limits=limits,
                     use_cgroup=use_cgroup, unconstrained_reason=reason, numa_prefix=numa_prefix,
                     perf_events=perf_events, session_label=session_label, load=load)
