"""The stability study's analysis of a study session, as Markdown and CSV tables and PNG plots.

For each **group** (a cell of the matrix × a workload) and each time metric (CPU and wall time as
the harness measured them, and as the program measured itself):

- bootstrap percentile intervals of the mean and of the sd (the stability study: 0.95, ``boot``'s percentile);
- **comparisons** within each factor's family: for every pair of levels of one factor (the
  first level listed in the suite is the baseline), groups that agree on every other factor are
  compared by their intervals: disjoint → higher/lower, one engulfs the other → same, otherwise
  overlap; counted per family as in the seed's figures;
- **harness-vs-program error**: per run, harness time minus the program's own time; per group the
  mean and sd of that difference and the relative error = sd / mean harness time;
- **parallel-run ratio** of cells with several workers: (first result of the last iteration − last
  result of the first iteration) / (last result − first start), the stability study's check that the workers
  really ran in parallel;
- **correlations** (Pearson and Spearman, with p-values) of rusage, cgroup and perf metrics with
  CPU time, within each cell and workload, never pooled across levels whose measurements mean
  different things (:mod:`benchlab.report.study_cells`);
- **load**: each cell's load average while it ran; comparisons between cells whose loads
  differ are flagged (``load_differs``);
- **resampling sensitivity**: every interval is computed again from an independent resampling;
  a comparison whose verdict changes with it is marked unstable (``stable`` no; ``*`` in the
  isolation table): at small n the verdict is the resampling's, not the data's;
- **isolation vs bare**: the platform's comparisons per isolation level
  (:mod:`benchlab.report.study_isolation`).

The renderings (CSV, Markdown, HTML; one study or two side by side) are
:mod:`benchlab.report.study_output`.

Long because: the analysis's steps (groups, intervals, families, errors, ratios) read one
another's rows; apart, each would restate the row layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from benchlab.core.counted import COUNT_METHOD
from benchlab.core.suite import FACTORS, Suite
from benchlab.errors import UserError
from benchlab.report import study_cells, study_isolation
from benchlab.stats.bootstrap import bootstrap_ci
from benchlab.stats.ci_compare import compare_intervals
from benchlab.store.db import Store

TIME_METRICS = {"cpu": "harness CPU", "wall": "harness wall", "self_cpu": "program CPU",
                "self_wall": "program wall"}


@dataclass
class Group:
    """One cell × workload of the study, with its runs' values by metric (ns or counts)."""

    cell: dict[str, Any]
    label: str
    workload: str
    session_uid: str
    values: dict[str, np.ndarray]
    runs: list[dict]
    #: Counted metrics (suite ``count``): runs of their own, not aligned with ``values``.
    counts: dict[str, np.ndarray] = field(default_factory=dict)


def _load_groups(store: Store, study: dict) -> list[Group]:
    meta = study.get("metadata") or {}
    groups = []
    for label, info in (meta.get("cells") or {}).items():
        sess = store.get_session(info["session"])
        for bench in store.benchmarks(sess["id"]):
            ok = [r for r in store.runs(benchmark_id=bench["id"], include_warmup=False)
                  if r["status"] == "ok"]
            # Counted runs (valgrind) have no time: they give counts, never time values.
            runs = [r for r in ok if r["spawn_method"] != COUNT_METHOD]
            counted = [store.samples_of_run(r["id"]).get("instructions") for r in ok
                       if r["spawn_method"] == COUNT_METHOD]
            if not runs:
                continue
            ids = [r["id"] for r in runs]
            values: dict[str, np.ndarray] = {
                "cpu": np.array([r["user_ns"] + r["sys_ns"] for r in runs], dtype=float),
                "wall": np.array([r["wall_ns"] for r in runs], dtype=float),
            }
            for name in ("minflt", "majflt", "nvcsw", "nivcsw"):
                values[name] = np.array([r[name] for r in runs], dtype=float)
            values["max_rss"] = np.array([r["max_rss_kib"] for r in runs], dtype=float)
            per_run = [store.samples_of_run(i) for i in ids]
            for metric in ("self_wall", "self_cpu"):
                if all(metric in s and len(s[metric]) == 1 for s in per_run):
                    values[metric] = np.array([s[metric][0] for s in per_run], dtype=float)
            extra: dict[str, list[float]] = {}
            for k, rid in enumerate(ids):
                for m in store.measurements_of_run(rid):
                    if m["status"] == "ok" and m["value"] is not None:
                        extra.setdefault(f"{m['source']}:{m['name']}", [np.nan] * len(ids))[k] = \
                            m["value"]
            for key, vals in extra.items():
                values[key] = np.array(vals, dtype=float)
            counts = {"instructions": np.array([c[0] for c in counted if c], dtype=float)}
            groups.append(Group(cell=info["cell"], label=label, workload=bench["name"],
                                session_uid=sess["uid"], values=values, runs=runs,
                                counts=counts if any(counted) else {}))
    if not groups:
        raise UserError(f"study {study['uid']} has no completed runs to report; run it first "
                        f"(benchlab study run --resume {study['uid']})")
    return groups


