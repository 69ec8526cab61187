"""CPU-quota calibration: find the cgroup CPU quota that makes this machine run a set of
microbenchmarks as fast as a (slower) base machine did (the VarSys16 paper, Section IV).

Objective. For a quota q, each chosen method is run ``repeat`` times on this machine under
q (rounds in shuffled order, like a profile), its rate's median divided by the base profile's
value gives the method's speedup, and the *aggregate ratio* r(q) is the geometric mean of the
speedups (a geometric mean so that a 2x and a 0.5x cancel). The goal is r(q) = 1, i.e. the
objective |r(q) - 1| is minimal. Each round also gives one aggregate (geometric mean of that
round's speedups); the spread of those over rounds gives r's 95% interval (t on logs).

Search. r grows monotonically with q (more CPU time per period, more bogo-ops per wall
second), roughly in proportion. So:

1. measure r at a full CPU (q = period, the same as unthrottled for one worker); if even that
   is below 1 the base is faster and no quota can help: throttle the base instead (the
   paper's C_a). Otherwise the answer lies in [min quota, period];
2. next trial: the proportional model q' = q_eff / r(q) from the nearest point, where q_eff
   is the quota, or, when other processes left the runs less CPU than the quota (a busy
   machine), the CPU share they got times the period; inside the bracket, the pooled estimate
   of step 4 (a log-log secant between the bracket ends before any trial has bound); each
   step is kept at least 10% of the bracket away from its ends, so the bracket shrinks
   geometrically even when noise bends the model (a safeguarded bisection);
3. noise: a trial whose interval contains 1 cannot tell the direction, so it is repeated once
   with twice the repetitions; the search stops when the bracket is narrower than the quota
   uncertainty implied by r's interval (r is proportional to q, so a relative error e of r is
   an error of about e*q in q), when a trial matches within its own interval twice, or after
   ``max_trials`` (porta's published logs used 15-16);
4. the answer pools every trial where the quota bound (near the answer): under the
   proportional model each estimates the answer as q / r(q); their geometric mean weighted by
   rounds (:func:`_pooled_root`) averages the machine's drift between trials, which on a shared
   machine is larger than the noise within a trial. It is not clamped to the bracket, which
   that drift can misplace. A final confirmation measurement at that quota gives the residual ratio
   with its interval and the variability range after calibration (the range before is the
   first, unthrottled trial's); with stress-ng it pools the rounds a trial already measured at
   that very quota and measures the rest (at least half fresh).

The result is written as a calibration JSON; :func:`load_calibration` turns it into
:class:`~benchlab.control.cgroups.CgroupLimits` for ``benchlab run --calibration FILE``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.machines.documents import read_json_document
from benchlab.machines.profile import Profile, pool_profiles
from benchlab.machines.quota_search import Measure, Trial, aggregate, ratio_interval, search_quota  # noqa: F401 (API)
from benchlab.machines.variability import Variability

CALIBRATION_FORMAT = "benchlab-calibration"


@dataclass
class Calibration:
    """The outcome of :func:`calibrate` (see the module docstring)."""

    base: str
    methods: list[str]
    cpu_quota_us: int
    cpu_period_us: int
    cpus: list[int] | None
    residual_ratio: float
    residual_ci: tuple[float, float]
    range_before: dict[str, float]
    range_after: dict[str, float]
    trials: list[Trial]
    duration_s: int
    repeat: int
    elapsed_s: float
    converged: str
    environment_digest: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_fraction(self) -> float:
        """Quota / period: the share of one CPU, dimensionless."""
        return self.cpu_quota_us / self.cpu_period_us

    def to_dict(self) -> dict:
        return {"format": CALIBRATION_FORMAT, "version": 1, "base": self.base, "methods": self.methods,
                "cpu_quota_us": self.cpu_quota_us, "cpu_period_us": self.cpu_period_us,
                "cpu_fraction": self.cpu_fraction, "cpus": self.cpus,
                "residual_ratio": self.residual_ratio, "residual_ci": list(self.residual_ci),
                "range_before": self.range_before, "range_after": self.range_after,
                "range_reduction": (self.range_before["length"] / self.range_after["length"]
                                    if self.range_after.get("length") else None),
                "duration_s": self.duration_s, "repeat": self.repeat, "elapsed_s": self.elapsed_s,
                "converged": self.converged, "environment_digest": self.environment_digest,
                "trials": [t.to_dict() for t in self.trials], **self.extra}

    def save(self, path: str | os.PathLike) -> None:
        try:
            Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        except OSError as err:
            raise UserError(f"cannot write calibration to {path}: {err.strerror}; choose another -o FILE") from None


def load_calibration(path: str | os.PathLike):
    """The cgroup limits of a calibration JSON, for ``benchlab run --calibration FILE``.

    Returns:
        :class:`benchlab.control.cgroups.CgroupLimits` with ``cpu_quota_us``/``cpu_period_us``
        (us) and, when the calibration pinned CPUs, ``cpuset_cpus``.

    Raises:
        UserError: missing file, bad JSON, or not a calibration document.
    """
    doc = read_json_document(path, CALIBRATION_FORMAT, "calibration",
                             "benchlab calibrate --base PROFILE -o FILE")
    return limits_of_document(doc, path)


def limits_of_document(doc: dict, path: str | os.PathLike):
    """The CgroupLimits of a calibration document already read from ``path`` (see
    :func:`load_calibration`)."""
    from benchlab.control.cgroups import CgroupLimits

    try:
        quota, period = int(doc["cpu_quota_us"]), int(doc["cpu_period_us"])
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path} lacks integer cpu_quota_us/cpu_period_us; recreate it with "
                        f"`benchlab calibrate`") from None
    cpus = doc.get("cpus")
    return CgroupLimits(cpu_quota_us=quota, cpu_period_us=period,
                        cpuset_cpus=tuple(cpus) if cpus else None)


# ---------------------------------------------------------------------------------------------
# Measuring a trial


def stress_ng_measure(base: Profile, methods: Sequence[str], *, period_us: int, duration_s: int,
                      cpus: Sequence[int] | None, environment: dict | None = None,
                      binary: str | None = None, seed0: int = 100) -> Measure:
    """A trial function running the methods with stress-ng under a quota (see :class:`Trial`).

    The confirmation (purpose ``confirm``) reuses the rounds a search trial already measured at
    the same quota and runs only the rest, at least half of its rounds fresh: the search often
    ends on a quota it measured (the kernel's minimum quota, where a slow base leaves it), and
    measuring those rounds again cost a whole trial (6 s of stress-ng for 3 methods x 2 rounds).
    """
    from benchlab.control.cgroups import CgroupLimits
    from benchlab.machines.profile import run_profile

    base_values = {m: base.methods[m].value for m in methods}
    counter = [0]
    #: quota (us) -> (profiles measured at it, throttled fraction per run)
    measured: dict[int, tuple[list[Profile], list[float]]] = {}

    def measure(quota_us: int, repeat: int, purpose: str) -> Trial:
        counter[0] += 1
        limits = CgroupLimits(cpu_quota_us=int(quota_us), cpu_period_us=int(period_us))
        started = time.monotonic()
        profiles, throttled = measured.setdefault(int(quota_us), ([], []))
        reused = (list(profiles), list(throttled)) if purpose == "confirm" else ([], [])
        have = sum(p.metadata["repeat"] for p in reused[0])
        fresh = max(repeat - have, -(-repeat // 2))
        new_throttled: list[float] = []

        def observe(event, **data):
            rec = data.get("record")
            if event == "run" and rec is not None and rec.cgroup:
                periods, thr = rec.cgroup.get("nr_periods"), rec.cgroup.get("nr_throttled")
                if periods:
                    new_throttled.append(thr / periods)

        prof = run_profile(list(methods), name=f"calibration-trial-{counter[0]}", duration_s=duration_s,
                           repeat=fresh, limits=limits, cpus=cpus, seed=seed0 + counter[0],
                           environment=environment or {}, observer=observe, binary=binary)
        profiles.append(prof)
        throttled.extend(new_throttled)
        fractions = reused[1] + new_throttled
        return trial_from_profile(pool_profiles([*reused[0], prof]), base_values, quota_us,
                                  have + fresh, time.monotonic() - started, purpose,
                                  float(np.mean(fractions)) if fractions else None)

    return measure


def trial_from_profile(prof: Profile, base_values: dict[str, float], quota_us: int, repeat: int,
                       elapsed_s: float, purpose: str, throttled_fraction: float | None = None) -> Trial:
    """Speedups over the base of a measured profile, aggregated per round and overall."""
    per_method = {}
    for m, base_value in base_values.items():
        res = prof.methods.get(m)
        if res is None or not res.values:
            raise UserError(f"method {m!r} failed on this machine in every repetition; "
                            f"drop it with --methods")
        per_method[m] = res.value / base_value
    logs = [np.log(np.asarray(prof.methods[m].values, dtype=float) / b) for m, b in base_values.items()]
    ratio = aggregate(list(per_method.values()))
    ci = ratio_interval(logs)
    # The interval is centred on the mean of logs; keep the reported ratio (medians) inside it.
    ci = (min(ci[0], ratio), max(ci[1], ratio))
    shares = [real / cpu for m in base_values for real, cpu in
              zip(prof.methods[m].values, prof.methods[m].cpu_values) if cpu > 0]
    cpu_share = float(np.median(shares)) if shares else None
    return Trial(int(quota_us), ratio, ci, per_method, repeat, round(elapsed_s, 3), purpose,
                 throttled_fraction, cpu_share)


# ---------------------------------------------------------------------------------------------
# The calibration (the search itself: benchlab.machines.quota_search)


def calibrate(base: Profile, methods: Sequence[str], *, period_us: int = 100_000,
              cpus: Sequence[int] | None = None, duration_s: int = 1, repeat: int = 3,
              confirm_repeat: int | None = None, max_trials: int = 15,
              observer: Callable[[Trial, dict], None] | None = None,
              measure: Measure | None = None, binary: str | None = None) -> Calibration:
    """Search the CPU quota for this machine to match ``base`` on ``methods`` (module docstring).

    Args:
        base: the base machine's profile (rates in bogo-ops/s, higher is better).
        methods: methods of the base profile to match (default at the CLI: all its CPU methods).
        period_us: CFS period, us.
        cpus: CPU affinity for the runs (e.g. ``[1]``); recorded in the calibration.
        duration_s: length of each stress-ng run, s.
        repeat: rounds per trial.
        confirm_repeat: rounds of the final confirmation (default 2 x repeat).
        max_trials: most search trials (the confirmation excluded).
        observer: called per trial with the current bracket.
        measure: the trial function (default :func:`stress_ng_measure`).

    Raises:
        UserError: unknown method, no stress-ng, no cgroup permission, machine slower than base.
    """
    if repeat < 2:
        raise UserError(f"invalid --repeat {repeat}: the noise interval needs at least 2 rounds")
    missing = [m for m in methods if m not in base.methods or not base.methods[m].values]
    if missing:
        raise UserError(f"method(s) {', '.join(missing)} are not in base profile {base.name!r}; "
                        f"choose among: {', '.join(list(base.methods)[:10])}...")
    lower = [m for m in methods if not base.methods[m].higher_is_better]
    if lower:
        raise UserError(f"method(s) {', '.join(lower)} are lower-is-better imported benchmarks; "
                        f"calibrate on stress-ng methods (rates)")
    started = time.monotonic()
    env = None
    digest = None
    if measure is None:
        from benchlab.environment import collect_environment
        env = collect_environment()
        digest = env.get("digest")
        measure = stress_ng_measure(base, methods, period_us=period_us, duration_s=duration_s,
                                    cpus=cpus, environment=env, binary=binary)
    quota, trials, ended = search_quota(measure, period_us=period_us, repeat=repeat,
                                        max_trials=max_trials, observer=observer)
    confirm = measure(quota, confirm_repeat or 2 * repeat, "confirm")
    if observer is not None:
        observer(confirm, {"lo": None, "hi": None})
    before = Variability("this machine (unthrottled)", base.name, trials[0].per_method)
    after = Variability(f"this machine (quota {quota} us / {period_us} us)", base.name, confirm.per_method)
    return Calibration(base=base.name, methods=list(methods), cpu_quota_us=quota, cpu_period_us=period_us,
                       cpus=list(cpus) if cpus else None, residual_ratio=confirm.ratio,
                       residual_ci=confirm.ci, range_before=before.summary(), range_after=after.summary(),
                       trials=trials + [confirm], duration_s=duration_s, repeat=repeat,
                       elapsed_s=round(time.monotonic() - started, 3), converged=ended,
                       environment_digest=digest)
