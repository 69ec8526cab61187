"""``benchlab reproduce``: re-analyse a bundle byte for byte, or re-measure it here and judge.

Re-measuring (:func:`remeasure`): each bundled run session's protocol (its run plan) is run
again on this machine through the execution core and stored in the local store. Bundled
workloads are built from the bundle's own C source; any executable whose SHA-256 differs from
the bundled one gives a warning. The original's CPU limits (quota, period) described the
original machine and are dropped; with ``--calibrate`` the CPU quota that makes this machine
match the original's stress-ng profile (seed 004, :func:`benchlab.machines.calibrate.calibrate`)
is found first and every run is measured under it.

Judging (:mod:`.verdict`) then compares point by point.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from benchlab.errors import UserError
from benchlab.report.reproduce.analysis import (ANALYSIS_MEMBER, REPORT_MD, analysis_bytes,
                                                render_reports)
from benchlab.report.reproduce.make import (EXECUTABLES_MEMBER, PROFILE_MEMBER,
                                            SOFTWARE_MEMBER, file_sha256, software)
from benchlab.store.bundle import Bundle, session_documents


@dataclass
class AnalysisCheck:
    """The outcome of ``reproduce --analysis-only``: digests (SHA-256) bundled and recomputed."""

    analysis_bundled: str
    analysis_here: str
    report_bundled: str
    report_here: str
    warnings: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when both the analysis JSON and the Markdown report match byte for byte."""
        return (self.analysis_bundled == self.analysis_here
                and self.report_bundled == self.report_here)


def software_warnings(bundle: Bundle) -> list[str]:
    """One line per library whose version differs from the one the bundle was analysed with."""
    if SOFTWARE_MEMBER not in bundle.members:
        return ["the bundle records no software versions"]
    then, now = bundle.json(SOFTWARE_MEMBER), software()
    return [f"{key} {then.get(key)} made the bundle, {now[key]} runs here: numbers may differ "
            f"in their last digits" for key in ("python", "numpy", "scipy", "benchlab")
            if then.get(key) != now[key]]


def reproduce_analysis(bundle: Bundle) -> tuple[AnalysisCheck, str]:
    """Re-run the analysis of ``bundle`` from its data; returns the digests and the Markdown
    report recomputed here (the caller shows it)."""
    docs = session_documents(bundle)
    analysis = analysis_bytes(docs, seed=int(bundle.json(ANALYSIS_MEMBER).get("seed", 1)))
    markdown, _ = render_reports(bundle, html=False)
    digest = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    check = AnalysisCheck(digest(bundle.members[ANALYSIS_MEMBER]), digest(analysis),
                          digest(bundle.members[REPORT_MD]), digest(markdown.encode("utf-8")),
                          software_warnings(bundle))
    return check, markdown


def _rebuild(bundle: Bundle, entry: dict[str, Any]) -> str:
    """Build a bundled workload from the bundle's source; the new executable's path."""
    from benchlab.measure import _build
    from benchlab.workloads import CFLAGS, LDLIBS

    name = entry["workload"]
    member = f"sources/{name}.c"
    if member not in bundle.members:
        raise UserError(f"{bundle.path} lacks {member}, the source of workload {name}; make the "
                        f"bundle again with benchlab bundle")
    return str(_build.build_source_text(name, bundle.text(member), flags=CFLAGS, libs=LDLIBS))


def prepared_plans(bundle: Bundle, warnings: list[str], *,
                   quota: tuple[int, int] | None = None) -> list[tuple[dict, Any]]:
    """(session document, RunPlan ready to run here) for each bundled run session.

    Workloads are rebuilt from the bundled source and their new path put into the commands;
    an executable whose SHA-256 differs from the bundled one adds a warning. ``quota`` is
    (quota, period) in us to measure under, else none.
    """
    import shutil

    from benchlab.core.plan import RunPlan

    exes = bundle.json(EXECUTABLES_MEMBER) if EXECUTABLES_MEMBER in bundle.members else []
    by_bench = {(e["session"], e["benchmark"]): e for e in exes}
    out = []
    for doc in session_documents(bundle):
        if doc.get("kind") != "run" or not isinstance(doc.get("protocol"), dict):
            continue
        try:
            plan = RunPlan.from_dict(doc["protocol"])
        except (TypeError, ValueError, KeyError) as exc:
            raise UserError(f"{bundle.path}: the protocol of session {doc['uid']} cannot be "
                            f"read ({exc}); make the bundle again with benchlab bundle") from None
        built: dict[str, str] = {}
        for bench in plan.benchmarks:
            entry = by_bench.get((doc["uid"], bench.name)) or {}
            argv0 = entry.get("program", entry.get("argv0"))
            if entry.get("workload"):
                new = built.get(entry["workload"]) or _rebuild(bundle, entry)
                built[entry["workload"]] = new
                bench.command = bench.command.replace(argv0, new)
                here = file_sha256(new)
            else:
                found = shutil.which(argv0) if argv0 and "/" not in argv0 else argv0
                here = file_sha256(found) if found and os.path.isfile(found) else None
                if here is None and argv0:
                    warnings.append(f"{bench.name}: {argv0} does not exist here; its runs will "
                                    f"fail")
            if entry.get("sha256") and here and here != entry["sha256"]:
                warnings.append(f"{bench.name}: the executable's SHA-256 differs from the "
                                f"bundled one ({entry['sha256'][:12]} there, {here[:12]} here): "
                                f"another build or version")
        placement = plan.placement
        if placement.cpu_quota_us is not None and quota is None:
            warnings.append(f"session {doc['uid']} ran under a CPU quota of "
                            f"{placement.cpu_quota_us} us per {placement.cpu_period_us or 100000}"
                            f" us; measured here without it")
        placement.cpu_quota_us, placement.cpu_period_us = quota if quota else (None, None)
        placement.calibration = placement.worker_label = placement.host = None
        plan.planned_runs = {}
        out.append((doc, plan))
    if not out:
        raise UserError(f"{bundle.path} holds no run session with a protocol to re-measure "
                        f"(imports and profiles have none); use --analysis-only")
    return out


