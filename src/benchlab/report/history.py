"""A benchmark's history: every session that measured it, in time order, labelled by git commit.

Per session: the median with its exact distribution-free 95 % interval, two order statistics
``[x_(k), x_(n-k+1)]`` chosen from Binomial(n, 1/2) (``benchlab.stats.median_interval``): no
resampling, so 200 sessions cost a sort each, and the same numbers on every run.

Steps are change points of the whole series of session medians
(:func:`benchlab.stats.changepoint.change_points`): the session is the unit of replication,
so the offsets every session gets as a whole (0.5-1 % on real machines: reboots, placement)
are part of the noise, not steps (Kalibera & Jones). Testing consecutive sessions run against
run, as this module did before, flagged a false regression in 83 % of simulated 30-session
histories with such offsets; change points flag 1-2 % (``bench/history_alarms.py``). A step
needs the segment's permutation p < alpha AND a ratio of at least ``min_effect_relative``
between the medians after and before: a regression when later sessions are slower (a higher
value of a timing or another lower-is-better metric; a lower value of a throughput, whose unit
is per second, or of any metric given as higher-is-better), an improvement when faster.
``shift`` is the change of the level (median of the segment after minus before), with its t
interval.

Environment markers: where the kernel release, CPU model, frequency governor or benchlab
version differs from the previous session's, so a reader sees "slower since commit abc — and
the kernel changed there too". Commits come from each session's environment (``git.commit``);
sessions are ordered by creation time, which is commit order only when commits were measured
in the order they were made (benchlab does not read the git graph).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.report import figures as F
from benchlab.report.model import Section, Table
from benchlab.report.text_table import aligned_lines
from benchlab.stats.median_interval import median_order_interval
from benchlab.store.db import Store
from benchlab.units import format_value, plural

#: Environment fields whose change is marked on the history (dotted path, label).
MARKED_FIELDS = (("os.kernel.release", "kernel"), ("cpu.model", "CPU model"),
                 ("cpu.frequency.governor", "governor"), ("benchlab.version", "benchlab"))


@dataclass
class HistoryPoint:
    """One session of the benchmark: its median and interval (unit of the metric)."""

    session_uid: str
    session_name: str | None
    created_utc: str
    commit: str | None
    n: int
    median: float
    low: float
    high: float
    env_changes: list[str] = field(default_factory=list)
    step: str | None = None  # "regression" / "improvement" relative to the previous point
    shift: float | None = None
    shift_low: float | None = None
    shift_high: float | None = None
    p_adjusted: float | None = None


@dataclass
class History:
    """The history of ``benchmark`` / ``metric`` (values in ``unit``)."""

    benchmark: str
    metric: str
    unit: str
    points: list[HistoryPoint]
    alpha: float
    min_effect_relative: float
    min_effect_abs: float | None = None
    """Smallest step in the metric's unit (``--min-effect 1ms``); replaces the relative one."""
    higher_is_better: bool = False
    """True for a throughput (MB/s, ops/s): a lower level is then the regression."""


def _env_value(env: Any, path: str) -> Any:
    cur = env
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    if isinstance(cur, dict) and "unknown" in cur:
        return None
    return cur


