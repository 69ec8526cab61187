"""A bundle re-measured on this machine, with the variability between the two machines.

The runs themselves go through :mod:`benchlab.core.reproduce` (plans read, shown, confined
to scratch); this module adds what needs machine profiles: the original machine's stress-ng
profile from the bundle, this machine's profile as two rounds, one just before and one just
after measuring (each method's value is then the mean of the two, the speed the load of a
shared machine gave on either side of the runs; two rounds on each side took twice the 1-s
stress-ng runs and a range over both sides' extremes), and
with ``calibrate`` the CPU quota that makes this machine match the original's profile
(:func:`benchlab.machines.calibrate.calibrate`), under which every run is then measured.
The judgement in words is :mod:`benchlab.report.reproduce.verdict`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchlab.core.reproduce import Reproduction, remeasure
from benchlab.errors import UserError
from benchlab.store.bundle import Bundle, session_documents
from benchlab.store.bundle.archive import PROFILE_MEMBER


@dataclass
class Remeasured:
    """Sessions measured here: (original doc, new doc) pairs, warnings, this machine's speedup
    range over the original (min, max; None without a bundled profile) and the CPU quota
    (quota, period) in us measured under (None: no quota)."""

    pairs: list[tuple[dict, dict]]
    warnings: list[str] = field(default_factory=list)
    speedup_range: tuple[float, float] | None = None
    cpu_quota: tuple[int, int] | None = None


def original_profile(bundle: Bundle):
    """The measuring machine's profile from the bundle, or None."""
    from benchlab.machines.profile import Profile

    if PROFILE_MEMBER not in bundle.members:
        return None
    document = bundle.json(PROFILE_MEMBER)
    if not isinstance(document, dict):
        raise UserError(f"{bundle.path}: {PROFILE_MEMBER} is not a profile; make the bundle "
                        f"again with benchlab bundle")
    return Profile.from_dict(document, f"{bundle.path}:{PROFILE_MEMBER}")


def profile_here(methods: list[str], *, quota: tuple[int, int] | None = None,
                 duration_s: int = 1, repeat: int = 2):
    """A short stress-ng profile of this machine on ``methods`` (under ``quota`` us, if any)."""
    from benchlab.control.cgroups import CgroupLimits
    from benchlab.machines.profile import run_profile

    limits = CgroupLimits(cpu_quota_us=quota[0], cpu_period_us=quota[1]) if quota else None
    return run_profile(methods, name="reproduction machine", duration_s=duration_s,
                       repeat=repeat, limits=limits)


def calibrate_to(base, *, period_us: int = 10_000, max_trials: int = 10, repeat: int = 2):
    """The CPU quota (us per ``period_us``) that makes this machine match profile ``base``."""
    from benchlab.machines.calibrate import calibrate

    methods = [m for m, r in base.methods.items() if r.values and r.higher_is_better]
    if not methods:
        raise UserError("the bundled profile has no stress-ng method to calibrate on; "
                        "bundle again with --profile")
    return calibrate(base, methods, period_us=period_us, duration_s=1, repeat=repeat,
                     max_trials=max_trials)


def period_of(bundle: Bundle) -> int:
    """The CFS period (us) to calibrate with: the original's, if it ran under a quota; else
    10,000 us, short enough that runs of a few ms are throttled evenly (with 100 ms, a 12 ms
    run may finish inside its first quota slice and never feel the limit)."""
    for doc in session_documents(bundle):
        protocol = doc.get("protocol") if isinstance(doc.get("protocol"), dict) else {}
        placement = protocol.get("placement") if isinstance(protocol.get("placement"),
                                                            dict) else {}
        quota, period = placement.get("cpu_quota_us"), placement.get("cpu_period_us")
        if isinstance(quota, int) and quota > 0:
            return int(period) if isinstance(period, int) and period > 0 else 100_000
    return 10_000


def measure_here(store, rep: Reproduction, *, calibrate: bool = False,
                 isolation: str = "bare", observer=None,
                 argv: list[str] | None = None) -> Remeasured:
    """Re-measure ``rep`` here (the user has agreed to run it) and the machines' variability.

    Without ``calibrate``, this machine is profiled on the bundled profile's methods, one
    round just before and one just after measuring, pooled; with it, the runs are
    measured under the calibrated quota and the range is the calibration's confirmation.
    """
    from benchlab.machines.profile import pool_profiles
    from benchlab.machines.variability import compute_variability

    bundle = rep.bundle
    base = original_profile(bundle)
    quota = None
    speedup_range = None
    if calibrate:
        if base is None:
            raise UserError(f"{bundle.path} has no machine profile, so there is nothing to "
                            f"calibrate against; bundle again with --profile, or drop "
                            f"--calibrate")
        cal = calibrate_to(base, period_us=period_of(bundle))
        quota = (cal.cpu_quota_us, cal.cpu_period_us)
        speedup_range = (float(cal.range_after["min"]), float(cal.range_after["max"]))
    methods = [m for m, r in base.methods.items() if r.values and r.higher_is_better] \
        if base is not None and not calibrate else []
    duration_s = int(base.metadata.get("duration_s") or 1) if base is not None else 1
    rounds: list[Any] = []
    if methods:  # a round before and one after: together they span the load while measuring
        rounds.append(profile_here(methods, duration_s=duration_s, repeat=1))
    pairs, warnings = remeasure(store, rep, quota=quota, isolation=isolation,
                                observer=observer, argv=argv)
    if methods:
        rounds.append(profile_here(methods, duration_s=duration_s, repeat=1))
        speedup_range = compute_variability(pool_profiles(rounds), base).range
    return Remeasured(pairs, warnings, speedup_range, quota)


__all__ = ["Remeasured", "measure_here", "original_profile", "profile_here", "calibrate_to",
           "period_of"]
