"""The grading platform's comparisons per isolation level against the baseline (the stability study).

For each isolation level other than the baseline (``bare`` when the suite has it, else its first
level), per workload and number of workers (other factors equal), one row:

- ``wall_offset_ns``: mean harness wall time minus the baseline's: what the level adds to every
  run (the platform: "sandboxes add a constant offset to wall time"), beside ``startup_ns``, the
  level's own start-up cost (median of an empty ``true`` through it, stored with each run);
- ``mean_*`` / ``sd_*``: the interval comparison of the mean and of the SD against the
  baseline (higher, lower, same, overlap; bootstrap 0.95 percentile intervals) for harness wall
  and CPU time and the program's own CPU time; ``*`` marks a verdict that an independent
  resampling changes (resampling-sensitive at this n: not a finding);
- ``loadavg`` / ``base_loadavg``: the mean 1-minute load average while the level's cell and the
  baseline's ran, and ``load_differs`` when they differ by more than half a task per core
  (the comparison may then be the load's);
- ``sd_ratio_wall`` / ``sd_ratio_self_cpu``: SD of the level / SD of the baseline;
- ``err_sd_wall_ns`` / ``err_sd_cpu_ns``: SD of (harness − program) time per run: how well the
  harness's view tracks the program's own, in wall and in CPU time (``base_*``: bare's);
  under isolate also ``err_sd_isolate_wall_ns`` / ``err_sd_isolate_cpu_ns``, the isolator's own
  view (its meta file's time-wall and time) against the program's, and in a container
  ``err_sd_container_cpu_ns``, the engine's (its cgroup's CPU time) (CSV only);
- ``parallel_run_ratio``: the stability study's check that several workers really ran in parallel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

OTHERS = ("workers", "affinity", "load", "cpu_quota_us")
COMPARED = (("wall", "wall"), ("cpu", "cpu"), ("self_cpu", "self_cpu"))


def baseline_level(levels: list[str]) -> str:
    """The level every other is compared with: ``bare`` when present, else the first."""
    return "bare" if "bare" in levels else levels[0]


def _key(row: dict, workload: str | None = None) -> tuple:
    return tuple(row.get(f) for f in OTHERS) + (workload or row["workload"],)


def isolation_comparisons(groups: list, detail: list[dict], errors: list[dict],
                          ratios: list[dict], levels: list[str],
                          loads: dict[str, dict] | None = None) -> list[dict]:
    """One row per (level ≠ baseline, workload, other factors); see the module docstring.

    ``groups``, ``detail``, ``errors``, ``ratios`` and ``loads`` (per cell label) are the
    study analysis's (times in ns). Empty when the suite has a single isolation level.
    """
    from benchlab.report.study_cells import loads_differ

    loads = loads or {}
    if len(levels) < 2:
        return []
    base = baseline_level(levels)
    by_group = {(g.cell["isolation"], *_key(g.cell, g.workload)): g for g in groups}
    ratio_of = {r["cell"]: r["parallel_run_ratio"] for r in ratios}
    label_of = {(g.cell["isolation"], *_key(g.cell, g.workload)): g.label for g in groups}
    err = {(e["isolation"], *_key(e), e["time"]): e for e in errors}
    rows = []
    for (level, *rest), group in sorted(by_group.items(), key=lambda kv: str(kv[0])):
        if level == base:
            continue
        ref = by_group.get((base, *rest))
        if ref is None:
            continue
        key = tuple(rest)
        row: dict[str, Any] = {"isolation": level, **dict(zip(OTHERS, key[:-1])),
                               "workload": key[-1]}
        wall, ref_wall = group.values["wall"], ref.values["wall"]
        row["wall_offset_ns"] = float(wall.mean() - ref_wall.mean())
        startup = group.values.get("isolation:startup_wall")
        row["startup_ns"] = float(np.nanmedian(startup)) if startup is not None else math.nan
        family = f"isolation: {level} vs {base}"
        for metric, name in COMPARED:
            for stat in ("mean", "sd"):
                found = [d["result"] + ("*" if d.get("stable") == "no" else "") for d in detail
                         if d["family"] == family and d["metric"] == metric and
                         d["statistic"] == stat and _key(d) == key]
                row[f"{stat}_{name}"] = found[0] if found else "-"
        for metric in ("wall", "self_cpu"):
            x, y = group.values.get(metric), ref.values.get(metric)
            ok = x is not None and y is not None and x.size > 1 and y.size > 1 and y.std() > 0
            row[f"sd_ratio_{metric}"] = float(x.std(ddof=1) / y.std(ddof=1)) if ok else math.nan
        for kind in ("isolate_wall", "isolate_cpu", "container_cpu"):  # the isolator's view
            e = err.get((level, *key, kind))
            if e:
                row[f"err_sd_{kind}_ns"] = e["sd_error_ns"]
        for kind in ("wall", "cpu"):
            e = err.get((level, *key, kind))
            row[f"err_sd_{kind}_ns"] = e["sd_error_ns"] if e else math.nan
            b = err.get((base, *key, kind))
            row[f"base_err_sd_{kind}_ns"] = b["sd_error_ns"] if b else math.nan
        row["parallel_run_ratio"] = ratio_of.get(label_of[(level, *rest)], math.nan)
        la, lb = loads.get(group.label), loads.get(ref.label)
        row["loadavg"] = la["load_mean"] if la else math.nan
        row["base_loadavg"] = lb["load_mean"] if lb else math.nan
        row["load_differs"] = "yes" if loads_differ(la, lb) else "no"
        rows.append(row)
    return rows


COLUMNS = ["isolation", "workers", "affinity", "load", "workload", "wall_offset_ns",
           "startup_ns", "mean_wall", "sd_wall", "mean_cpu", "sd_cpu", "mean_self_cpu",
           "sd_self_cpu", "sd_ratio_wall", "sd_ratio_self_cpu", "err_sd_wall_ns",
           "base_err_sd_wall_ns", "err_sd_cpu_ns", "base_err_sd_cpu_ns", "parallel_run_ratio",
           "loadavg", "base_loadavg", "load_differs"]
NS_COLUMNS = {"wall_offset_ns", "startup_ns", "err_sd_wall_ns", "base_err_sd_wall_ns",
              "err_sd_cpu_ns", "base_err_sd_cpu_ns", "err_sd_isolate_wall_ns",
              "err_sd_isolate_cpu_ns", "err_sd_container_cpu_ns"}
