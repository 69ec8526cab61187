"""Read whole sessions out of the store for export, and pick the series a summary shows.

Public to the other layers: the bundle (``store.bundle``) gathers its sessions here, and the run
summary (``report.run_summary``) counts the same ``TIMED_STATUSES`` (:mod:`benchlab.store.rows`)
as the exports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from benchlab.store.db import HARNESS_METRICS, SessionRef, Store
from benchlab.store.formats.common import TIME_UNIT_TO_NS
from benchlab.store.queries import PRIMARY_METRICS
from benchlab.store.rows import TIMED_STATUSES, corrected_wall_ns  # noqa: F401  (public here too)
from benchlab.store.sample_blocks import join_blocks
from benchlab.store.writer import redact_command_line, redact_environment

if TYPE_CHECKING:
    import numpy as np  # imported where used: `benchlab run` reaches this package, not numpy

#: Run statuses whose program-reported samples are used (as in ``Store.sample_values``).
SAMPLE_STATUSES = ("ok", "imported")


@dataclass
class RunData:
    """A run row (JSON columns decoded) with its samples by metric and its measurements."""

    row: dict[str, Any]
    samples: dict[str, list[float]] = field(default_factory=dict)
    measurements: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class BenchData:
    """A benchmark row with its runs in execution order."""

    row: dict[str, Any]
    runs: list[RunData] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.row["name"]


@dataclass
class SessionData:
    """A session row with metrics, the setups it references, and its benchmarks."""

    row: dict[str, Any]
    metrics: list[dict[str, Any]]
    setups: dict[int, Any]
    benchmarks: list[BenchData]

    @property
    def uid(self) -> str:
        return self.row["uid"]

    def metric_unit(self, metric: str) -> str:
        """Unit of a harness or program metric in this session ('' when unknown)."""
        if metric in HARNESS_METRICS:
            return HARNESS_METRICS[metric][1]
        for m in self.metrics:
            if m["name"] == metric:
                return m["unit"] or ""
        return ""


def load_session(store: Store, key: str | int | SessionRef | dict) -> SessionData:
    """Everything stored for one session (``key``: uid, id, name, SessionRef or session row)."""
    if isinstance(key, SessionRef):
        key = key.uid
    elif isinstance(key, dict):
        key = key["uid"]
    row = store.get_session(key)
    sid = row["id"]
    conn = store.conn
    benches = [BenchData(b) for b in store.benchmarks(sid)]
    by_id = {b.row["id"]: b for b in benches}
    runs: dict[int, RunData] = {}
    for r in store.runs(session_id=sid):
        run = RunData(r)
        runs[r["id"]] = run
        by_id[r["benchmark_id"]].runs.append(run)
    blocks = conn.cursor()
    blocks.row_factory = None
    pieces: dict[tuple[int, str], list[tuple[int, int, Any]]] = {}
    for run_id, metric, first, n, data in blocks.execute(
            "SELECT b.run_id, b.metric, b.first_seq, b.n, b.data FROM sample_blocks b"
            " JOIN runs r ON r.id = b.run_id WHERE r.session_id = ?"
            " ORDER BY b.run_id, b.metric, b.first_seq", (sid,)):
        pieces.setdefault((run_id, metric), []).append((first, n, data))
    for (run_id, metric), rows in pieces.items():
        runs[run_id].samples[metric] = join_blocks(rows)[0].tolist()
    for m in conn.execute(
            "SELECT m.* FROM measurements m JOIN runs r ON r.id = m.run_id"
            " WHERE r.session_id = ? ORDER BY m.run_id, m.source, m.name", (sid,)):
        m = dict(m)
        runs[m.pop("run_id")].measurements.append(m)
    setup_ids = {b.row["setup_id"] for b in benches} | {r.row["setup_id"] for r in runs.values()}
    setup_ids.discard(None)
    setups: dict[int, Any] = {}
    for sid_ in sorted(setup_ids):
        s = conn.execute("SELECT data FROM setups WHERE id = ?", (sid_,)).fetchone()
        if s is not None:
            setups[sid_] = json.loads(s[0])
    return SessionData(row=row, metrics=store.metrics(sid), setups=setups, benchmarks=benches)


def resolve_sessions(store: Store, keys: Sequence[str | int | SessionRef | dict]) -> list[SessionData]:
    """The sessions named by ``keys`` (each once, in the given order); none -> the newest one."""
    if not keys:
        keys = [store.newest_uid()]
    out: list[SessionData] = []
    seen: set[int] = set()
    for key in keys:
        data = load_session(store, key)
        if data.row["id"] not in seen:
            seen.add(data.row["id"])
            out.append(data)
    return out


@dataclass
class SummarySeries:
    """The values a one-line summary of a benchmark shows, with where they came from."""

    values: np.ndarray
    unit: str
    metric: str
    runs: list[RunData]
    """For each value, the run it belongs to."""


def wall_series(bench: BenchData) -> SummarySeries | None:
    """Harness wall times (ns, shell overhead subtracted) of measured non-warmup runs."""
    values: list[float] = []
    runs: list[RunData] = []
    for run in bench.runs:
        r = run.row
        if r["warmup"] or r["status"] not in TIMED_STATUSES or r["wall_ns"] is None:
            continue
        values.append(float(corrected_wall_ns(r)))
        runs.append(run)
    if not values:
        return None
    import numpy as np

    return SummarySeries(np.asarray(values), "ns", "wall", runs)


def sample_series(session: SessionData, bench: BenchData, metric: str) -> SummarySeries | None:
    """All samples of ``metric`` in the benchmark's non-warmup ok/imported runs, in order."""
    values: list[float] = []
    runs: list[RunData] = []
    for run in bench.runs:
        if run.row["warmup"] or run.row["status"] not in SAMPLE_STATUSES:
            continue
        vals = run.samples.get(metric, ())
        values.extend(vals)
        runs.extend([run] * len(vals))
    if not values:
        return None
    import numpy as np

    return SummarySeries(np.asarray(values, dtype=float), session.metric_unit(metric), metric, runs)


_PREFERRED = PRIMARY_METRICS


def primary_series(session: SessionData, bench: BenchData, *,
                   time_only: bool = False) -> SummarySeries | None:
    """The series that summarises a benchmark: harness wall times when it has them, else its
    program metric (preferring ``real_time``, then ``value``, then the first by name).

    With ``time_only`` only program metrics in a time unit (ns, us, ms, s) qualify.
    """
    wall = wall_series(bench)
    if wall is not None:
        return wall
    names = sorted({m for run in bench.runs for m in run.samples})
    if time_only:
        names = [n for n in names if session.metric_unit(n) in TIME_UNIT_TO_NS]
    names.sort(key=lambda n: (_PREFERRED.index(n) if n in _PREFERRED else len(_PREFERRED), n))
    for name in names:
        series = sample_series(session, bench, name)
        if series is not None:
            return series
    return None


def session_label(session: SessionData) -> str:
    """``name (uid)`` or just the uid."""
    name = session.row.get("name")
    return f"{name} ({session.uid})" if name else session.uid


def redacted_row(row: Any) -> dict[str, Any]:
    """A session row with credentials redacted from its command line and its environment's
    argv (:func:`benchlab.store.writer.redact_command_line`): new sessions are stored so, and
    an export or bundle of an older store must not carry a password either."""
    row = dict(row)
    if isinstance(row.get("command_line"), list):
        row["command_line"] = redact_command_line(row["command_line"])
    if isinstance(row.get("environment"), dict):
        row["environment"] = dict(redact_environment(row["environment"]))
    return row
