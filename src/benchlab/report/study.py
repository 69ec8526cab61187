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
  CPU time, per workload, pooled over cells;
- **isolation vs bare**: the platform's comparisons per isolation level
  (:mod:`benchlab.report.study_isolation`).

Long because: one analysis and its three renderings (CSV, Markdown, report section) together.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from benchlab.core.counted import COUNT_METHOD
from benchlab.core.suite import FACTORS, Suite
from benchlab.errors import UserError
from benchlab.report import study_isolation
from benchlab.stats.bootstrap import bootstrap_ci
from benchlab.stats.ci_compare import compare_intervals
from benchlab.stats.correlation import pearson, spearman
from benchlab.store.db import Store
from benchlab.store.formats import spreadsheet_safe

TIME_METRICS = {"cpu": "harness CPU", "wall": "harness wall", "self_cpu": "program CPU",
                "self_wall": "program wall"}
CORRELATED = ("wall", "minflt", "majflt", "nvcsw", "nivcsw", "max_rss")


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


def group_intervals(groups: list[Group], n_resamples: int, seed: int) -> list[dict]:
    """Mean, sd and 0.95 bootstrap percentile intervals per group and metric (ns; counts)."""
    rows = []
    for g in groups:
        series = [(m, g.values.get(m)) for m in TIME_METRICS] + list(g.counts.items())
        for metric, x in series:
            if x is None or x.size < 3 or (np.ptp(x) == 0 and metric not in g.counts):
                continue  # a constant time is a clock problem, not a result
            # Constant counts are exact: the interval is the count, so cells compare exactly.
            mean, sd = ((x[0], x[0]), (0.0, 0.0)) if np.ptp(x) == 0 else (
                (c.low, c.high) for c in (bootstrap_ci(x, stat, kind="percentile", seed=seed,
                                                       n_resamples=n_resamples)
                                          for stat in ("mean", "sd")))
            rows.append({**{f: g.cell[f] for f in FACTORS}, "workload": g.workload,
                         "metric": metric, "n": int(x.size), "mean_ns": float(x.mean()),
                         "mean_lo": float(mean[0]), "mean_hi": float(mean[1]),
                         "sd_ns": float(x.std(ddof=1)), "sd_lo": sd[0], "sd_hi": sd[1]})
    return rows


def family_comparisons(intervals: list[dict], suite: Suite) -> tuple[list[dict], list[dict]]:
    """Pairwise interval comparisons per factor family: (every comparison, counts per family)."""
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
                for stat in ("mean", "sd"):
                    # the second level (b) relative to the first (a), as the family reads
                    label = compare_intervals((row_a[f"{stat}_lo"], row_a[f"{stat}_hi"]),
                                              (row_b[f"{stat}_lo"], row_b[f"{stat}_hi"]))
                    family = f"{factor}: {b} vs {a}"
                    detail.append({"family": family, "statistic": stat, "metric": row_a["metric"],
                                   "workload": row_a["workload"],
                                   **{f: row_a[f] for f in others}, "result": label})
                    c = counts.setdefault((family, row_a["metric"], stat),
                                          {"higher": 0, "lower": 0, "same": 0, "overlap": 0})
                    c[label] += 1
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


def correlations(groups: list[Group]) -> list[dict]:
    """Pearson and Spearman of each metric with harness CPU time, per workload (pooled cells)."""
    rows = []
    for workload in sorted({g.workload for g in groups}):
        gs = [g for g in groups if g.workload == workload]
        cpu = np.concatenate([g.values["cpu"] for g in gs])
        names = sorted({k for g in gs for k in g.values} - {"cpu", "self_cpu", "self_wall"})
        for name in names:
            if not all(name in g.values for g in gs):
                continue
            x = np.concatenate([g.values[name] for g in gs])
            ok = np.isfinite(x) & np.isfinite(cpu)
            if ok.sum() < 4 or np.ptp(x[ok]) == 0 or np.ptp(cpu[ok]) == 0:
                continue
            p = pearson(x[ok], cpu[ok])
            s = spearman(x[ok], cpu[ok])
            rows.append({"workload": workload, "metric": name, "n": int(ok.sum()),
                         "pearson_r": p.estimate, "pearson_p": p.p_value,
                         "spearman_rho": s.estimate, "spearman_p": s.p_value})
    return rows


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as fh:
        if not rows:
            fh.write("")
            return
        fields: dict[str, None] = {}
        for row in rows:  # rows of different families name different factors
            fields.update(dict.fromkeys(row))
        writer = csv.DictWriter(fh, fieldnames=list(fields), restval="")
        writer.writeheader()
        # names (workloads, factor levels) are the suite's text: never a spreadsheet formula
        writer.writerows({k: spreadsheet_safe(v) if isinstance(v, str) else v
                          for k, v in row.items()} for row in rows)


