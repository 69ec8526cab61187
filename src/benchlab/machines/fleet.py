"""Fleet characterisation (the VarSys16 paper at fleet scale): profile every machine of a cluster, compare
every pair, name the slowest common base, calibrate each machine's CPU quota against it.

- :func:`profile_fleet`: the existing stress-ng profile (:func:`benchlab.machines.profile.
  run_profile`) executed on each machine through the core's cluster code; each profile is
  stored as a ``profile`` session named after its machine, tagged with the fleet's id.
- :func:`fleet_matrix`: the range of per-method speedups between every ordered pair and the
  slowest common base — the machine every other machine is faster than (by the median of the
  per-method speedups; the one with the lowest geometric-mean speedup over the rest when no
  machine is slower than all others).
- :func:`calibrate_fleet`: :func:`benchlab.machines.calibrate.calibrate` on each machine against
  the base; one fleet calibration document holds each machine's own quota (the base itself
  needs none).
"""

from __future__ import annotations

import json
import math
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.machines.profile import Profile

FLEET_CALIBRATION_FORMAT = "benchlab-fleet-calibration"


def profile_here(label: str, options: dict[str, Any]) -> dict[str, Any]:
    """On a worker: profile this machine with stress-ng; the profile as plain data."""
    from benchlab.machines import stressng
    from benchlab.machines.profile import run_profile

    binary = stressng.find_stress_ng()
    methods = stressng.resolve_methods(options["methods"], binary)
    profile = run_profile(methods, name=label, duration_s=options["duration_s"],
                          repeat=options["repeat"], seed=options.get("seed", 1), binary=binary,
                          target_cv=options.get("target_cv"), max_repeat=options.get("max_repeat"),
                          time_budget_s=options.get("time_budget_s"),
                          nice=options.get("nice"))
    return profile.to_dict()


def profile_fleet(store: Any, cluster: str, options: dict[str, Any], *, on: str = "all",
                  connect_options: dict[str, Any] | None = None,
                  observer: Callable[[str, Profile], None] | None = None
                  ) -> tuple[str, list[Profile]]:
    """Profile every chosen machine of ``cluster``; store each profile as it arrives.

    ``options``: methods (``all``, ``cpu`` or a list), duration_s (s per stress-ng run),
    repeat, seed, target_cv, max_repeat, time_budget_s, nice (stress-ng then runs in the
    worker's own cgroup, see :func:`benchlab.machines.profile.run_profile`). Returns
    (fleet id, profiles).
    """
    from benchlab.core.cluster.each import run_on_each
    from benchlab.machines.store_io import save_profile

    fleet_id = uuid.uuid4().hex[:8]
    profiles: list[Profile] = []

    def stored(machine, doc):
        profile = Profile.from_dict(doc, where=f"the profile of {machine.label}")
        profile.metadata = {**profile.metadata, "fleet": fleet_id, "machine": machine.label,
                            "cluster": cluster}
        save_profile(store, profile, run_status="ok", source="measured")
        profiles.append(profile)
        if observer is not None:
            observer(machine.label, profile)

    run_on_each(cluster, profile_here, options, on=on, connect_options=connect_options,
                on_result=stored)
    return fleet_id, sorted(profiles, key=lambda p: p.name)


def fleet_profiles(store: Any, fleet_id: str | None = None) -> tuple[str, list[Profile]]:
    """The profiles of fleet ``fleet_id`` (default: the newest fleet) from the store."""
    from benchlab.machines.store_io import load_profile

    rows = [s for s in store.sessions() if s["kind"] == "profile"
            and (s.get("metadata") or {}).get("fleet")]
    if fleet_id is None and rows:
        fleet_id = max(rows, key=lambda s: s["id"])["metadata"]["fleet"]
    chosen = [s for s in rows if s["metadata"]["fleet"] == fleet_id]
    if len(chosen) < 2:
        raise UserError(f"no fleet of two or more profiles in the store"
                        f"{' with id ' + fleet_id if fleet_id else ''}; run `benchlab profile "
                        f"--cluster ADDRESS` first")
    return fleet_id, sorted((load_profile(store, s["uid"]) for s in chosen),
                            key=lambda p: p.name)


