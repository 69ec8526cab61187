"""What a report says, as plain data: read the store, compute with benchlab.stats, build figures.

One :class:`ReportModel` feeds every output format (HTML, Markdown, ``--plots`` PNG/SVG), so
the numbers in a pull-request comment and in the HTML page are the same numbers.

Selection: each selector is ``[SESSION:]NAME[/METRIC]`` (one series, as ``compare`` takes it)
or a session (uid, id or name: all its benchmarks). Nothing selected: the newest session. With
two or more series of one unit, every series is compared against the reference (the last one,
as in ``benchlab compare``, or ``reference``) with the JayBeams flow, Holm-adjusted.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from benchlab.environment import diff_environments
from benchlab.errors import UserError
from benchlab.report import figures as F
from benchlab.stats.bootstrap import bootstrap_ci
from benchlab.stats.descriptive import Summary, summarize
from benchlab.stats.independence import independence_and_acf
from benchlab.stats.outliers import mad_filtered_summary
from benchlab.stats.steady import detect_steady_state
from benchlab.store.db import Series, Store
from benchlab.store.rows import corrected_wall_ns
from benchlab.units import format_value

if TYPE_CHECKING:  # imported where used: scipy.stats (~1 s) is needed only to compare
    from benchlab.stats.verdict import CompareOptions, Comparison

#: Environment fields shown side by side per session (dotted path, label).
ENV_FIELDS = (("host.hostname", "host"), ("os.kernel.release", "kernel"), ("cpu.model", "CPU"),
              ("cpu.frequency.governor", "governor"), ("cpu.smt.active", "SMT"),
              ("benchlab.version", "benchlab"), ("python.version", "Python"),
              ("git.commit", "git commit"), ("git.dirty", "git dirty"))
STDERR_TAIL_CHARS = 2000
#: Fewest successful runs a series needs to be compared (the JayBeams flow, the rank test).
MIN_COMPARED = 3


@dataclass
class BenchmarkSection:
    """One series with its numbers (in ``series.unit``) and its four figures."""

    key: str
    series: Series
    command: str | None
    summary: Summary
    median_ci: tuple[float, float] | None
    mad_uncertainty: float
    n_outliers: int
    independence: Any
    steady: Any
    instructions: float | None
    figures: list[F.Figure]
    label: str = ""


@dataclass
class ComparisonSection:
    """Every candidate against one reference: the JayBeams results and relative speeds."""

    reference: str
    unit: str
    results: list[Comparison]
    ratios: list[dict]
    ratio_confidence: float
    figures: list[F.Figure]
    instructions: dict[str, float]
    #: The verdict's lines as run prints them (:func:`verdict_text.verdict_parts`).
    verdict_lines: list[tuple[str, str]] = field(default_factory=list)
    #: The JayBeams analysis decides (its every step is shown, else the data's checks only);
    #: Holm's procedure set the levels and p (False: one comparison, uncorrected).
    jaybeams: bool = False
    holm: bool = True


@dataclass
class SessionSection:
    """A session's identity, environment (with differences from the reference session),
    protocol, command lines and failed runs."""

    session: dict
    environment_rows: list[tuple[str, str, bool]]
    differences: list[tuple[str, Any, Any]]
    benchmarks: list[dict]
    failed_runs: list[dict]


@dataclass
class Table:
    """A table of already formatted cells; ``marked`` rows are highlighted (e.g. regressions)."""

    caption: str
    header: list[str]
    rows: list[list[str]]
    marked: list[bool] = field(default_factory=list)


@dataclass
class Section:
    """A generic report section (history, study, machine reports): prose, tables, figures."""

    anchor: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[F.Figure] = field(default_factory=list)


@dataclass
class ReportModel:
    """Everything a report shows; ``first``: an ab session's gate; ``extra``: study/history."""

    title: str
    generated_utc: str
    benchmarks: list[BenchmarkSection] = field(default_factory=list)
    comparison: ComparisonSection | None = None
    sessions: list[SessionSection] = field(default_factory=list)
    extra: list[Section] = field(default_factory=list)
    first: list[Section] = field(default_factory=list)
    colours: F.Colours = field(default_factory=F.Colours)
    notes: list[str] = field(default_factory=list)

    def figures(self) -> list[F.Figure]:
        """All figures in page order."""
        out = [f for s in [*self.first, *self.benchmarks] for f in s.figures]
        if self.comparison:
            out.extend(self.comparison.figures)
        for section in self.extra:
            out.extend(section.figures)
        return out