_NS_COLUMNS = {"mean_ns", "mean_lo", "mean_hi", "sd_ns", "sd_lo", "sd_hi", "mean_error_ns",
               "sd_error_ns", "mean_runtime_ns", *study_isolation.NS_COLUMNS}


def _md_table(rows: list[dict], columns: list[str], fmt: dict[str, str] | None = None) -> str:
    """A Markdown table; nanosecond columns are shown in ms (the CSV files keep ns)."""
    fmt = fmt or {}
    if not rows:
        return "_(none)_\n"
    header = [c.replace("_ns", "_ms") if c in _NS_COLUMNS else c for c in columns]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            if isinstance(v, float) and c in _NS_COLUMNS:
                cells.append(f"{v / 1e6:.3f}")
            elif isinstance(v, float):
                cells.append(format(v, fmt.get(c, ".4g")))
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


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

    def figures(self) -> list:
        """The stability study's figures (:mod:`benchlab.report.study_figures`)."""
        from benchlab.report.study_figures import study_figures

        varied = [f for f in ("workers", "isolation") if len(self.suite.levels[f]) > 1]
        return study_figures(self.groups, self.families, self.ratios, self.correlations,
                             varied)


def analyse_study(store: Store, session: str, *, n_resamples: int = 2000,
                  seed: int = 1) -> StudyAnalysis:
    """The stability study's analysis of a study session (see the module docstring)."""
    study = store.get_session(session)
    if study["kind"] != "study":
        raise UserError(f"session {study['uid']} is a {study['kind']} session, not a study; "
                        f"pass the study's id (benchlab list shows kind)")
    suite = Suite.from_dict(study["protocol"])
    groups = _load_groups(store, study)
    intervals = group_intervals(groups, n_resamples, seed)
    detail, families = family_comparisons(intervals, suite)
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
                         correlations(groups), n_resamples,
                         study_isolation.isolation_comparisons(
                             groups, detail, errors, ratios, suite.levels["isolation"]))


def study_section(store: Store, session: str, *, n_resamples: int = 2000, seed: int = 1,
                  analysis: StudyAnalysis | None = None):
    """The study as a report section (tables in ms and figures) for HTML and Markdown."""
    from benchlab.report.model import Section, Table

    a = analysis or analyse_study(store, session, n_resamples=n_resamples, seed=seed)

    def table(caption: str, rows: list[dict], columns: list[str]) -> Table:
        header = [c.replace("_ns", " (ms)") if c in _NS_COLUMNS else c for c in columns]
        return Table(caption, header, [[_cell(r.get(c), c) for c in columns] for r in rows])

    uid = a.study["uid"]
    return Section(f"study-{uid}", f"Stability study {uid} ({a.suite.name})", [
        f"{len(a.groups)} groups (cells × workloads), {sum(len(g.runs) for g in a.groups)} ok "
        f"runs; {a.n_resamples} bootstrap resamples, 0.95 percentile intervals (as the grading platform's stability study)."], [
        table("Comparisons per family (counts of groups)", a.families,
              ["family", "metric", "statistic", "higher", "lower", "same", "overlap"]),
        table("Harness vs program (harness minus the program's own time)", a.errors,
              ["isolation", "workers", "affinity", "load", "workload", "time", "n",
               "mean_error_ns", "sd_error_ns", "relative_error"]),
        table("Parallel-run ratio", a.ratios, ["cell", "workers", "parallel_run_ratio"]),
        table("Isolation vs bare (the platform's comparisons)", a.isolation,
              study_isolation.COLUMNS),
        table("Correlation with CPU time", a.correlations,
              ["workload", "metric", "n", "pearson_r", "pearson_p", "spearman_rho",
               "spearman_p"])], a.figures())


