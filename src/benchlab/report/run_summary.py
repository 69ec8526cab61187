"""Per-benchmark summaries of a stored session, with the warnings a careful reader needs.

Reads the store, computes with :mod:`benchlab.stats`, returns plain data; rendering is separate
(:func:`render_summary_table` for the terminal, ``to_dict`` for ``--json``).

Harness series (wall, user, sys, peak RSS) of a session run with ``-i`` summarise every run
that ran to its end, failed ones included (status ok, failed or signaled), as hyperfine
summarises and compares them and as the exports contain them
(:mod:`benchlab.store.formats.gather`); other sessions summarise their ok runs.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from benchlab.report.summary_numbers import middle, summary_numbers

# the tables' text, also named here (run, show and demo print summaries through this module)
from benchlab.report.summary_table import (  # noqa: F401
    COLUMN_PRIORITY,
    COLUMNS,
    render_summary_table,
    shared_warnings,
)
from benchlab.store.db import HARNESS_METRICS, Store
from benchlab.store.queries import PRIMARY_METRICS
from benchlab.store.rows import TIMED_STATUSES
from benchlab.units import format_value, plural

if TYPE_CHECKING:
    import numpy as np

#: A process shorter than this is dominated by the cost of spawning it (fork+exec ~0.3-1 ms).
SHORT_RUN_NS = 5_000_000
#: The first run counts as "much slower" when it exceeds the median of the rest by this factor.
FIRST_RUN_FACTOR = 2.0
#: Relative spread (MAD/median) above which results deserve suspicion.
HIGH_SPREAD = 0.05
#: Load per core at start above which other work competes for the CPU.
HIGH_LOAD_PER_CORE = 0.5


@dataclass
class SeriesSummary:
    """Summary of one series (a harness metric or a program-reported one) of a benchmark."""

    metric: str
    unit: str
    n: int
    median: float | None = None
    mad: float | None = None
    mean: float | None = None
    sd: float | None = None
    min: float | None = None
    max: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass
class BenchmarkSummary:
    """What ``benchlab run`` prints per benchmark."""

    name: str
    command: str | None
    runs_by_status: dict[str, int]
    wall: SeriesSummary
    user: SeriesSummary | None
    sys: SeriesSummary | None
    max_rss_kib: float | None
    program: list[SeriesSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (values in their units: ns, KiB, or the metric's unit)."""
        return asdict(self)


def summarize_series(values: np.ndarray | Sequence[float], metric: str,
                     unit: str) -> SeriesSummary:
    """Robust and classic summary of one series; tolerant of n < 3 (fewer fields). A list is
    summarised without numpy (:mod:`benchlab.report.summary_numbers`: the same numbers, bit
    for bit), an array with :func:`benchlab.stats.descriptive.summarize`."""
    if isinstance(values, (list, tuple)):
        return SeriesSummary(metric, unit, **summary_numbers(values))
    import numpy as np

    from benchlab.stats.descriptive import median, scaled_sd, summarize

    vals = np.asarray(values, dtype=float)
    vals = finite_only(vals)
    n = int(vals.size)
    if n == 0:
        return SeriesSummary(metric, unit, 0)
    if n < 3:
        med = median(vals)
        return SeriesSummary(metric, unit, n, median=med,
                             mad=median(np.abs(vals - med)), mean=float(vals.mean()),
                             sd=scaled_sd(vals) if n > 1 else None,
                             min=float(vals.min()), max=float(vals.max()))
    s = summarize(vals)
    return SeriesSummary(metric, unit, n, median=s.median, mad=s.mad_raw, mean=s.mean, sd=s.sd,
                         min=s.min, max=s.max, p95=s.p95, p99=s.p99)


def finite_only(values: np.ndarray) -> np.ndarray:
    """``values`` without NaN and inf: the array itself when every value is finite (no copy:
    show holds each series once, :class:`SamplesReadOnce`), else a filtered copy."""
    import numpy as np

    finite = np.isfinite(values)
    return values if finite.all() else values[finite]


def _median(values: Sequence[float]) -> float:
    """``stats.descriptive.median`` of a list: NaN when a value is NaN."""
    return math.nan if any(math.isnan(v) for v in values) else middle(sorted(values))


