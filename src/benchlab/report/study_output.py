"""A stability study's report as files: report.md, report.html, CSV tables and figures, for
one study or two side by side.

Every rendering draws on one list of tables (:func:`report_tables`), so Markdown and HTML show
the same rows. Two studies (``benchlab study report A B``: the platform's hyperthreading on
and off, a machine before and after a kernel change) give the same tables with a ``study``
column first, rows of A then B, plus **B vs A**: every group (factors, workload, metric) both
studies have, compared by their bootstrap intervals exactly as a factor's levels are (B
relative to A), with the resampling check and the load flag.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlab.core.suite import FACTORS
from benchlab.errors import UserError
from benchlab.report import study_isolation
from benchlab.report.study import StudyAnalysis, analyse_study
from benchlab.report.study_cells import LOAD_GAP_PER_CORE, loads_differ
from benchlab.stats.ci_compare import compare_intervals
from benchlab.store.db import Store
from benchlab.store.formats import spreadsheet_safe

NS_COLUMNS = {"mean_ns", "mean_lo", "mean_hi", "sd_ns", "sd_lo", "sd_hi", "mean_error_ns",
              "sd_error_ns", "mean_runtime_ns", "a_ns", "b_ns",
              *study_isolation.NS_COLUMNS}
CELL = ["isolation", "workers", "affinity", "load"]
RESULTS = ("higher", "lower", "same", "overlap")


@dataclass
class ReportTable:
    """One table of the report: its CSV file, heading, note, rows (ns) and shown columns."""

    csv: str
    title: str
    note: str
    rows: list[dict]
    columns: list[str]


def write_csv(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as CSV at ``path`` (columns: every key of every row, in order of first
    appearance; keys starting with ``_`` are not written); text cells never start a
    spreadsheet formula."""
    with open(path, "w", newline="") as fh:
        if not rows:
            fh.write("")
            return
        fields: dict[str, None] = {}
        for row in rows:  # rows of different families name different factors
            fields.update(dict.fromkeys(k for k in row if not k.startswith("_")))
        writer = csv.DictWriter(fh, fieldnames=list(fields), restval="")
        writer.writeheader()
        # names (workloads, factor levels) are the suite's text: never a spreadsheet formula
        writer.writerows({k: spreadsheet_safe(v) if isinstance(v, str) else v
                          for k, v in row.items() if not k.startswith("_")} for row in rows)


def _flagged(rows: list[dict], key: str) -> int:
    return sum(r.get(key) == "yes" for r in rows)


def report_tables(a: StudyAnalysis) -> list[ReportTable]:
    """The report's tables, in order (see :mod:`benchlab.report.study`)."""
    quota = ["cpu_quota_us"] if len(a.suite.levels.get("cpu_quota_us", [])) > 1 else []
    cell = CELL + quota
    loads = sorted(a.loads.values(), key=lambda r: r["cell"])
    return [
        ReportTable("loads.csv", "Load while each cell ran",
                    f"1-minute load average at the cell's start and end (per core: of "
                    f"{loads[0]['cores'] if loads else '?'} CPUs). Comparisons between cells "
                    f"whose mean loads differ by more than {LOAD_GAP_PER_CORE} per core are "
                    f"flagged load_differs: {_flagged(a.detail, 'load_differs')} of "
                    f"{len(a.detail)} here; their higher/lower may be the load's.",
                    loads, ["cell", "load_start", "load_end", "load_mean", "load_per_core"]),
        ReportTable("groups.csv", "Mean and sd per group (ms; the CSV files keep ns)", "",
                    a.intervals, cell + ["workload", "metric", "n", "mean_ns", "mean_lo",
                                         "mean_hi", "sd_ns", "sd_lo", "sd_hi"]),
        ReportTable("families.csv", "Comparisons per family (counts of groups)",
                    "Disjoint intervals: higher/lower (second level vs first); one engulfs the "
                    "other: same; otherwise overlap (no conclusion). unstable: verdicts an "
                    "independent resampling changes (resampling-sensitive at this n); "
                    "load_differs: comparisons of cells whose loads differ.",
                    a.families, ["family", "metric", "statistic", *RESULTS, "unstable",
                                 "load_differs"]),
        ReportTable("comparisons.csv", "", "", a.detail, []),  # CSV only: every comparison
        ReportTable("errors.csv", "Harness vs program (harness minus the program's own time)",
                    "", a.errors, cell + ["workload", "time", "n", "mean_error_ns",
                                          "sd_error_ns", "relative_error"]),
        ReportTable("parallel.csv", "Parallel-run ratio", "", a.ratios,
                    ["cell", "workers", "parallel_run_ratio"]),
        ReportTable("isolation.csv", "Isolation vs bare (the platform's comparisons)",
                    "Offset = mean wall minus bare's; startup = an empty run through the "
                    "level; mean/sd: interval comparison with bare (* = resampling-sensitive: "
                    "another resampling gives another verdict); err_sd: SD of harness minus "
                    "program time; loadavg: the cells' mean load.",
                    a.isolation, study_isolation.COLUMNS),
        ReportTable("correlations.csv", "Correlation with CPU time, within each cell",
                    "Per cell and workload, never pooled across cells: in a container the "
                    "harness's rusage is the engine client's, so a pooled r would measure the "
                    "difference between levels.",
                    a.correlations, cell + ["workload", "metric", "n", "pearson_r",
                                            "pearson_p", "spearman_rho", "spearman_p"]),
    ]