def original_profile(bundle: Bundle):
    """The measuring machine's profile from the bundle, or None."""
    from benchlab.machines.profile import Profile

    if PROFILE_MEMBER not in bundle.members:
        return None
    return Profile.from_dict(bundle.json(PROFILE_MEMBER), f"{bundle.path}:{PROFILE_MEMBER}")


def remeasure(store, bundle: Bundle, *, quota: tuple[int, int] | None = None,
              observer=None, argv: list[str] | None = None) -> tuple[list[tuple[dict, dict]],
                                                                     list[str]]:
    """Run every bundled protocol here; returns ((original doc, new doc) per session, warnings).

    The new sessions are stored in ``store`` with metadata ``reproduces`` (the original uid and
    the bundle's SHA-256).
    """
    from benchlab.core.executor import run_session
    from benchlab.core.session import interruptible, start_session
    from benchlab.store.bundle import sessions_data

    warnings: list[str] = []
    pairs = []
    for doc, plan in prepared_plans(bundle, warnings, quota=quota):
        with interruptible():
            writer = start_session(store, plan, argv=argv, name=f"reproduce-{doc['uid']}",
                                   metadata={"reproduces": {"uid": doc["uid"],
                                                            "bundle_sha256": bundle.sha256,
                                                            "cpu_quota": list(quota) if quota
                                                            else None}},
                                   observer=observer)
            result = run_session(writer, plan, observer=observer)
        _, new_docs = sessions_data(store, [result.session.uid])
        pairs.append((doc, new_docs[0]))
    return pairs, warnings


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
        placement = (doc.get("protocol") or {}).get("placement") or {}
        if placement.get("cpu_quota_us"):
            return int(placement.get("cpu_period_us") or 100_000)
    return 10_000


def reproduce_here(store, bundle: Bundle, *, calibrate: bool = False, tolerance: float = 0.2,
                   observer=None, argv: list[str] | None = None):
    """Re-measure ``bundle`` here (after calibrating, with ``calibrate``) and judge it.

    Without ``calibrate``, this machine is profiled briefly on the bundled profile's methods
    just before and just after measuring, and the variability range spans both (on a shared
    machine the load moves between the two); with it, the range is the calibration's
    confirmation.
    Returns a :class:`benchlab.report.reproduce.verdict.Judgement`.
    """
    from benchlab.machines.variability import compute_variability
    from benchlab.report.reproduce.verdict import judge

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
    ranges = []
    methods = [m for m, r in base.methods.items() if r.values and r.higher_is_better] \
        if base is not None and not calibrate else []
    duration_s = int(base.metadata.get("duration_s") or 1) if base is not None else 1
    if methods:  # before and after: the range then covers the load while measuring
        ranges.append(compute_variability(profile_here(methods, duration_s=duration_s),
                                          base).range)
    pairs, warnings = remeasure(store, bundle, quota=quota, observer=observer, argv=argv)
    if methods:
        ranges.append(compute_variability(profile_here(methods, duration_s=duration_s),
                                          base).range)
        speedup_range = (min(r[0] for r in ranges), max(r[1] for r in ranges))
    return judge(pairs, speedup_range=speedup_range, tolerance=tolerance, warnings=warnings,
                 cpu_quota=quota)


__all__ = ["AnalysisCheck", "reproduce_analysis", "remeasure", "prepared_plans",
           "original_profile", "profile_here", "calibrate_to", "software_warnings",
           "reproduce_here", "period_of"]