@dataclass
class FleetMatrix:
    """Pairwise variability of a fleet: ``ranges[t][b]`` = (min, max) speedup of t over b,
    ``medians[t][b]`` the median speedup (dimensionless, > 1: t faster), and the base."""

    names: list[str]
    ranges: dict[str, dict[str, tuple[float, float]]]
    medians: dict[str, dict[str, float]]
    base: str
    base_reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON)."""
        return {"format": "benchlab-fleet-matrix", "machines": self.names,
                "ranges": {t: {b: list(r) for b, r in row.items()}
                           for t, row in self.ranges.items()},
                "medians": self.medians, "slowest_common_base": self.base,
                "base_reason": self.base_reason}


def fleet_matrix(profiles: Sequence[Profile], *, kinds: Sequence[str] = ("cpu-method",),
                 per_cpu_second: bool = False) -> FleetMatrix:
    """The pairwise speedup ranges of ``profiles`` and the slowest common base (module doc)."""
    from benchlab.machines.variability import compute_variability

    if len(profiles) < 2:
        raise UserError("a fleet matrix needs two or more machine profiles")
    names = [p.name for p in profiles]
    if len(set(names)) != len(names):
        raise UserError(f"two fleet profiles share a name ({', '.join(names)}); name them apart")
    ranges: dict[str, dict[str, tuple[float, float]]] = {n: {} for n in names}
    medians: dict[str, dict[str, float]] = {n: {} for n in names}
    for t in profiles:
        for b in profiles:
            if t is b:
                continue
            v = compute_variability(t, b, kinds=kinds, per_cpu_second=per_cpu_second)
            ranges[t.name][b.name] = v.range
            medians[t.name][b.name] = float(np.median(v.array()))
    slower_than_all = [b for b in names if all(medians[t][b] >= 1 for t in names if t != b)]
    if slower_than_all:
        base = min(slower_than_all, key=lambda b: _geomean([medians[b][t] for t in names
                                                            if t != b]))
        reason = "every other machine is faster on the median method"
    else:
        base = max(names, key=lambda b: _geomean([medians[t][b] for t in names if t != b]))
        reason = ("no machine is slower than all others; the one the rest are fastest over "
                  "(geometric mean of median speedups)")
    return FleetMatrix(names, ranges, medians, base, reason)


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def calibrate_here(label: str, base_doc: dict[str, Any], methods: list[str],
                   options: dict[str, Any]) -> dict[str, Any]:
    """On a worker: calibrate this machine's CPU quota against the base profile (plain data).
    ``options``: period_us, duration_s (s), repeat, max_trials and, optionally, confirm_repeat
    (rounds of the confirmation; default twice ``repeat``)."""
    from benchlab.machines.calibrate import calibrate

    base = Profile.from_dict(base_doc, where="the base profile")
    result = calibrate(base, methods, period_us=options["period_us"],
                       duration_s=options["duration_s"], repeat=options["repeat"],
                       max_trials=options["max_trials"],
                       confirm_repeat=options.get("confirm_repeat"))
    return {**result.to_dict(), "machine": label}


def calibrate_fleet(cluster: str, base: Profile, methods: list[str], options: dict[str, Any],
                    output: str | os.PathLike, *, on: str = "all",
                    connect_options: dict[str, Any] | None = None,
                    observer: Callable[[str, dict], None] | None = None) -> dict[str, Any]:
    """Calibrate every chosen machine except the base itself against ``base``; write and
    return the fleet calibration document (each machine's own quota, us per period)."""
    from benchlab.core.cluster.address import (
        choose_machines,
        machines_of,
        open_cluster,
        parse_cluster,
    )
    from benchlab.core.cluster.each import run_on_each

    with open_cluster(parse_cluster(cluster), connect_options=connect_options) as client:
        labels = [m.label for m in choose_machines(machines_of(client), on, cluster)]
    others = [label for label in labels if label != base.name]
    if not others:
        raise UserError(f"the only machine chosen is the base {base.name!r}; nothing to calibrate")
    doc: dict[str, Any] = {"format": FLEET_CALIBRATION_FORMAT, "version": 1, "base": base.name,
                           "cluster": cluster, "machines": {}}
    if base.name in labels:
        doc["machines"][base.name] = None  # the base runs unthrottled: it is the reference

    def got(machine, calibration):
        doc["machines"][machine.label] = calibration
        if observer is not None:
            observer(machine.label, calibration)

    run_on_each(cluster, calibrate_here, base.to_dict(), methods, options,
                on=",".join(others), connect_options=connect_options, on_result=got)
    try:
        Path(output).write_text(json.dumps(doc, indent=1) + "\n")
    except OSError as err:
        raise UserError(f"cannot write the fleet calibration to {output}: {err.strerror}; "
                        f"choose another -o FILE") from None
    return doc


def load_fleet_calibration(path: str | os.PathLike) -> dict[str, dict[str, int] | None]:
    """Each machine's quota from a fleet calibration: label -> {cpu_quota_us, cpu_period_us}
    (us), or None for the base. Raises UserError for a missing or malformed document."""
    from benchlab.store.formats.readers import load_json

    try:
        doc = load_json(path, "fleet calibration")
    except UserError as err:
        raise UserError(f"{err}; or make one with "
                        f"`benchlab calibrate --cluster ADDRESS --base PROFILE`") from None
    if not isinstance(doc, dict) or doc.get("format") != FLEET_CALIBRATION_FORMAT:
        raise UserError(f"{path} is not a fleet calibration; make one with `benchlab calibrate "
                        f"--cluster ADDRESS --base PROFILE`")
    return fleet_quotas(doc)


def fleet_quotas(doc: dict[str, Any]) -> dict[str, dict[str, int] | None]:
    """Each machine's quota in a fleet calibration document already read (see
    :func:`load_fleet_calibration`)."""
    quotas: dict[str, dict[str, int] | None] = {}
    for label, cal in (doc.get("machines") or {}).items():
        quotas[label] = None if cal is None else {"cpu_quota_us": int(cal["cpu_quota_us"]),
                                                  "cpu_period_us": int(cal["cpu_period_us"])}
    return quotas


@dataclass(frozen=True)
class RunCalibration:
    """A ``run --calibration FILE``, read once. ``limits``: the cgroup limits every run takes
    (:class:`~benchlab.control.cgroups.CgroupLimits`: a one-machine calibration's quota and
    CPUs; a fleet calibration's has none, each machine takes its own). ``quotas``: a fleet
    calibration's quota per machine label ({cpu_quota_us, cpu_period_us}, us; None for the
    base), None for a one-machine calibration. ``path``: the file (absolute)."""

    limits: Any
    quotas: dict[str, dict[str, int] | None] | None = None
    path: str = ""


def read_calibration(path: str | os.PathLike) -> RunCalibration:
    """Read ``path`` once as a one-machine or a fleet calibration; UserError, one line, for a
    file that is neither (see :func:`load_calibration`)."""
    from benchlab.machines.calibrate import (
        CALIBRATION_FORMAT,
        limits_of_document,
        load_calibration,
    )
    from benchlab.store.formats.readers import load_json

    try:
        # the store's reader: a 10^5-deep or binary file is a UserError, not a RecursionError
        doc = load_json(path, "calibration")
    except UserError:
        doc = None  # load_calibration says what is wrong with it
    if isinstance(doc, dict) and doc.get("format") == FLEET_CALIBRATION_FORMAT:
        from benchlab.control.cgroups import CgroupLimits

        return RunCalibration(CgroupLimits(), fleet_quotas(doc), os.path.abspath(path))
    if isinstance(doc, dict) and doc.get("format") == CALIBRATION_FORMAT:
        return RunCalibration(limits_of_document(doc, path), None, os.path.abspath(path))
    # anything else: load_calibration raises its one line
    return RunCalibration(load_calibration(path), None, os.path.abspath(path))