def _cell(v: Any, column: str) -> str:
    if isinstance(v, float) and column in _NS_COLUMNS:
        return f"{v / 1e6:.3f}"
    if isinstance(v, float):
        return format(v, ".4g")
    return str(v)


def write_study_report(store: Store, session: str, *, out_dir: str | None = None,
                       n_resamples: int = 2000, seed: int = 1, plots: bool = True) -> list[str]:
    """Write report.md, report.html, CSV tables and figures (PNG and SVG) for a study
    session; return the written paths."""
    a = analyse_study(store, session, n_resamples=n_resamples, seed=seed)
    study, suite, groups, intervals = a.study, a.suite, a.groups, a.intervals
    detail, families, errors, ratios, corr = a.detail, a.families, a.errors, a.ratios, \
        a.correlations
    out = Path(out_dir or f"study-{study['uid']}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create report directory {out}: {exc.strerror}; "
                        f"pass -o DIR in a writable place") from None
    tables = {"groups.csv": intervals, "comparisons.csv": detail, "families.csv": families,
              "errors.csv": errors, "parallel.csv": ratios, "correlations.csv": corr,
              "isolation.csv": a.isolation}
    written = []
    for name, rows in tables.items():
        _write_csv(out / name, rows)
        written.append(str(out / name))
    images: list[str] = []
    if plots:
        from benchlab.report.plots import write_plots

        images = [str(p) for p in write_plots(a.figures(), out)]
        written += images
    md = [f"# Stability study {study['uid']} ({suite.name})\n",
          f"{len(groups)} groups (cells × workloads), {sum(len(g.runs) for g in groups)} ok runs; "
          f"{n_resamples} bootstrap resamples, 0.95 percentile intervals.\n",
          "Regenerate: `benchlab study report " + study["uid"] + "`\n",
          "## Mean and sd per group (ms; the CSV files keep ns)\n",
          _md_table(intervals, ["isolation", "workers", "affinity", "load", "workload", "metric",
                                "n", "mean_ns", "mean_lo", "mean_hi", "sd_ns", "sd_lo", "sd_hi"]),
          "## Comparisons per family (counts of groups)\n",
          "Disjoint intervals: higher/lower (second level vs first); one engulfs the other: "
          "same; otherwise overlap (no conclusion).\n\n",
          _md_table(families, ["family", "metric", "statistic", "higher", "lower", "same",
                               "overlap"]),
          "## Harness vs program (harness minus the program's own time)\n",
          _md_table(errors, ["isolation", "workers", "affinity", "load", "workload", "time", "n",
                             "mean_error_ns", "sd_error_ns", "relative_error"]),
          "## Parallel-run ratio\n",
          _md_table(ratios, ["cell", "workers", "parallel_run_ratio"], {"parallel_run_ratio": ".3f"}),
          "## Isolation vs bare (the platform's comparisons)\n",
          "Offset = mean wall minus bare's; startup = an empty run through the level; mean/sd: "
          "interval comparison with bare; err_sd: SD of harness minus program time.\n\n",
          _md_table(a.isolation, study_isolation.COLUMNS),
          "## Correlation with CPU time\n",
          _md_table(corr, ["workload", "metric", "n", "pearson_r", "pearson_p", "spearman_rho",
                           "spearman_p"])]
    pngs = [p for p in images if p.endswith(".png")]
    if pngs:
        md.append("## Figures (also as SVG; all of them interactive in report.html)\n")
        md += [f"![{Path(p).stem}]({Path(p).name})\n" for p in pngs]
    (out / "report.md").write_text("\n".join(md))
    written.insert(0, str(out / "report.md"))
    if plots:
        written.insert(1, _write_html(store, a, out))
    return written


def _write_html(store: Store, a: StudyAnalysis, out: Path) -> str:
    import datetime as _dt

    from benchlab.report.model import ReportModel
    from benchlab.report.output import write_model

    section = study_section(store, a.study["uid"], analysis=a)
    model = ReportModel(section.title, _dt.datetime.now(_dt.timezone.utc)
                        .strftime("%Y-%m-%d %H:%M UTC"), extra=[section])
    return str(write_model(model, str(out / "report.html")).path)
