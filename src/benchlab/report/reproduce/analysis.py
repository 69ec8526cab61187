"""The analysis a bundle carries and ``benchlab reproduce --analysis-only`` recomputes.

Both sides compute it the same way, from the bundle's data alone: the sessions are written into
a scratch SQLite store (uids, names and times kept), the report is built from there with the
bundle's pinned settings (bootstrap seed, confidence level) and its time of generation fixed to
the newest session's end, and the numbers are written as canonical JSON. So the bundled report
is the report of the bundled data, and any machine that reads the bundle gets the same bytes.

What could differ between machines is pinned or recorded:

- random numbers: every bootstrap uses :data:`ANALYSIS_SEED` (stored in ``analysis.json``);
- float formatting: numbers in ``analysis.json`` are rounded to :data:`DIGITS` significant
  digits (``repr`` of the rounded value), so last-bit differences between libm/BLAS builds
  do not show; the Markdown report formats through :mod:`benchlab.units` with fixed digits;
- library versions (Python, numpy, scipy): recorded in ``provenance/software.json`` and
  compared with a warning by ``reproduce``.

The HTML report is bundled too (for people), but its plotting library writes random element
ids: :func:`stable_ids` renumbers them so the archive stays deterministic, and ``reproduce
--analysis-only`` compares it digest for digest too, with the Markdown report and
``analysis.json`` (a script added to the HTML would otherwise pass unseen).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from benchlab.core.scratch import make_scratch, remove_scratch, sweep_dead_scratch
from benchlab.store.bundle import Bundle, canonical_bytes, load_into_store, session_documents
from benchlab.store.rows import corrected_wall_ns

#: Seed of every bootstrap in the bundled analysis.
ANALYSIS_SEED = 1
#: Significant digits of every float in ``analysis.json``.
DIGITS = 12
ANALYSIS_MEMBER = "analysis/analysis.json"
REPORT_MD = "report/report.md"
REPORT_HTML = "report/report.html"

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_BOKEH_ID = re.compile(r'"p(\d{4,})"')


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to :data:`DIGITS` significant digits (NaN/inf ->
    None), recursively through dicts and lists."""
    if isinstance(value, dict):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{DIGITS}g}")
    return value


def stable_ids(html: str) -> str:
    """``html`` with the plotting library's random UUIDs and counter ids renumbered in order of
    first appearance, so the same report always has the same bytes."""
    uuids: dict[str, str] = {}
    ids: dict[str, str] = {}

    def uuid_for(m: re.Match) -> str:
        return uuids.setdefault(m.group(0), f"00000000-0000-4000-8000-{len(uuids):012d}")

    def id_for(m: re.Match) -> str:
        return ids.setdefault(m.group(1), f'"p{1000 + len(ids)}"')

    return _BOKEH_ID.sub(id_for, _UUID.sub(uuid_for, html))


def _series_numbers(metric: str, unit: str, values) -> dict[str, Any]:
    import numpy as np

    a = np.asarray(values, dtype=float)
    return {"metric": metric, "unit": unit, "n": int(a.size), "median": float(np.median(a)),
            "mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()),
            "sd": float(a.std(ddof=1)) if a.size > 1 else None}


def _instructions(bench: dict[str, Any]) -> float | None:
    import numpy as np

    counted = [v for r in bench["runs"] if not r["warmup"]
               for v in (r.get("samples") or {}).get("instructions", [])]
    counted += [m["value"] for r in bench["runs"] if not r["warmup"] and r["status"] == "ok"
                for m in r.get("measurements") or []
                if m.get("name") == "instructions" and m.get("status") == "ok"
                and m.get("value") is not None]
    return float(np.median(counted)) if counted else None


def wall_values(bench: dict[str, Any]) -> list[float]:
    """Wall times (ns, shell overhead subtracted, clamped at 0) of a benchmark document's
    measured runs (as ``benchlab report`` takes them)."""
    out = []
    for r in bench["runs"]:
        if r["warmup"] or r["status"] not in ("ok", "failed", "signaled") or r["wall_ns"] is None:
            continue
        out.append(float(corrected_wall_ns(r)))
    return out


_PREFERRED = ("real_time", "value")