def select_series(store: Store, selectors: Sequence[str], metric: str | None) -> list[Series]:
    """Series named by the selectors (see the module docstring), in order, without repeats."""
    if not selectors:
        selectors = [store.newest_uid()]
    out: list[Series] = []
    for sel in selectors:
        try:
            found = [_timing_by_default(store, sel, metric)]
        except UserError:
            if ":" in sel or "/" in sel:
                raise
            sess = store.get_session(sel)  # raises the store's one-line error when unknown
            found = [_timing_by_default(store, f"{sess['uid']}:{b['name']}", metric)
                     for b in store.benchmarks(sess["id"])]
            if not found:
                raise UserError(f"session {sess['uid']} has no benchmarks; choose another "
                                f"(`benchlab list`)") from None
        for s in found:
            if all(s.benchmark_id != o.benchmark_id or s.metric != o.metric for o in out):
                out.append(s)
    return out


def _timing_by_default(store: Store, selector: str, metric: str | None) -> Series:
    """The store's default series, except that counted instructions (the only program metric
    of `run --count instructions`) are shown beside the timing, not instead of it."""
    series = store.resolve_series(selector, metric)
    if metric is None and series.metric == "instructions" \
            and not selector.endswith("/instructions"):  # asked for explicitly
        return store.resolve_series(selector, "wall")
    return series


def labels_of(series: Sequence[Series]) -> list[str]:
    """Benchmark names, qualified by session where two series share a name."""
    names = [s.benchmark for s in series]
    return [f"{s.session_uid}:{s.benchmark}" if names.count(s.benchmark) > 1 else s.benchmark
            for s in series]


def benchmark_section(store: Store, series: Series, label: str, colours: F.Colours,
                      index: int, *, seed: int = 1) -> BenchmarkSection:
    """Numbers and figures of one series (values in its unit; times in ns)."""
    x = series.values[np.isfinite(series.values)]
    if x.size == 0:
        raise UserError(f"{label} has no successful measured runs to report; check "
                        f"`benchlab show {series.session_uid}` for failed runs")
    bench = next(b for b in store.benchmarks(series.session_id) if b["id"] == series.benchmark_id)
    key = f"b{index}-{F.slug(label)}"
    summary = summarize(x)
    varied = x.size >= 3 and np.ptp(x) > 0
    ci = bootstrap_ci(x, "median", kind="percentile", n_resamples=2000, seed=seed) if varied \
        else None
    mad = mad_filtered_summary(x)
    independence, correlogram = independence_and_acf(x) if varied else (None, None)
    steady = detect_steady_state(x) if x.size >= 10 and np.ptp(x) > 0 else None
    runs = store.runs(benchmark_id=series.benchmark_id)
    warm = np.empty(0)
    if series.metric == "wall":
        warm = np.array([corrected_wall_ns(r) for r in runs
                         if r["warmup"] and r["status"] == "ok" and r["wall_ns"] is not None],
                        dtype=float)
    instructions = _instructions(store, series.benchmark_id, runs)
    colour = colours(label)
    figs = [F.distribution_figure(f"{key}-distribution", [(label, x)], series.unit, colours,
                                  series.metric),
            F.sequence_figure(f"{key}-sequence", label, x, series.unit, colour,
                              metric=series.metric, warmup=warm, steady=steady,
                              outliers=mad.flags.is_outlier)]
    if independence is not None:
        figs.append(F.acf_figure(f"{key}-acf", label, correlogram, colour,
                                 independence.threshold))
    figs.append(F.cdf_figure(f"{key}-cdf", [(label, x)], series.unit, colours, series.metric))
    return BenchmarkSection(key, series, bench.get("command"), summary,
                            (ci.low, ci.high) if ci else None, mad.uncertainty,
                            int(mad.n_total - mad.n_kept), independence, steady, instructions,
                            figs, label)


def _instructions(store: Store, benchmark_id: int, runs: list[dict]) -> float | None:
    """Median instructions per run, from counted runs (metric ``instructions``, e.g.
    cachegrind's) and perf counters of timed runs (measurement ``instructions``); else None."""
    counted, _ = store.sample_values(benchmark_id, "instructions")
    values = [float(v) for v in counted]
    for r in runs:
        if r["warmup"] or r["status"] != "ok":
            continue
        for m in store.measurements_of_run(r["id"]):
            if m["name"] == "instructions" and m["status"] == "ok" and m["value"] is not None:
                values.append(m["value"])
    return float(np.median(values)) if values else None