def _intervals(x: np.ndarray, n_resamples: int, seed: int) -> tuple[tuple, tuple]:
    """(mean interval, sd interval): 0.95 bootstrap percentile; a constant count is exact."""
    if np.ptp(x) == 0:
        return (x[0], x[0]), (0.0, 0.0)
    mean, sd = (bootstrap_ci(x, stat, kind="percentile", seed=seed, n_resamples=n_resamples)
                for stat in ("mean", "sd"))
    return (float(mean.low), float(mean.high)), (float(sd.low), float(sd.high))


#: Added to the seed for the independent resampling that tests each verdict's stability.
ALT_SEED = 7919


def group_intervals(groups: list[Group], n_resamples: int, seed: int) -> list[dict]:
    """Mean, sd and 0.95 bootstrap percentile intervals per group and metric (ns; counts).

    ``_alt`` (not written to the tables): the same intervals from an independent resampling
    (seed + ALT_SEED), against which :func:`family_comparisons` checks each verdict.
    """
    rows = []
    for g in groups:
        series = [(m, g.values.get(m)) for m in TIME_METRICS] + list(g.counts.items())
        for metric, x in series:
            if x is None or x.size < 3 or (np.ptp(x) == 0 and metric not in g.counts):
                continue  # a constant time is a clock problem, not a result
            mean, sd = _intervals(x, n_resamples, seed)
            rows.append({**{f: g.cell[f] for f in FACTORS}, "workload": g.workload,
                         "metric": metric, "n": int(x.size), "mean_ns": float(x.mean()),
                         "mean_lo": mean[0], "mean_hi": mean[1],
                         "sd_ns": float(x.std(ddof=1)), "sd_lo": sd[0], "sd_hi": sd[1],
                         "cell": g.label,
                         "_alt": dict(zip(("mean", "sd"),
                                          _intervals(x, n_resamples, seed + ALT_SEED)))})
    return rows


def family_comparisons(intervals: list[dict], suite: Suite,
                       loads: dict[str, dict] | None = None) -> tuple[list[dict], list[dict]]:
    """Pairwise interval comparisons per factor family: (every comparison, counts per family).

    Each comparison says whether it is ``stable`` (the same verdict from the independent
    resampling) and whether its cells' loads differ (``load_differs``, from ``loads``:
    :func:`benchlab.report.study_cells.cell_loads`); the counts add ``unstable`` and
    ``load_differs`` per family.
    """
    loads = loads or {}
    detail, counts = [], {}
    for factor in FACTORS:
        levels = suite.levels[factor]
        if len(levels) < 2:
            continue
        others = [f for f in FACTORS if f != factor]
        index: dict[tuple, dict] = {}
        for row in intervals:
            key = tuple(row[f] for f in others) + (row["workload"], row["metric"], row[factor])
            index[key] = row
        for a, b in combinations(levels, 2):
            for key_a, row_a in index.items():
                if key_a[-1] != a:
                    continue
                row_b = index.get(key_a[:-1] + (b,))
                if row_b is None:
                    continue
                la, lb = loads.get(row_a.get("cell", "")), loads.get(row_b.get("cell", ""))
                differ = study_cells.loads_differ(la, lb)
                for stat in ("mean", "sd"):
                    # the second level (b) relative to the first (a), as the family reads
                    label = compare_intervals((row_a[f"{stat}_lo"], row_a[f"{stat}_hi"]),
                                              (row_b[f"{stat}_lo"], row_b[f"{stat}_hi"]))
                    alt = (compare_intervals(row_a["_alt"][stat], row_b["_alt"][stat])
                           if "_alt" in row_a and "_alt" in row_b else label)
                    family = f"{factor}: {b} vs {a}"
                    detail.append({"family": family, "statistic": stat, "metric": row_a["metric"],
                                   "workload": row_a["workload"],
                                   **{f: row_a[f] for f in others}, "result": label,
                                   "stable": "yes" if alt == label else "no",
                                   "loadavg_a": la["load_mean"] if la else math.nan,
                                   "loadavg_b": lb["load_mean"] if lb else math.nan,
                                   "load_differs": "yes" if differ else "no"})
                    c = counts.setdefault((family, row_a["metric"], stat),
                                          {"higher": 0, "lower": 0, "same": 0, "overlap": 0,
                                           "unstable": 0, "load_differs": 0})
                    c[label] += 1
                    c["unstable"] += alt != label
                    c["load_differs"] += differ
    summary = [{"family": fam, "metric": metric, "statistic": stat, **c}
               for (fam, metric, stat), c in sorted(counts.items())]
    return detail, summary