def primary_values(session: dict[str, Any], bench: dict[str, Any]) -> tuple[str, str, list]:
    """(metric, unit, values) summarising a benchmark document, chosen as the report does:
    wall times (ns) when it has them, else its program metric (``real_time``, then ``value``,
    then the first by name) from its non-warmup ok/imported runs."""
    wall = wall_values(bench)
    if wall:
        return "wall", "ns", wall
    names = sorted({m for r in bench["runs"] for m in (r.get("samples") or {})
                    if m != "instructions"},
                   key=lambda n: (_PREFERRED.index(n) if n in _PREFERRED else 2, n))
    units = {m["name"]: m.get("unit") or "" for m in session.get("metrics") or []}
    for name in names:
        values = [float(v) for r in bench["runs"]
                  if not r["warmup"] and r["status"] in ("ok", "imported")
                  for v in (r.get("samples") or {}).get(name, [])]
        if values:
            return name, units.get(name, ""), values
    return "wall", "ns", []


def analyse_sessions(docs: list[dict[str, Any]], *, seed: int = ANALYSIS_SEED) -> dict[str, Any]:
    """The canonical analysis of session documents: per benchmark the summary of its primary
    series (:func:`primary_values`: wall time in ns, else its program metric) and median
    instructions per run; per session every benchmark against the last one (the report's
    reference) with :func:`benchlab.stats.verdict.compare_many` (Holm), as data."""
    from benchlab.stats.comparison import CompareOptions
    from benchlab.stats.verdict import compare_many

    sessions = []
    for s in docs:
        benches = {}
        series = {}
        for b in s["benchmarks"]:
            metric, unit, values = primary_values(s, b)
            entry: dict[str, Any] = {"instructions": _instructions(b)}
            if values:
                entry["series"] = _series_numbers(metric, unit, values)
            if len(values) >= 3:
                series[b["name"]] = (metric, values)
            benches[b["name"]] = entry
        comparisons = None
        # compared only within one metric: the report's reference is the last benchmark
        names = [n for n in series if series[n][0] == series[list(series)[-1]][0]] \
            if series else []
        if len(names) >= 2:
            baseline = names[-1]
            result = compare_many(series[baseline][1], {n: series[n][1] for n in names[:-1]},
                                  baseline_name=baseline,
                                  options=CompareOptions(seed=seed))
            comparisons = result.to_dict()
        sessions.append({"uid": s["uid"], "name": s.get("name"), "benchmarks": benches,
                         "comparisons": comparisons})
    return rounded({"seed": seed, "digits": DIGITS, "sessions": sessions})


def analysis_bytes(docs: list[dict[str, Any]], *, seed: int = ANALYSIS_SEED) -> bytes:
    """:func:`analyse_sessions` as canonical JSON bytes (the ``analysis.json`` member)."""
    return canonical_bytes(analyse_sessions(docs, seed=seed))


def render_reports(bundle: Bundle, *, seed: int = ANALYSIS_SEED,
                   html: bool = True) -> tuple[str, str | None]:
    """(Markdown, HTML) report of the bundle's sessions, rendered from a scratch store; HTML
    is None without ``html`` (its interactive figures are most of the rendering time).

    The generation time shown is the newest session's end (never the clock), so rendering
    twice, here or on another machine, gives the same Markdown.
    """
    from benchlab.report.html.render import render_html
    from benchlab.report.markdown import render_markdown
    from benchlab.report.model import build_report
    from benchlab.store.db import Store

    docs = session_documents(bundle)
    # benchlab-analysis-p<pid>-*: swept by the next session (or analysis) if this one is killed
    sweep_dead_scratch()
    tmp = make_scratch("analysis")
    try:
        store = Store.open(str(Path(tmp) / "bundle.db"))
        try:
            refs = load_into_store(store, bundle)
            model = build_report(store, [ref.uid for ref in refs], seed=seed)
        finally:
            store.close()
    finally:
        remove_scratch(tmp)
    ends = sorted(str(s.get("finished_utc") or s.get("created_utc") or "") for s in docs)
    model.generated_utc = (ends[-1].replace("T", " ")[:16] + " UTC") if ends[-1] else "unknown"
    return render_markdown(model), stable_ids(render_html(model)) if html else None