def comparison_section(series: Sequence[Series], labels: Sequence[str],
                       sections: Sequence[BenchmarkSection], reference: int,
                       colours: F.Colours, options: CompareOptions | None = None,
                       verdict: Any = None, sort: str = "auto") -> ComparisonSection | None:
    """The JayBeams comparison of every series against ``series[reference]`` (Holm when several).

    Relative speed = the verdict's Hodges-Lehmann ratio candidate / reference with its interval
    at the level of its Holm step (each row states it), the numbers run, show and compare print
    (docs/verdict.md); ``ratio_confidence`` is the family-wise level.
    """
    if len(series) < 2:
        return None
    ref = series[reference]
    units = {s.unit for s in series}
    if len(units) > 1:
        raise UserError(f"the selected series have different units ({', '.join(sorted(units))});"
                        f" compare series of one metric (--metric)")
    if len(set(labels)) != len(labels):
        raise UserError("two selected series have the same name; select them as SESSION:NAME")
    from benchlab.stats.verdict import CompareOptions, compare, compare_many

    options = options or CompareOptions()
    cands = [(labels[i], s) for i, s in enumerate(series) if i != reference]
    clean = (lambda s: s.values[np.isfinite(s.values)])
    if len(cands) == 1:
        results = [compare(clean(cands[0][1]), clean(ref), name_a=cands[0][0],
                           name_b=labels[reference], options=options)]
    else:
        results = compare_many(clean(ref), {n: clean(s) for n, s in cands},
                               baseline_name=labels[reference], options=options).comparisons
    if verdict is None or verdict.baseline != labels[reference]:
        # the one structured verdict every command prints (docs/verdict.md)
        from benchlab.stats.verdict_model import verdict_model

        verdict = verdict_model([(labels[i], clean(s)) for i, s in enumerate(series)],
                                baseline=labels[reference], metric=ref.metric,
                                unit=ref.unit or "ns",
                                confidence_level=options.resolved().confidence_level)
    from benchlab.report.verdict_text import align_dependence, table_row, verdict_parts

    align_dependence(results, verdict)
    # The relative time and its interval are the verdict's (Hodges-Lehmann ratio, each at its
    # Holm level, stated per row): a bootstrap ratio of medians at the Bonferroni level here
    # put a third pair of numbers beside the headline's and the analysis's for one comparison.
    table, confidence = verdict, verdict.confidence_level
    ratios = [{**table_row(table, name), "colour": colours(name)} for name, _ in cands]
    fig = F.interval_figure(
        "comparison-relative-speed", f"Relative time vs {labels[reference]} (the verdict's ratio)",
        f"Hodges-Lehmann ratio command / {labels[reference]} — below 1 is faster",
        [q for q in ratios if q["estimate"] is not None], reference=1.0,
        reference_label=f"{labels[reference]} (baseline)")
    fig.caption = (f"Interval: the verdict's, at {100 * confidence:.4g} %"
                   if table.correction == "none" else f"Intervals: the verdict's, each at its Holm step's level (family-wise "
                   f"{100 * confidence:.4g} %)") + ", as run, show and compare print them."
    instr = {lab: b.instructions for lab, b in zip(labels, sections)
             if b.instructions is not None}
    both = [(lab, clean(s)) for lab, s in zip(labels, series)]
    jaybeams = bool(options.resolved().jaybeams_compatible)  # its numbers, not the verdict's
    figs = [*([] if jaybeams else [fig]), F.distribution_figure("comparison-distribution", both, ref.unit, colours,
                                       ref.metric),
            F.cdf_figure("comparison-cdf", both, ref.unit, colours, ref.metric)]
    return ComparisonSection(labels[reference], ref.unit, results, ratios, confidence, figs,
                             instr, verdict_parts(table, sort), jaybeams,
                             table.correction != "none")


def _get(env: dict | None, path: str) -> Any:
    cur: Any = env
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    if isinstance(cur, dict) and "unknown" in cur:
        return f"unknown ({cur['unknown']})"
    return cur


