"""``benchlab analyze``: everything one sample series can honestly say about itself.

Summary (classic and robust), outliers by the MAD rule (the TCP-latency report: raw MAD, k = 3, flagged not
dropped) and Tukey's fences, the uncertainty MAD / sqrt(n kept), percentiles of the kept values,
a bootstrap interval of the median, independence (max |ACF|, Ljung-Box, effective n), steady
state (warm-up, level shifts) and CDF points. The TCP-latency report's median is the median of *all* values
(taken before the filter); both medians are reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlab.stats.bootstrap import bootstrap_distribution, interval_with_fallback
from benchlab.stats.descriptive import cdf_points, summarize
from benchlab.stats.independence import check_independence
from benchlab.stats.outliers import mad_filtered_summary, tukey_outliers
from benchlab.stats.steady import detect_steady_state
from benchlab.stats.verdict_pair import LAG1_BAND_Z, band_z, series_dependence
from benchlab.store.db import Series
from benchlab.units import format_value

CDF_PROBABILITIES = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)


def analyze_series(series: Series, *, mad_k: float = 3.0, seed: int = 1,
                   n_resamples: int = 2000) -> dict[str, Any]:
    """The analysis of one series as plain data (values in the series' unit)."""
    x = series.values
    summary = summarize(x)
    mad = mad_filtered_summary(x, mad_k)
    tukey = {f"k={k:g}": int(tukey_outliers(x, k).is_outlier.sum()) for k in (1.5, 3.0)}
    result: dict[str, Any] = {
        "series": {"label": series.label, "metric": series.metric, "unit": series.unit,
                   "session": series.session_uid, "benchmark": series.benchmark, "n": int(x.size)},
        "summary": summary.to_dict(),
        "mad_filter": {k: v for k, v in mad.to_dict().items() if k != "flags"},
        "outliers": {"mad_rule": {"k": mad_k, "mad": "raw", "flagged": int(mad.n_total - mad.n_kept),
                                  "flagged_indices": np.flatnonzero(mad.flags.is_outlier).tolist()[:100]},
                     "tukey": tukey},
    }
    if x.size >= 1 and np.ptp(x) == 0:
        # Every value the same: the median is known exactly and no interval, independence or
        # steady state has anything to say. Deterministic counts (valgrind's instructions) are
        # like that; a constant *time* is suspicious and the note says what to check.
        result["median_ci"] = {"low": float(x[0]), "high": float(x[0]), "confidence": 1.0,
                               "kind": "exact", "n_resamples": 0, "seed": seed,
                               "fallback": None}
        if series.metric == "wall":
            result["constant_note"] = (
                f"all {x.size} times are the same: a command faster than the shell's start-up "
                f"(its time is 0 once the shell's cost is subtracted, as in hyperfine; run it "
                f"with -N, or measure more work per run) or a clock too coarse for it")
        elif series.unit != "count":
            result["constant_note"] = (f"all {x.size} values are the same: there is no spread "
                                       f"to analyse (a coarse clock or a quantised metric?)")
    else:
        # BCa, or the percentile interval where ties on a clock grid leave BCa undefined.
        dist = bootstrap_distribution(x, "median", n_resamples=n_resamples, seed=seed)
        ci = interval_with_fallback(dist, "bca", 0.95)
        result["median_ci"] = {"low": ci.low, "high": ci.high, "confidence": ci.confidence,
                               "kind": ci.kind, "n_resamples": ci.n_resamples, "seed": ci.seed,
                               "fallback": ci.extra.get("fallback")}
    if x.size >= 3 and np.ptp(x) > 0:
        ind = check_independence(x)
        # the verdict's rule, whose threshold scales with n (max |ACF| >= 0.05 flagged almost
        # every independent series of up to 1000 runs): verdict_pair.series_dependence
        dep = series_dependence(x)
        result["independence"] = {
            "max_abs_acf": ind.max_abs_acf, "at_lag": ind.max_abs_acf_lag, "max_lag": ind.max_lag,
            "threshold": band_z(int(x.size), LAG1_BAND_Z) / float(np.sqrt(x.size)), "passed": not dep.flagged,
            "ljung_box_statistic": ind.ljung_box.statistic,
            "ljung_box_p": ind.ljung_box.p_value,
            "effective_n": dep.effective_n if dep.flagged else ind.effective_n}
    if x.size >= 10 and np.ptp(x) > 0:
        steady = detect_steady_state(x)
        result["steady_state"] = {
            "classification": steady.classification, "steady_from": steady.steady_from,
            "warmup_end": steady.warmup_end, "level_shifts": steady.level_shifts,
            "segments": [{"start": s.start, "stop": s.stop, "median": s.median}
                         for s in steady.segments], "method": steady.method}
    sorted_x, probs = cdf_points(x)
    qs = np.quantile(sorted_x, CDF_PROBABILITIES, method="inverted_cdf")
    result["cdf"] = [{"p": p, "value": float(v)} for p, v in zip(CDF_PROBABILITIES, qs)]
    return result


def render_analysis(a: dict[str, Any], console) -> None:
    """Print an analysis as readable text."""
    unit = a["series"]["unit"]
    f = (lambda v: format_value(v, unit, digits=6))
    s, m = a["summary"], a["mad_filter"]
    ser = a["series"]
    console.print(f"[bold]{ser['benchmark']}[/bold] / {ser['metric']} (session {ser['session']}), "
                  f"n = {ser['n']}")
    ci = a["median_ci"]
    kind = "BCa" if ci["kind"] == "bca" else f"{ci['kind']} (BCa undefined on tied values)"
    interval = (f"95% {kind} CI {f(ci['low'])} .. {f(ci['high'])}" if ci["kind"] != "exact"
                else f"exact: every {'count' if unit == 'count' else 'value'} is the same")
    cv = f"CV {100 * s['cv']:.2f}%" if np.isfinite(s["cv"]) else "CV undefined (mean 0)"
    console.print(f"  median {f(s['median'])}  ({interval})   mean {f(s['mean'])} ± sd "
                  f"{f(s['sd'])}  {cv}")
    if a.get("constant_note"):
        console.print(f"  [bold]note[/bold]: {a['constant_note']}")
    console.print(f"  min {f(s['min'])}  q1 {f(s['q1'])}  q3 {f(s['q3'])}  max {f(s['max'])}  "
                  f"IQR {f(s['iqr'])}")
    console.print(f"  p90 {f(s['p90'])}  p95 {f(s['p95'])}  p99 {f(s['p99'])}  "
                  f"p99.9 {f(s['p99_9'])}  (R type 7 interpolation)")
    console.print(f"  MAD raw {f(s['mad_raw'])}, scaled (x1.4826, estimates sd) {f(s['mad_scaled'])}")
    o = a["outliers"]
    console.print(f"[bold]outliers[/bold] (flagged, never dropped): MAD rule |x - median| > "
                  f"{o['mad_rule']['k']:g} x raw MAD: {o['mad_rule']['flagged']}; Tukey fences "
                  f"1.5 IQR: {o['tukey']['k=1.5']}, 3 IQR: {o['tukey']['k=3']}")
    console.print(f"[bold]after the MAD filter[/bold] (3 MADs, as the TCP-latency report): kept {m['n_kept']} of "
                  f"{m['n_total']}; median of all {f(m['median_all'])}, of kept "
                  f"{f(m['median_kept'])}; mean of kept {f(m['mean_kept'])}; "
                  f"uncertainty MAD/sqrt(n kept) {f(m['uncertainty'])}; "
                  f"p95 {f(m['p95_kept'])}, p99 {f(m['p99_kept'])}, min {f(m['min_kept'])}, "
                  f"max {f(m['max_kept'])}")
    ind = a.get("independence")
    if ind:
        status = "PASSED" if ind["passed"] else "WARNING"
        console.print(f"[bold]independence[/bold] {status}: max |ACF| {ind['max_abs_acf']:.4f} at "
                      f"lag {ind['at_lag']} (lags 1..{ind['max_lag']}; warns when lag 1 is above "
                      f"{ind['threshold']:.3g} = 1.645/sqrt(n), 0.84/sqrt(n) below 20 runs, or "
                      "Ljung-Box p < 0.01); Ljung-Box "
                      f"Q {ind['ljung_box_statistic']:.4g}, p {ind['ljung_box_p']:.3g}; "
                      f"effective n {ind['effective_n']:.1f}"
                      + ("" if ind["passed"] else ": intervals that assume independent runs "
                         "are too narrow; a verdict counts these as that many"))
    st = a.get("steady_state")
    if st:
        shifts = ", ".join(map(str, st["level_shifts"])) or "none"
        steady = (f"steady from run {st['steady_from']}" if st["steady_from"] is not None
                  else "no steady segment at the end")
        warmup = (f"; warm-up ends at {st['warmup_end']}" if st["warmup_end"] is not None
                  else "")
        console.print(f"[bold]steady state[/bold]: {st['classification']}; {steady}{warmup}; "
                      f"level shifts at {shifts}")
    console.print("[bold]CDF[/bold]: " + "  ".join(f"p{100 * c['p']:g}={f(c['value'])}"
                                                  for c in a["cdf"]))