def build_history(store: Store, benchmark: str, *, metric: str | None = None,
                  alpha: float = 0.01, min_effect_relative: float = 0.01,
                  min_effect_abs: float | None = None, direction: str | None = None) -> History:
    """Every session with a benchmark called ``benchmark``, oldest first, with steps flagged.
    Values in the metric's unit; ``min_effect_abs`` (that unit), when given, is the smallest
    step instead of ``min_effect_relative`` of the previous median. ``direction`` ("higher" or
    "lower" is better; None: from the unit, per second is higher) says which step regresses."""
    from benchlab.units import higher_is_better

    sessions = sorted(store.sessions(), key=lambda s: (s["created_utc"], s["id"]))
    found = []
    for sess in sessions:
        if any(b["name"] == benchmark for b in store.benchmarks(sess["id"])):
            series = store.resolve_series(f"{sess['uid']}:{benchmark}", metric)
            values = series.values[np.isfinite(series.values)]
            if values.size:
                found.append((sess, series, values))
    if not found:
        raise UserError(f"no session in {store.path} has successful runs of a benchmark named "
                        f"{benchmark!r}; see `benchlab list` and `benchlab show SESSION`")
    units = {s.unit for _, s, _ in found}
    if len(units) > 1:
        raise UserError(f"{benchmark!r} has metric {found[0][1].metric!r} in different units "
                        f"({', '.join(sorted(units))}); choose one with --metric")
    points = []
    previous_env = None
    for sess, series, values in found:
        interval = median_order_interval(values, 0.95)
        low, high = interval.low, interval.high
        # store.sessions() leaves the environment snapshots out (decoding thousands of them
        # made `list` slow); only the sessions that measured the benchmark need theirs.
        env = store.get_session(sess["uid"]).get("environment")
        env = env if isinstance(env, dict) else None
        changes = []
        if previous_env is not None and env is not None:
            for path, label in MARKED_FIELDS:
                before, after = _env_value(previous_env, path), _env_value(env, path)
                if before != after:
                    changes.append(f"{label}: {before} → {after}")
        previous_env = env if env is not None else previous_env
        commit = _env_value(env, "git.commit")
        points.append(HistoryPoint(sess["uid"], sess.get("name"), sess["created_utc"],
                                   str(commit) if commit else None, int(values.size),
                                   float(np.median(values)), float(low), float(high), changes))
    unit = found[0][1].unit
    higher = higher_is_better(unit) if direction is None else direction == "higher"
    _flag_steps(points, alpha, min_effect_relative, min_effect_abs, higher)
    return History(benchmark, found[0][1].metric, unit, points, alpha, min_effect_relative,
                   min_effect_abs, higher)


def _flag_steps(points: list[HistoryPoint], alpha: float, min_effect_relative: float,
                min_effect_abs: float | None = None, higher_is_better: bool = False) -> None:
    """Mark the change points of the session medians (:func:`benchlab.stats.change_points`:
    the session is the replicate, so session-to-session offsets are not called steps); a
    rise is the regression, or a fall when ``higher_is_better``."""
    from benchlab.stats.changepoint import change_points

    medians = np.array([p.median for p in points])
    if len(points) < 4 or np.any(medians <= 0):
        return
    effect = (min_effect_abs / float(np.median(medians)) if min_effect_abs is not None
              else min_effect_relative)
    start = 0
    for cp in change_points(medians, alpha=alpha, min_effect=effect):
        pt = points[cp.index]
        level = float(np.median(medians[start:cp.index]))  # the level of the segment before
        start = cp.index
        pt.shift = level * (cp.ratio - 1.0)
        pt.shift_low, pt.shift_high = level * (cp.ratio_low - 1.0), level * (cp.ratio_high - 1.0)
        pt.p_adjusted = cp.p_value
        pt.step = "regression" if cp.regression != higher_is_better else "improvement"


def newest_step(h: "History") -> HistoryPoint | None:
    """The last change point of the history (None: none): a nightly job fails while it is a
    regression, until a later change point (an improvement) ends it."""
    steps = [p for p in h.points if p.step]
    return steps[-1] if steps else None


def _label(p: HistoryPoint) -> str:
    return (p.commit[:8] if p.commit else p.session_uid) + " " + p.created_utc[:10]