class SamplesReadOnce:
    """A store whose program-reported samples (:meth:`~benchlab.store.db.Store.sample_values`)
    are read once per benchmark and metric, then handed out again, read-only: ``show``
    summarises a series and then judges it, and reading and decoding 500,000 values costs
    ~0.01-0.02 s of CPU. Every other attribute is the store's."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._read: dict[tuple[int, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def sample_values(self, benchmark_id: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """The store's ``sample_values``, read on the first call only; arrays not writable (a
        caller that changed one in place would change what the next caller reads)."""
        import numpy as np

        key = (benchmark_id, metric)
        if key not in self._read:
            values, runs = self._store.sample_values(benchmark_id, metric)
            values.flags.writeable = False
            starts = np.flatnonzero(np.diff(runs, prepend=-1))  # kept as runs of one id each
            self._read[key] = values, runs[starts], np.diff(starts, append=runs.size)
        values, owners, counts = self._read[key]
        return values, np.repeat(owners, counts)


def tolerates_failures(store: Store, session_id: int) -> bool:
    """Whether the session was run with ``-i`` (any ``--ignore-failure``): its failed runs
    are measurements of the command, as in hyperfine."""
    session = store.get_session(session_id)
    protocol = session.get("protocol")
    return bool(isinstance(protocol, dict) and protocol.get("ignore_failure"))


def measured_values(store: Store, benchmark_id: int, metric: str = "wall", *,
                    with_failed: bool = True) -> np.ndarray:
    """A harness series (``metric`` of :data:`~benchlab.store.db.HARNESS_METRICS`: wall in ns,
    shell start-up subtracted, user/sys in ns, max_rss in KiB...) over the benchmark's
    non-warmup ok runs and, ``with_failed``, its failed or signaled ones (runs that ran to
    their end, kept by ``-i``: hyperfine summarises and compares their times), in execution
    order. NaN where a run lacks the value."""
    return store.harness_series(benchmark_id, metric,
                                TIMED_STATUSES if with_failed else ("ok",))


def session_summaries(store: Store, session_id: int) -> list[BenchmarkSummary]:
    """Summaries (with warnings) of every benchmark in a session."""
    session = next(s for s in store.sessions() if s["id"] == session_id)
    cores = os.cpu_count() or 1
    load = session.get("load_before")
    load_warning = None
    if isinstance(load, list) and load and load[0] / cores > HIGH_LOAD_PER_CORE:
        load_warning = (f"load average was {load[0]:.2f} at start ({load[0] / cores:.2f} per core): "
                        f"other work competed for the CPU; results may be noisy")
    failed_too = tolerates_failures(store, session_id)
    statuses = TIMED_STATUSES if failed_too else ("ok",)
    from benchlab.store.formats.tool_metadata import repetition_hint

    hint = repetition_hint(store.get_session(session_id).get("metadata"))
    out = []
    for bench in store.benchmarks(session_id):
        runs = store.runs(benchmark_id=bench["id"], include_warmup=False)
        by_status: dict[str, int] = {}
        for r in runs:
            by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        # lists, not arrays: a run of one command prints these numbers and needs no numpy
        wall, user, sys_, rss = (store.harness_list(bench["id"], m, statuses)
                                 for m in ("wall", "user", "sys", "max_rss"))
        summary = BenchmarkSummary(
            name=bench["name"], command=bench["command"], runs_by_status=by_status,
            wall=summarize_series(wall, "wall", "ns"),
            user=summarize_series(user, "user", "ns") if user else None,
            sys=summarize_series(sys_, "sys", "ns") if sys_ else None,
            max_rss_kib=_median(rss) if any(math.isfinite(v) for v in rss) else None)
        for metric in store.sample_metrics(bench["id"]):
            vals, _ = store.sample_values(bench["id"], metric)
            summary.program.append(summarize_series(vals, metric,
                                                    store.metric_unit(session_id, metric)))
        summary.warnings = _warnings(store, bench, runs, wall, summary, load_warning,
                                     failed_too)
        counts = [x.n for x in summary.program] or [0]
        if hint and summary.wall.n == 0 and 0 < max(counts) < 3:
            summary.warnings.insert(0, f"{plural(max(counts), 'value')} per series: too few "
                                       f"to analyse or compare; {hint}")
        out.append(summary)
    return out


def _warnings(store: Store, bench: dict, runs: list[dict], wall: list[float],
              summary: BenchmarkSummary, load_warning: str | None,
              failed_too: bool) -> list[str]:
    w: list[str] = []
    bad = {k: v for k, v in summary.runs_by_status.items() if k not in ("ok", "imported")}
    if bad:
        parts = ", ".join(f"{v} {k}" for k, v in sorted(bad.items()))
        timed = sum(v for k, v in bad.items() if k in TIMED_STATUSES) if failed_too else 0
        cut = sum(bad.values()) - timed
        how = ("their times are summarised and compared, as hyperfine -i does" if not cut else
               "only runs that ran to their end (ok, failed, signaled) are summarised"
               if timed else "only ok runs are summarised")
        w.append(f"{sum(bad.values())} of {plural(len(runs), 'run')} did not succeed ({parts}); "
                 f"{how}")
    if len(wall) >= 3:
        rest = _median(wall[1:])
        if rest > 0 and wall[0] > FIRST_RUN_FACTOR * rest:
            w.append(f"the first run took {wall[0] / rest:.1f}x the median of the others: "
                     f"caches or lazy loading; consider --warmup 1 or more")
    if summary.wall.median is not None and summary.wall.median < SHORT_RUN_NS:
        shell = any(r.get("shell_overhead_ns") for r in runs)
        w.append(f"runs take {format_value(summary.wall.median, 'ns')} (< 5 ms): the cost of "
                 f"starting a process dominates; measure more work per run"
                 + ("; the shell's start-up, subtracted, is not known more precisely than "
                    "this: run without a shell (-N)" if shell else ""))
    med, mad = summary.wall.median, summary.wall.mad
    if med and mad is not None and summary.wall.n >= 3 and mad / med > HIGH_SPREAD:
        w.append(f"high relative spread: MAD is {100 * mad / med:.1f}% of the median; "
                 f"check for background load, frequency scaling or a bimodal program")
    if load_warning:
        w.append(load_warning)
    return w


def verdict_series(store: Store, session_id: int, metric: str = "wall"
                   ) -> list[tuple[str, np.ndarray]]:
    """(benchmark name, values) in command order for the verdict on ``metric``: a harness
    metric (wall, user, sys, cpu: ns) over the runs :func:`measured_values` keeps (failed ones
    with ``-i``, as the summary and the exports: :func:`tolerates_failures`), or a program metric (``instructions`` from
    ``--count``, a ``--metric`` NAME) in its unit. Non-finite values and benchmarks without
    values are left out. Raises UserError for a metric no benchmark has."""

    from benchlab.errors import UserError

    out = []
    known: set[str] = set(HARNESS_METRICS)
    failed_too = tolerates_failures(store, session_id)
    for bench in store.benchmarks(session_id):
        program = store.sample_metrics(bench["id"])
        known.update(program)
        if metric in HARNESS_METRICS and metric not in program:
            values = measured_values(store, bench["id"], metric, with_failed=failed_too)
        elif metric in program:
            values, _ = store.sample_values(bench["id"], metric)
        else:
            continue
        values = finite_only(values)
        if values.size:
            out.append((bench["name"], values))
    if metric not in known:
        raise UserError(f"no benchmark of this session has metric {metric!r}; choose one of: "
                        f"{', '.join(sorted(known))} (--verdict-metric)")
    return out


def default_verdict_metric(store: Store, session_id: int) -> str:
    """The metric a session's verdict judges by default, as ``compare`` selects a series: the
    program's one metric (``--metric``) when the benchmarks report exactly one besides the
    counted ``instructions``; for an import without wall times, its tool's primary series
    (Google Benchmark's ``real_time``, pyperf's values); else wall time."""
    names: set[str] = set()
    has_wall = False
    for bench in store.benchmarks(session_id):
        names.update(m for m in store.sample_metrics(bench["id"]) if m != "instructions")
        has_wall = has_wall or bool(measured_values(store, bench["id"]).size)
    if len(names) == 1:
        return names.pop()
    primary = [m for m in PRIMARY_METRICS if m in names]
    return primary[0] if primary and not has_wall else "wall"


def count_lines(store: Store, session_id: int, baseline: str | None = None) -> list[str]:
    """The exact instruction counts (``--count instructions``) of every benchmark against the
    baseline, as lines of text: counts are exact, so their difference needs no test. Baseline:
    ``baseline`` (a benchmark name), else the fastest median wall time (the verdict's default).
    [] when fewer than two benchmarks were counted."""
    import numpy as np

    from benchlab.stats.descriptive import median

    try:
        counted = dict(verdict_series(store, session_id, "instructions"))
    except Exception:  # no benchmark counted: nothing to say
        return []
    if len(counted) < 2:
        return []
    if baseline not in counted:
        walls = {name: median(v) for name, v in verdict_series(store, session_id)
                 if name in counted}
        baseline = min(walls, key=walls.__getitem__) if walls else next(iter(counted))
    base = median(counted[baseline])
    lines = [f"instructions (exact counts under valgrind, baseline {baseline}: {base:,.0f}):"]
    for name, values in counted.items():
        if name == baseline:
            continue
        count = median(values)
        diff = count - base
        rel = f" ({100 * diff / base:+.2f} %)" if base > 0 else ""
        varies = "" if np.ptp(values) == 0 else f", median of {values.size} counts"
        lines.append(f"  {name}: {count:,.0f}, {diff:+,.0f}{rel} against {baseline}{varies}")
    return lines