#: (time, the outside view, the program's view): the harness's and, under isolate, the
#: isolator's own (its meta file's ``time-wall`` and ``time``), in a container the engine's
#: (its cgroup's CPU time), each against the program's.
ERROR_PAIRS = (("wall", "wall", "self_wall"), ("cpu", "cpu", "self_cpu"),
               ("isolate_wall", "isolate:time-wall", "self_wall"),
               ("isolate_cpu", "isolate:time", "self_cpu"),
               ("container_cpu", "container:cpu_ns", "self_cpu"))


def measurement_errors(groups: list[Group]) -> list[dict]:
    """Outside minus program time per run (the harness's, and isolate's where it ran); mean, sd
    and relative error (sd / mean outside time)."""
    rows = []
    for g in groups:
        for kind, outside, inside in ERROR_PAIRS:
            harness, program = g.values.get(outside), g.values.get(inside)
            if harness is None or program is None:
                continue
            ok = np.isfinite(harness) & np.isfinite(program)  # a run without a meta file: NaN
            if not ok.any():
                continue
            harness, program = harness[ok], program[ok]
            diff = harness - program
            mean_runtime = float(harness.mean())
            sd = float(diff.std(ddof=1)) if diff.size > 1 else math.nan
            rows.append({**{f: g.cell[f] for f in FACTORS}, "workload": g.workload, "time": kind,
                         "n": int(diff.size), "mean_error_ns": float(diff.mean()),
                         "sd_error_ns": sd, "mean_runtime_ns": mean_runtime,
                         "relative_error": sd / mean_runtime if mean_runtime else math.nan})
    return rows


def parallel_run_ratio(runs: list[dict]) -> float | None:
    """The stability study's ratio for one cell's runs (all workloads): parallel time / total time.

    Total: first start to last result. Parallel: last result of a worker's first iteration to
    the first result of a worker's last iteration. None for a single worker.
    """
    workers = sorted({r["worker"] for r in runs})
    if len(workers) < 2:
        return None
    ends = {w: sorted(r["start_unix_ns"] + r["wall_ns"] for r in runs if r["worker"] == w)
            for w in workers}
    first_start = min(r["start_unix_ns"] for r in runs)
    last_end = max(e[-1] for e in ends.values())
    parallel = min(e[-1] for e in ends.values()) - max(e[0] for e in ends.values())
    total = last_end - first_start
    return max(0.0, parallel / total) if total > 0 else None


@dataclass
class StudyAnalysis:
    """Every table of a study's report (rows of plain data; times in ns)."""

    study: dict
    suite: Suite
    groups: list[Group]
    intervals: list[dict]
    detail: list[dict]
    families: list[dict]
    errors: list[dict]
    ratios: list[dict]
    correlations: list[dict]
    n_resamples: int
    isolation: list[dict] = field(default_factory=list)
    #: per cell label: its load average while it ran (:func:`study_cells.cell_loads`)
    loads: dict[str, dict] = field(default_factory=dict)

    def figures(self, key: str = "") -> list:
        """The stability study's figures (:mod:`benchlab.report.study_figures`); ``key``
        prefixes their file names."""
        from benchlab.report.study_figures import study_figures

        varied = [f for f in ("workers", "isolation") if len(self.suite.levels[f]) > 1]
        return study_figures(self.groups, self.families, self.ratios, self.correlations,
                             varied, key=key)


def analyse_study(store: Store, session: str, *, n_resamples: int = 2000,
                  seed: int = 1) -> StudyAnalysis:
    """The stability study's analysis of a study session (see the module docstring)."""
    study = store.get_session(session)
    if study["kind"] != "study":
        raise UserError(f"session {study['uid']} is a {study['kind']} session, not a study; "
                        f"pass the study's id (benchlab list shows kind)")
    suite = Suite.from_dict(study["protocol"])
    groups = _load_groups(store, study)
    loads = study_cells.cell_loads(store, groups)
    intervals = group_intervals(groups, n_resamples, seed)
    detail, families = family_comparisons(intervals, suite, loads)
    by_cell: dict[str, list[dict]] = {}
    for g in groups:
        by_cell.setdefault(g.label, []).extend(g.runs)
    ratios = []
    for label, runs in sorted(by_cell.items()):
        ratio = parallel_run_ratio(runs)
        if ratio is not None:
            ratios.append({"cell": label, "workers": len({r['worker'] for r in runs}),
                           "parallel_run_ratio": ratio})
    errors = measurement_errors(groups)
    return StudyAnalysis(study, suite, groups, intervals, detail, families, errors, ratios,
                         study_cells.cell_correlations(groups), n_resamples,
                         study_isolation.isolation_comparisons(
                             groups, detail, errors, ratios, suite.levels["isolation"], loads),
                         loads)