def session_sections(store: Store, series: Sequence[Series], reference: int
                     ) -> list[SessionSection]:
    """Each distinct session of the series, its environment compared to the reference's."""
    uids = list(dict.fromkeys(s.session_uid for s in series))
    ref_uid = series[reference].session_uid if series else None
    ref_env = store.get_session(ref_uid).get("environment") if ref_uid else None
    out = []
    for uid in uids:
        sess = store.get_session(uid)
        env = sess.get("environment") if isinstance(sess.get("environment"), dict) else None
        renv = ref_env if isinstance(ref_env, dict) else None
        rows = [(label, "-" if _get(env, path) is None else str(_get(env, path)),
                 uid != ref_uid and env is not None and renv is not None
                 and _get(env, path) != _get(renv, path)) for path, label in ENV_FIELDS]
        diffs = diff_environments(env, renv) if (env and renv and uid != ref_uid) else []
        failed = []
        for r in store.runs(session_id=sess["id"]):
            if r["status"] in ("ok", "imported"):
                continue
            extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
            tail = extra.get("stderr_tail") or r.get("error") or ""
            tail = "\n".join(tail) if isinstance(tail, list) else str(tail)
            failed.append({**r, "stderr_tail": tail[-STDERR_TAIL_CHARS:]})
        out.append(SessionSection(sess, rows, diffs, store.benchmarks(sess["id"]), failed))
    return out


def build_report(store: Store, selectors: Sequence[str] = (), *, metric: str | None = None,
                 reference: str | None = None, options: CompareOptions | None = None,
                 title: str | None = None, seed: int = 1) -> ReportModel:
    """The report of the selected series (see the module docstring)."""
    series = select_series(store, selectors, metric)
    ref_index = len(series) - 1
    if reference is not None:
        ref = store.resolve_series(reference, metric)
        matches = [i for i, s in enumerate(series) if s.benchmark_id == ref.benchmark_id]
        if matches:
            ref_index = matches[0]
        else:
            series.append(ref)
            ref_index = len(series) - 1
    labels = labels_of(series)
    verdict, sequential, sort = None, [], "auto"
    if reference is None and len({s.session_uid for s in series}) == 1:
        # one session: its stored verdict and baseline, exactly as run and show give them
        from benchlab.report import speed_verdict

        session_id = store.get_session(series[0].session_uid)["id"]
        sequential = speed_verdict.sequential_verdict_lines(store, session_id)
        verdict = speed_verdict.session_verdict(store, session_id, metric=series[0].metric)
        sort = speed_verdict.stored_settings(store, session_id)["sort"]  # run's line order
        if verdict is not None and verdict.baseline in labels:
            ref_index = labels.index(verdict.baseline)
        else:
            verdict = None
    model = ReportModel(title or "benchlab report: " + ", ".join(labels[:6])
                        + (" ..." if len(labels) > 6 else ""),
                        _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    for lab in labels:  # colours follow selection order in every figure
        model.colours(lab)
    # A command whose runs all failed, or with too few runs to compare, is legal data: the
    # report says so and shows the rest (the failed runs stay listed per session).
    counts = [int(np.isfinite(s.values).sum()) for s in series]
    shown = [i for i, n in enumerate(counts) if n >= MIN_COMPARED]
    for i, n in enumerate(counts):
        if n == 0:
            model.notes.append(f"{labels[i]}: no successful measured run (its failed runs are "
                               f"listed under its session).")
        elif n < MIN_COMPARED:
            values = ", ".join(format_value(v, series[i].unit, 5)
                               for v in series[i].values[np.isfinite(series[i].values)])
            model.notes.append(f"{labels[i]}: only {n} successful run(s) ({values}); summaries "
                               f"and comparisons need at least {MIN_COMPARED}.")
    if not shown:
        raise UserError(f"none of {', '.join(labels)} has {MIN_COMPARED} or more successful "
                        f"runs to report; measure more (benchlab run -r N) or see the failed "
                        f"runs with `benchlab show {series[0].session_uid}`")
    model.benchmarks = [benchmark_section(store, series[i], labels[i], model.colours, i,
                                          seed=seed) for i in shown]
    if sequential:  # a fixed-sample interval or p is not valid after a sequential stop
        model.notes += sequential
    elif len(shown) > 1 and ref_index not in shown:
        model.notes.append(f"no comparison: the reference {labels[ref_index]} has too few "
                           f"successful runs.")
    elif len(shown) > 1:
        model.comparison = comparison_section(
            [series[i] for i in shown], [labels[i] for i in shown], model.benchmarks,
            shown.index(ref_index), model.colours, options, verdict, sort)
    model.sessions = session_sections(store, series, ref_index)
    return model