def _cell(v: Any, column: str) -> str:
    if isinstance(v, float) and column in NS_COLUMNS:
        return f"{v / 1e6:.3f}"
    if isinstance(v, float):
        return format(v, ".4g")
    return "" if v is None else str(v)


def _header(column: str) -> str:
    return column.replace("_ns", "_ms") if column in NS_COLUMNS else column


def md_table(rows: list[dict], columns: list[str]) -> str:
    """A Markdown table; nanosecond columns are shown in ms (the CSV files keep ns)."""
    if not rows:
        return "_(none)_\n"
    out = ["| " + " | ".join(_header(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_cell(r.get(c), c) for c in columns) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _marked(row: dict) -> bool:
    return row.get("load_differs") == "yes" or row.get("stable") == "no" or bool(
        row.get("unstable") or (isinstance(row.get("load_differs"), int)
                                and row["load_differs"] > 0))


def section(tables: list[ReportTable], anchor: str, title: str, intro: list[str],
            figures: list):
    """The tables as a report section (HTML and Markdown through the report model); rows
    with a load or stability flag are marked."""
    from benchlab.report.model import Section, Table

    return Section(anchor, title, intro, [
        Table(t.title + (f". {t.note}" if t.note else ""), [_header(c) for c in t.columns],
              [[_cell(r.get(c), c) for c in t.columns] for r in t.rows],
              [_marked(r) for r in t.rows]) for t in tables if t.columns], figures)


def study_section(store: Store, session: str, *, n_resamples: int = 2000, seed: int = 1,
                  analysis: StudyAnalysis | None = None):
    """One study as a report section (for ``benchlab report``)."""
    a = analysis or analyse_study(store, session, n_resamples=n_resamples, seed=seed)
    uid = a.study["uid"]
    return section(report_tables(a), f"study-{uid}", f"Stability study {uid} ({a.suite.name})",
                   [_intro(a)], a.figures())


def _intro(a: StudyAnalysis) -> str:
    return (f"{len(a.groups)} groups (cells × workloads), {sum(len(g.runs) for g in a.groups)} "
            f"ok runs; {a.n_resamples} bootstrap resamples, 0.95 percentile intervals (as the "
            f"grading platform's stability study).")


def versus(a: StudyAnalysis, b: StudyAnalysis) -> tuple[list[dict], list[dict]]:
    """B vs A: every (factors, workload, metric) group both studies have, compared by mean
    and sd intervals (B relative to A), with stability and load flags; and counts per metric
    and statistic."""
    def key(r: dict) -> tuple:
        return tuple(r.get(f) for f in FACTORS) + (r["workload"], r["metric"])

    index = {key(r): r for r in a.intervals}
    detail, counts = [], {}
    for rb in b.intervals:
        ra = index.get(key(rb))
        if ra is None:
            continue
        la, lb = a.loads.get(ra["cell"]), b.loads.get(rb["cell"])
        differ = loads_differ(la, lb)
        for stat in ("mean", "sd"):
            label = compare_intervals((ra[f"{stat}_lo"], ra[f"{stat}_hi"]),
                                      (rb[f"{stat}_lo"], rb[f"{stat}_hi"]))
            alt = compare_intervals(ra["_alt"][stat], rb["_alt"][stat])
            detail.append({**{f: rb.get(f) for f in FACTORS}, "workload": rb["workload"],
                           "metric": rb["metric"], "statistic": stat,
                           "a_ns": ra[f"{stat}_ns"], "b_ns": rb[f"{stat}_ns"],
                           "result": label, "stable": "yes" if alt == label else "no",
                           "loadavg_a": la["load_mean"] if la else math.nan,
                           "loadavg_b": lb["load_mean"] if lb else math.nan,
                           "load_differs": "yes" if differ else "no"})
            c = counts.setdefault((rb["metric"], stat), dict.fromkeys(
                (*RESULTS, "unstable", "load_differs"), 0))
            c[label] += 1
            c["unstable"] += alt != label
            c["load_differs"] += differ
    summary = [{"metric": m, "statistic": s, **c} for (m, s), c in sorted(counts.items())]
    return detail, summary


def _mkdir(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create report directory {out}: {exc.strerror}; "
                        f"pass -o DIR in a writable place") from None


def _joined(analyses: list[StudyAnalysis]) -> list[ReportTable]:
    """Each table with a ``study`` column, rows of every study in turn."""
    per = [report_tables(a) for a in analyses]
    out = []
    for k, first in enumerate(per[0]):
        rows = [{"study": a.study["uid"], **r} for a, tables in zip(analyses, per)
                for r in tables[k].rows]
        columns = max((tables[k].columns for tables in per), key=len)
        note = first.note
        if first.csv == "loads.csv":  # the flag counts of every study, not the first's
            flagged = sum(_flagged(a.detail, "load_differs") for a in analyses)
            note = note.replace(f": {_flagged(analyses[0].detail, 'load_differs')} of "
                                f"{len(analyses[0].detail)} here",
                                f": {flagged} of {sum(len(a.detail) for a in analyses)} "
                                f"within the studies")
        out.append(ReportTable(first.csv, first.title, note, rows,
                               ["study", *columns] if columns else []))
    return out


def write_study_report(store: Store, sessions: list[str] | str, *, out_dir: str | None = None,
                       n_resamples: int = 2000, seed: int = 1, plots: bool = True) -> list[str]:
    """Write report.md, report.html, CSV tables and figures (PNG and SVG) for one study
    session, or two side by side; return the written paths."""
    sessions = [sessions] if isinstance(sessions, str) else list(sessions)
    analyses = [analyse_study(store, s, n_resamples=n_resamples, seed=seed) for s in sessions]
    uids = [a.study["uid"] for a in analyses]
    if len(set(uids)) < len(uids):
        raise UserError("study report A B needs two different studies; pass two study ids")
    out = Path(out_dir or "study-" + "-vs-".join(uids))
    _mkdir(out)
    two = len(analyses) == 2
    tables = _joined(analyses) if two else report_tables(analyses[0])
    if two:
        detail, summary = versus(*analyses)
        tables[1:1] = [
            ReportTable("versus.csv", f"{uids[1]} vs {uids[0]} (counts of groups)",
                        f"Every group both studies have, {uids[1]} relative to {uids[0]}: "
                        f"disjoint intervals higher/lower, engulfed same, else overlap.",
                        summary, ["metric", "statistic", *RESULTS, "unstable", "load_differs"]),
            ReportTable("versus_detail.csv", f"{uids[1]} vs {uids[0]} per group", "", detail,
                        CELL + ["workload", "metric", "statistic", "a_ns", "b_ns", "result",
                                "stable",
                                "loadavg_a", "loadavg_b", "load_differs"])]
    written = []
    for t in tables:
        write_csv(out / t.csv, t.rows)
        written.append(str(out / t.csv))
    figures = [f for a in analyses for f in a.figures(a.study["uid"] if two else "")]
    images: list[str] = []
    if plots:
        from benchlab.report.plots import write_plots

        images = [str(p) for p in write_plots(figures, out)]
        written += images
    title = (f"Stability studies {uids[0]} and {uids[1]}" if two else
             f"Stability study {uids[0]} ({analyses[0].suite.name})")
    intro = [f"{a.study['uid']} ({a.suite.name}): {_intro(a)}" for a in analyses]
    md = [f"# {title}\n", *[i + "\n" for i in intro],
          f"Regenerate: `benchlab study report {' '.join(uids)}`\n"]
    for t in tables:
        if t.columns:
            md += [f"## {t.title}\n", *([t.note + "\n"] if t.note else []),
                   md_table(t.rows, t.columns)]
    if images:
        md.append("## Figures (also as SVG; all of them interactive in report.html)\n")
        for f in figures:  # the caption holds the key of numbered ticks
            md += [f"![{f.key}]({f.key}.png)\n", *([f"*{f.caption}*\n"] if f.caption else [])]
    (out / "report.md").write_text("\n".join(md))
    written.insert(0, str(out / "report.md"))
    if plots:
        written.insert(1, _write_html(section(tables, "study-" + "-".join(uids), title, intro,
                                              figures), out))
    return written


def _write_html(sec, out: Path) -> str:
    import datetime as _dt

    from benchlab.report.model import ReportModel
    from benchlab.report.output import write_model

    model = ReportModel(sec.title, _dt.datetime.now(_dt.timezone.utc)
                        .strftime("%Y-%m-%d %H:%M UTC"), extra=[sec])
    return str(write_model(model, str(out / "report.html")).path)