def history_figure(h: History) -> F.Figure:
    """Medians with intervals in session order (x labels: commit and date), steps and
    environment changes marked."""
    name_u, div = F.display_unit(np.array([p.median for p in h.points]), h.unit)
    n = len(h.points)
    every = max(1, n // 12)
    fig = F.Figure(f"history-{F.slug(h.benchmark)}", f"History of {h.benchmark} ({h.metric})",
                   "session (time order; label: git commit and date)",
                   F.axis_label(f"median {h.metric}", name_u), width=1140, height=360,
                   x_ticks={float(i): _label(p) for i, p in enumerate(h.points) if i % every == 0})
    x = np.arange(n, dtype=float)
    med = np.array([p.median for p in h.points]) / div
    fig.layers.append(F.Layer("segment", {"x0": x, "x1": x,
                                          "y0": [p.low / div for p in h.points],
                                          "y1": [p.high / div for p in h.points]},
                              F.PALETTE[0], size=2, alpha=0.6, label="95 % interval of the median"))
    fig.layers.append(F.Layer("line", {"x": x, "y": med}, F.PALETTE[0], alpha=0.4))
    fig.layers.append(F.Layer("scatter", {"x": x, "y": med}, F.PALETTE[0], size=6,
                              label="median per session", hover=True,
                              text=[f"{_label(p)} (session {p.session_uid})" for p in h.points]))
    for kind, colour in (("regression", F.MARK), ("improvement", F.GOOD)):
        idx = [i for i, p in enumerate(h.points) if p.step == kind]
        if idx:
            fig.layers.append(F.Layer("scatter", {"x": idx, "y": med[idx]}, colour, size=13,
                                      alpha=0.8, label=f"{kind} (change point)",
                                      hover=True, text=[_label(h.points[i]) for i in idx]))
    changed = [i - 0.5 for i, p in enumerate(h.points) if p.env_changes]
    if changed:
        fig.layers.append(F.Layer("vline", {"x": changed}, F.NEUTRAL, dash="dashed",
                                  label="environment changed (kernel, CPU, governor, benchlab)"))
    fig.caption = (f"{plural(n, 'session')}. Steps: change points of the session medians "
                   f"(the session as the replicate), permutation p < {h.alpha:g} and a level "
                   f"change of at least "
                   + (format_value(h.min_effect_abs, h.unit, 5) if h.min_effect_abs is not None
                      else f"{100 * h.min_effect_relative:g} %") + ".")
    return fig


def history_rows(h: History) -> tuple[list[str], list[list[str]], list[bool]]:
    """The history as a table: header, formatted rows, and which rows are steps."""
    f = (lambda v: format_value(v, h.unit, 5))
    header = ["created (UTC)", "session", "git commit", "n", "median", "95 % interval",
              "step", "level change (t interval)", "p (permutation)", "environment changes"]
    rows = []
    for p in h.points:
        shift = (f"{f(p.shift)} [{f(p.shift_low)} .. {f(p.shift_high)}]"
                 if p.shift is not None else "")
        rows.append([p.created_utc[:19].replace("T", " "), p.session_uid
                     + (f" ({p.session_name})" if p.session_name else ""),
                     (p.commit or "-")[:12], str(p.n), f(p.median),
                     f"{f(p.low)} .. {f(p.high)}", p.step or "", shift,
                     f"{p.p_adjusted:.3g}" if p.p_adjusted is not None else "",
                     "; ".join(p.env_changes)])
    return header, rows, [p.step is not None for p in h.points]


def history_section(h: History) -> Section:
    """The history as a report section (table, figure, a sentence per step)."""
    header, rows, marked = history_rows(h)
    steps = [p for p in h.points if p.step]
    better = "higher" if h.higher_is_better else "lower"
    text = [f"{plural(len(h.points), 'session')} measured {h.benchmark}; "
            f"{plural(len(steps), 'step')} found. Metric: {h.metric}"
            f"{' (' + h.unit + ')' if h.unit else ''}, {better} is better. "
            f"Each median's 95 % interval is exact and distribution-free: the order statistics "
            f"x(k) .. x(n-k+1) with binomial coverage of at least 95 % (no bootstrap)."]
    for i, p in enumerate(h.points):
        if p.step:
            before = h.points[i - 1]
            msg = (f"{p.step.capitalize()} at {_label(p)} (session {p.session_uid}): median "
                   f"{format_value(before.median, h.unit, 5)} → {format_value(p.median, h.unit, 5)}")
            if p.env_changes:
                msg += " — and the environment changed there too: " + "; ".join(p.env_changes)
            text.append(msg + ".")
    return Section(f"history-{F.slug(h.benchmark)}", f"History: {h.benchmark}", text,
                   [Table("", header, rows, marked)], [history_figure(h)])


def render_history_text(h: History, echo) -> None:
    """Print the history as plain text lines through ``echo`` (e.g. ``click.echo``)."""
    header, rows, _ = history_rows(h)
    for line in history_section(h).paragraphs:
        echo(line)
    for line in aligned_lines(header, rows):
        echo(line)
