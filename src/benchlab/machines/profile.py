"""Machine profiles: a vector of microbenchmark rates, measured with stress-ng or imported.

A :class:`Profile` holds, per method (a stress-ng CPU method or stressor, or an imported
benchmark), every repetition's result and whether higher is better. Its *value* per method is
the median of the repetitions (with two repetitions, as in the published varsys16 data, that is
their mean). The CV per method (sample standard deviation / mean) tells how stable the value is.

:func:`run_profile` measures this machine: every method once per round, the order reshuffled
each round (seeded) so slow drifts of the machine (other tenants, thermal state) spread over all
methods instead of biasing the ones measured last; then, when a target CV is given, extra rounds
for the methods still above it while the time budget lasts. Each run is a fresh stress-ng with
one worker, in its own cgroup (for a CPU quota, and to read CPU time and throttling back), and
is written to the store as soon as it ends.

Profiles are exchanged as JSON (:meth:`Profile.to_json`, :func:`load_profile_file`) and live in
the store as sessions of kind ``profile`` (see :mod:`benchlab.machines.store_io`).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.machines.profile_run import RunRecord, record_fields, run_method

PROFILE_FORMAT = "benchlab-profile"
PROFILE_FORMAT_VERSION = 1
#: Sample metric holding each run's rate, and its unit.
METRIC = "bogo_ops_per_s"
METRIC_UNIT = "bogo-ops/s"
#: Rate over user+system CPU time (insensitive to time slicing and to the quota), stored beside.
CPU_METRIC = "bogo_ops_per_cpu_s"

#: The program-reported metrics of a profile session: stress-ng's rates per real and per CPU s.
PROFILE_METRICS = [{"name": METRIC, "unit": METRIC_UNIT,
                    "origin": "stress-ng --yaml bogo-ops-per-second-real-time"},
                   {"name": CPU_METRIC, "unit": METRIC_UNIT,
                    "origin": "stress-ng --yaml bogo-ops-per-second-usr-sys-time"}]


@dataclass
class MethodResult:
    """Results of one method in a profile.

    Attributes:
        name: method name (``int64``, ``stream``, or an imported benchmark's name).
        values: one result per repetition, in run order (bogo-ops/s for stress-ng; the
            source's unit for imported benchmarks).
        higher_is_better: False for times (e.g. an imported application's seconds).
        kind: ``cpu-method``, ``stressor`` or ``application``.
        cpu_values: per repetition, bogo-ops per CPU second (stress-ng runs only), bogo-ops/s.
    """

    name: str
    values: list[float]
    higher_is_better: bool = True
    kind: str = "cpu-method"
    cpu_values: list[float] = field(default_factory=list)

    @property
    def value(self) -> float:
        """Median of the repetitions (NaN when there is none)."""
        return float(np.median(self.values)) if self.values else math.nan

    @property
    def cv(self) -> float:
        """Coefficient of variation of the repetitions (sample SD / mean); NaN below 2 values."""
        if len(self.values) < 2:
            return math.nan
        arr = np.asarray(self.values, dtype=float)
        mean = arr.mean()
        return float(arr.std(ddof=1) / mean) if mean else math.nan

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "higher_is_better": self.higher_is_better,
               "value": _finite_or_none(self.value), "cv": _finite_or_none(self.cv),
               "values": list(map(float, self.values))}
        if self.cpu_values:
            out["cpu_values"] = list(map(float, self.cpu_values))
        return out


def _finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


@dataclass
class Profile:
    """A machine profile: method -> results, plus how it was obtained.

    Attributes:
        name: profile name (in the store, the session name).
        methods: method name -> :class:`MethodResult`, in measurement declaration order.
        metadata: stress-ng version, duration_s, repeat, limits, cpus, source, elapsed_s, ...
        environment: the machine's environment (``collect_environment``), if known.
    """

    name: str
    methods: dict[str, MethodResult]
    metadata: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] | None = None

    def values(self) -> dict[str, float]:
        """Method -> profile value (median of repetitions), skipping methods without results."""
        return {k: m.value for k, m in self.methods.items() if m.values}

    def cvs(self) -> dict[str, float]:
        """Method -> CV of its repetitions."""
        return {k: m.cv for k, m in self.methods.items()}

    def to_dict(self) -> dict:
        """The JSON document (see :func:`load_profile_file`)."""
        return {"format": PROFILE_FORMAT, "version": PROFILE_FORMAT_VERSION, "name": self.name,
                "metadata": self.metadata, "environment": self.environment,
                "methods": [m.to_dict() for m in self.methods.values()]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, default=str)

    def save(self, path: str | os.PathLike) -> None:
        """Write the profile as JSON to ``path``; UserError when it cannot be written."""
        try:
            Path(path).write_text(self.to_json() + "\n")
        except OSError as err:
            raise UserError(f"cannot write profile to {path}: {err.strerror}; choose another -o FILE") from None

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], where: str = "<profile>") -> "Profile":
        """Build from a JSON document; UserError naming the problem when it is not a profile."""
        if not isinstance(doc, Mapping) or doc.get("format") != PROFILE_FORMAT:
            raise UserError(f"{where} is not a benchlab profile (no \"format\": \"{PROFILE_FORMAT}\"); "
                            f"create one with `benchlab profile -o FILE`")
        methods: dict[str, MethodResult] = {}
        entries = doc.get("methods")
        if not isinstance(entries, list):
            raise UserError(f"{where}: \"methods\" must be a list; regenerate it with `benchlab profile -o FILE`")
        for entry in entries:
            if isinstance(entry, Mapping) and str(entry.get("name")) in methods:
                # a second entry would silently replace the first
                raise UserError(f"{where}: method {str(entry.get('name'))!r} appears twice; keep "
                                f"one entry per method (regenerate it with `benchlab profile -o FILE`)")
            try:
                name = str(entry["name"])
                values = [float(v) for v in entry.get("values") or ([entry["value"]] if entry.get("value") is not None else [])]
                methods[name] = MethodResult(
                    name=name, values=values, higher_is_better=bool(entry.get("higher_is_better", True)),
                    kind=str(entry.get("kind", "cpu-method")),
                    cpu_values=[float(v) for v in entry.get("cpu_values") or []])
            except (KeyError, TypeError, ValueError):
                raise UserError(f"{where}: malformed method entry {str(entry)[:60]!r}; each needs a name "
                                f"and numeric values") from None
            # 0 is a failed run (kept, and left out of ratios); below 0 or not finite is no rate
            bad = [v for v in (*values, *methods[name].cpu_values) if not (math.isfinite(v) and v >= 0)]
            if bad:
                raise UserError(f"{where}: method {name!r} has the value {bad[0]:g}; bogo-ops/s "
                                f"are finite and >= 0 (regenerate it with `benchlab profile -o FILE`)")
        return cls(name=str(doc.get("name") or "profile"), methods=methods,
                   metadata=dict(doc.get("metadata") or {}), environment=doc.get("environment"))


def pool_profiles(profiles: Sequence[Profile]) -> Profile:
    """One profile holding every round of ``profiles`` (the same methods, measured the same
    way, e.g. at one quota): each method's values and CPU values in order, rounds summed."""
    first = profiles[0]
    methods = {m: MethodResult(m, [v for p in profiles for v in p.methods[m].values],
                               r.higher_is_better, r.kind,
                               [v for p in profiles for v in p.methods[m].cpu_values])
               for m, r in first.methods.items()}
    metadata = {**first.metadata, "repeat": sum(p.metadata.get("repeat", 0) for p in profiles)}
    return Profile(first.name, methods, metadata, first.environment)


def load_profile_file(path: str | os.PathLike) -> Profile:
    """Read a profile JSON file; UserError for a missing file, bad JSON or another document."""
    from benchlab.store.formats.readers import load_json

    try:
        doc = load_json(path, "profile")  # the store's reader: one line per problem
    except UserError as err:
        raise UserError(f"{err}; or regenerate it with `benchlab profile -o FILE`") from None
    return Profile.from_dict(doc, str(path))


# ---------------------------------------------------------------------------------------------
# Measuring


#: Observer of progress: ``observer(event, **data)`` with event "planned" (total runs),
#: "run" (a :class:`RunRecord`, done, total) or "extra" (more runs were planned: total).
Observer = Callable[..., None]


def _placement(limits, cpus: Sequence[int] | None, nice: int | None):
    """The core placement of a profile's runs: each in its own cgroup (to read CPU time and
    throttling back; required for a quota), except with ``nice`` and no quota — a cgroup is one
    scheduling entity with the weight of benchlab's parent cgroup, so a nice value inside it
    would not count against processes outside."""
    from benchlab.core.driven import placement_for_limits

    return placement_for_limits(limits, cpus, accounting=nice is None)


def _start_session(store, placement, quota: bool, **kwargs):
    """Prepare the placement and (with a store) create the profile session in the core."""
    from benchlab.control.cgroups import UNCONSTRAINED_HINT
    from benchlab.core.driven import DrivenSession

    try:
        return DrivenSession.start(store, placement, kind="profile", **kwargs)
    except UserError as err:
        if not quota:
            raise
        message = str(err).replace(UNCONSTRAINED_HINT, "run benchlab as root (CPU quotas need write "
                                   "access to the cgroup cpu controller)")
        raise UserError(f"cannot apply the CPU quota: {message}") from None


def run_profile(methods: Sequence[str], *, name: str, duration_s: int = 1, repeat: int = 3,
                limits=None, cpus: Sequence[int] | None = None, seed: int = 1,
                target_cv: float | None = None, max_repeat: int | None = None,
                time_budget_s: float | None = None, store=None, environment: dict | None = None,
                observer: Observer | None = None, binary: str | None = None,
                nice: int | None = None) -> Profile:
    """Measure a profile of this machine with stress-ng.

    Args:
        methods: method names (see :func:`benchlab.machines.stressng.resolve_methods`).
        name: the profile's name.
        duration_s: length of each stress-ng run, s (whole seconds).
        repeat: rounds over all methods (each round in a freshly shuffled order).
        limits: :class:`benchlab.control.cgroups.CgroupLimits` (e.g. a CPU quota), or None.
        cpus: CPU affinity of stress-ng (e.g. ``[1]``), or None for the scheduler's choice.
        seed: seed of the per-round shuffles.
        target_cv: after ``repeat`` rounds, keep re-running methods whose CV is above this
            (a fraction, 0.02 = 2%) until ``max_repeat`` or ``time_budget_s``.
        max_repeat: most repetitions per method with ``target_cv`` (default 3 x repeat).
        time_budget_s: wall-time budget for the extra rounds, s (from the profile's start).
        store: a :class:`benchlab.store.db.Store` to record the session in as runs end.
        environment: the environment to record (default: collected now).
        observer: progress callback, see :data:`Observer`.
        binary: stress-ng path (default: found on PATH).
        nice: run stress-ng under ``nice -n NICE`` (negative needs root): on a shared machine
            -20 makes other processes yield the CPU to it. Without a quota the runs then get
            no cgroup (see :func:`_placement`); with a quota it has no effect against other
            processes (the cgroup competes with benchlab's parent cgroup's weight).

    Returns:
        The profile; its metadata holds elapsed_s, runs, failed runs and the store session uid.

    Raises:
        UserError: stress-ng missing, bad method, no permission for the cgroup quota.
    """
    from benchlab.machines import stressng

    binary = stressng.find_stress_ng(binary)
    _check_profile_options(methods, repeat, duration_s)
    available = stressng.cpu_methods(binary)
    argvs = {m: stressng.method_argv(m, int(duration_s), "{yaml}", binary, available) for m in methods}
    if environment is None:
        from benchlab.environment import collect_environment
        # keyed by the store's secret, as every session's environment (names only without one)
        environment = collect_environment(env_key=store.env_key() if store is not None else None)
    metadata: dict[str, Any] = {
        "tool": "stress-ng", "stress_ng_version": stressng.stress_ng_version(binary),
        "duration_s": int(duration_s), "repeat": repeat, "target_cv": target_cv, "seed": seed,
        "limits": limits.to_dict() if limits is not None else None,
        "cpus": list(cpus) if cpus else None, "nice": nice, "metric": METRIC, "value": "median of repetitions",
        "higher_is_better": {m: True for m in methods}, "source": "measured",
    }
    results = {m: MethodResult(m, [], True, "stressor" if m in stressng.EXTRA_STRESSORS else "cpu-method")
               for m in methods}
    profile = Profile(name=name, methods=results, metadata=metadata, environment=environment)
    session = _start_session(
        store, _placement(limits, cpus, nice), limits is not None and not limits.unconstrained,
        name=name, environment=environment, metadata=metadata, source="measured",
        benchmarks=[{"name": m, "argv": argvs[m], "parameters": {
            "kind": results[m].kind, "higher_is_better": True}} for m in methods],
        metrics=PROFILE_METRICS)
    rounds = _Rounds(session, argvs, results, int(duration_s), nice, random.Random(seed),
                     observer or (lambda event, **data: None), repeat * len(methods))
    status = "failed"
    try:
        for r in range(repeat):
            rounds.run(list(methods), r)
        if target_cv is not None:
            rounds.until_quiet(target_cv, max_repeat if max_repeat is not None else 3 * repeat,
                               time_budget_s, first_round=repeat)
        status = "done"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        session.finish(status, _final_metadata(metadata, rounds.started, rounds.done, methods,
                                               rounds.counts, results, session))
        session.close()
    return profile


def _check_profile_options(methods: Sequence[str], repeat: int, duration_s: float) -> None:
    """One-line UserErrors for a profile's options (rounds, whole seconds, some methods)."""
    if repeat < 1:
        raise UserError(f"invalid --repeat {repeat}; use 1 or more (3 or more to get a CV)")
    if int(duration_s) != duration_s or duration_s < 1:
        raise UserError(f"invalid --duration {duration_s}; stress-ng takes whole seconds (>= 1)")
    if not methods:
        raise UserError("no methods to run; pass --methods all or a list of names")


class _Rounds:
    """The rounds of a profile: each runs its methods once, in a freshly shuffled order, and
    stores every run as it ends (counts per method, runs done, the planned total)."""

    def __init__(self, session, argvs: dict[str, list[str]], results: dict[str, MethodResult],
                 duration_s: int, nice: int | None, rng: random.Random, notify: Observer,
                 total: int):
        self.session, self.argvs, self.results = session, argvs, results
        self.duration_s, self.nice, self.rng, self.notify = duration_s, nice, rng, notify
        self.total = total
        self.counts = {m: 0 for m in argvs}
        self.done = 0
        self.started = time.monotonic()
        notify("planned", total=total)

    def run(self, round_methods: list[str], round_no: int) -> None:
        """One round over ``round_methods`` (shuffled)."""
        order = list(round_methods)
        self.rng.shuffle(order)
        for method in order:
            record = run_method(self.session, method, self.argvs[method], self.session.scratch,
                                round_no, self.duration_s, self.nice)
            if record.value is not None:
                self.results[method].values.append(record.value)
                if record.cpu_value is not None and math.isfinite(record.cpu_value):
                    self.results[method].cpu_values.append(record.cpu_value)
            self.counts[method] += 1
            self.done += 1
            self.session.record(method, self.counts[method] - 1, record_fields(record),
                                _run_samples(record))
            self.notify("run", record=record, done=self.done, total=self.total)

    def until_quiet(self, target_cv: float, ceiling: int, time_budget_s: float | None,
                    first_round: int) -> None:
        """Extra rounds over the methods whose CV is above ``target_cv`` (a fraction), each at
        most ``ceiling`` runs, within ``time_budget_s`` (s, from the start; None: no budget)."""
        round_no = first_round
        while True:
            noisy = [m for m in self.argvs if self.counts[m] < ceiling
                     and not (self.results[m].cv <= target_cv)]
            elapsed = time.monotonic() - self.started
            per_run = elapsed / max(self.done, 1)
            if not noisy or (time_budget_s is not None
                             and elapsed + per_run * len(noisy) > time_budget_s):
                return
            self.total += len(noisy)
            self.notify("extra", total=self.total)
            self.run(noisy, round_no)
            round_no += 1


def _final_metadata(metadata: dict, started: float, done: int, methods, counts, results,
                    session) -> dict:
    """The profile's metadata once its runs ended: elapsed s, runs, failed methods, session."""
    metadata["elapsed_s"] = round(time.monotonic() - started, 3)
    metadata["runs"] = done
    metadata["failed_methods"] = sorted(m for m in methods if counts[m] and not results[m].values)
    if session.ref is not None:
        metadata["session_uid"] = session.ref.uid
    return metadata


def _run_samples(record: RunRecord) -> dict[str, list[float]]:
    """The rate (and rate per CPU second) a profile run measured, bogo-ops/s."""
    samples = {}
    if record.value is not None:
        samples[METRIC] = [record.value]
        if record.cpu_value is not None and math.isfinite(record.cpu_value):
            samples[CPU_METRIC] = [record.cpu_value]
    return samples
