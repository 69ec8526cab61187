"""Judging a re-measurement against the bundled original, point by point.

For each bundled run session and its reproduction:

- **direction and significance**: each comparison (every benchmark against the session's last,
  Holm-adjusted, :mod:`benchlab.stats.verdict`) must have the same outcome (faster, slower,
  equivalent, undecided) here as there;
- **size**: each benchmark's median wall time here over there (a time ratio) must lie inside
  the band the machines' variability predicts: with ``[lo, hi]`` the range of per-method
  speedups of this machine over the original (the VarSys16 paper), times should scale by
  ``[1/hi, 1/lo]``, widened by ``tolerance`` for the measurement's own noise. The size is the
  same only when the machines match, i.e. that band overlaps ``[1/(1+tol), 1+tol]``: a machine
  that is clearly faster or slower reproduces the direction, not the size (``--calibrate``
  makes it match);
- **instructions**: median instructions per run equal (within 0.1 %) wherever both counted;
- **environment**: the fields that differ are listed (they explain, they do not judge).

Verdict: ``reproduced``; ``reproduced in direction, not in size``; ``not reproduced`` (a
comparison changed outcome, or instruction counts differ), each with its reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

REPRODUCED = "reproduced"
DIRECTION_ONLY = "reproduced in direction, not in size"
NOT_REPRODUCED = "not reproduced"
#: Relative difference of instruction counts still called equal (cachegrind is exact for a
#: deterministic program; libc start-up may differ by a few hundred instructions).
INSTRUCTIONS_TOLERANCE = 0.001


@dataclass
class Judgement:
    """The verdict with its reasons and every point compared (plain data for --json)."""

    verdict: str
    reasons: list[str]
    points: list[dict[str, Any]] = field(default_factory=list)
    speedup_range: tuple[float, float] | None = None
    size_band: tuple[float, float] | None = None
    environment_differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cpu_quota: tuple[int, int] | None = None
    sessions: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"verdict": self.verdict, "reasons": self.reasons, "points": self.points,
                "speedup_range": self.speedup_range, "size_band": self.size_band,
                "environment_differences": [list(d) for d in self.environment_differences],
                "warnings": self.warnings, "cpu_quota": self.cpu_quota,
                "sessions": [{"original": a, "reproduction": b} for a, b in self.sessions]}


def size_band(speedup_range: tuple[float, float] | None,
              tolerance: float) -> tuple[float, float]:
    """The band of time ratios (here / there) the variability predicts, widened by
    ``tolerance`` (a fraction); without a profile, ``[1/(1+tol), 1+tol]``."""
    if speedup_range is None:
        return 1.0 / (1.0 + tolerance), 1.0 + tolerance
    lo, hi = speedup_range
    return 1.0 / (hi * (1.0 + tolerance)), (1.0 + tolerance) / lo


def _comparisons(analysis: dict[str, Any]) -> dict[str, dict[str, Any]]:
    comps = analysis.get("comparisons") or {}
    return {c["name_a"]: c for c in comps.get("comparisons", [])}


def judge(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], *,
          speedup_range: tuple[float, float] | None, tolerance: float = 0.2,
          warnings: Sequence[str] = (), cpu_quota: tuple[int, int] | None = None) -> Judgement:
    """Judge each (original, reproduction) session-document pair (module docstring).

    ``speedup_range`` is (min, max) of this machine's per-method speedups over the original
    (dimensionless), or None when no profile of the original is known.
    """
    from benchlab.environment.diff import diff_environments
    from benchlab.report.reproduce.analysis import analyse_sessions

    band = size_band(speedup_range, tolerance)
    matched = band[0] <= 1.0 + tolerance and band[1] >= 1.0 / (1.0 + tolerance)
    direction_fail: list[str] = []
    size_fail: list[str] = []
    count_fail: list[str] = []
    points: list[dict[str, Any]] = []
    env_diffs: list[tuple[str, Any, Any]] = []
    for original, new in pairs:
        there = analyse_sessions([original])["sessions"][0]
        here = analyse_sessions([new])["sessions"][0]
        for name, c0 in _comparisons(there).items():
            c1 = _comparisons(here).get(name)
            same = c1 is not None and c1["outcome"] == c0["outcome"]
            points.append({"kind": "comparison", "benchmark": name, "baseline": c0["name_b"],
                           "there": c0["outcome"], "here": c1["outcome"] if c1 else None,
                           "p_there": c0.get("p_decision"),
                           "p_here": c1.get("p_decision") if c1 else None, "ok": same})
            if not same:
                direction_fail.append(
                    f"{name} vs {c0['name_b']}: {c0['outcome']} there, "
                    f"{c1['outcome'] if c1 else 'not compared'} here")
        for name, b0 in there["benchmarks"].items():
            b1 = here["benchmarks"].get(name) or {}
            s0, s1 = b0.get("series"), b1.get("series")
            if s0 and s1 and s0["metric"] == s1["metric"] and s0["median"] > 0:
                ratio = s1["median"] / s0["median"]
                inside = band[0] <= ratio <= band[1]
                points.append({"kind": "size", "benchmark": name, "metric": s0["metric"],
                               "unit": s0["unit"], "median_there": s0["median"],
                               "median_here": s1["median"], "ratio": ratio,
                               "band": list(band), "inside": inside,
                               "machines_match": matched, "ok": inside and matched})
                if not inside:
                    size_fail.append(f"{name}: median time x{ratio:.3g} here, outside the "
                                     f"predicted x{band[0]:.3g}..x{band[1]:.3g}")
            i0, i1 = b0.get("instructions"), b1.get("instructions")
            if i0 is not None and i1 is not None:
                equal = abs(i1 - i0) <= INSTRUCTIONS_TOLERANCE * max(abs(i0), 1.0)
                points.append({"kind": "instructions", "benchmark": name, "there": i0,
                               "here": i1, "ok": equal})
                if not equal:
                    count_fail.append(f"{name}: {i0:.0f} instructions per run there, "
                                      f"{i1:.0f} here")
        if original.get("environment") and new.get("environment"):
            env_diffs.extend(diff_environments(original["environment"], new["environment"]))
    reasons: list[str] = []
    if direction_fail or count_fail:
        verdict = NOT_REPRODUCED
        reasons += [f"outcome changed: {r}" for r in direction_fail]
        reasons += [f"instruction count differs: {r}" for r in count_fail]
    elif size_fail or not matched:
        verdict = DIRECTION_ONLY
        reasons.append("every comparison has the same outcome")
        if not matched and speedup_range is not None:
            reasons.append(f"this machine runs the stress-ng methods x{speedup_range[0]:.3g}.."
                           f"x{speedup_range[1]:.3g} as fast as the original: times scale, "
                           f"so sizes differ; reproduce with --calibrate to match it")
        reasons += [f"size: {r}" for r in size_fail]
    else:
        verdict = REPRODUCED
        reasons.append("every comparison has the same outcome, every median time is inside "
                       f"the predicted x{band[0]:.3g}..x{band[1]:.3g}"
                       + (", instruction counts are equal" if any(
                           p["kind"] == "instructions" for p in points) else ""))
    if speedup_range is None:
        reasons.append("no profile of the original machine in the bundle: sizes judged "
                       f"against +-{tolerance:.0%} only")
    return Judgement(verdict, reasons, points, speedup_range, band, env_diffs, list(warnings),
                     cpu_quota, [(a["uid"], b["uid"]) for a, b in pairs])
