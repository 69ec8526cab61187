"""Long-format CSV export: one row per value, for spreadsheets, R, pandas and awk.

Layout::

    # benchlab long-format CSV (benchlab 0.1.0, exported 2026-11-22T11:00:00.000000Z)
    # session 3f9a01bc: {"name": "vm-results", "kind": "import", "status": "complete", ...}
    # session 3f9a01bc metadata: {...one line of JSON...}
    # session 3f9a01bc environment: {...}
    # session 3f9a01bc protocol: {...}
    session,benchmark,run,iteration,warmup,status,metric,value,unit
    3f9a01bc,array,0,0,0,imported,value,537670,ns

``session`` is the session uid (names need not be unique), ``run`` the run's sequence number in
its session, ``warmup`` 0/1. Per run, the rows are its harness values (``wall`` = wall time minus
shell overhead, ``shell_overhead``, ``user``, ``sys`` in ns; ``max_rss`` in KiB; ``minflt``,
``majflt``, ``nvcsw``, ``nivcsw`` counts), each only when measured; then its program-reported
samples (in metric-name order, each metric in report order); then further measurements as
``SOURCE.NAME`` (only those with status ok). Leading ``#`` lines carry each session's
fields, metadata, environment and protocol as one-line JSON, so nothing is lost; a JSON
column that is empty is left out. Integral values are written without a decimal point.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from benchlab import __version__
from benchlab.store.db import utc_now
from benchlab.store.formats._gather import SessionData

COLUMNS = ("session", "benchmark", "run", "iteration", "warmup", "status", "metric", "value",
           "unit")

#: Harness rows per run: (metric, unit, function of the run row -> value or None).
_HARNESS_ROWS: tuple[tuple[str, str, Any], ...] = (
    ("wall", "ns", lambda r: None if r["wall_ns"] is None
     else r["wall_ns"] - (r["shell_overhead_ns"] or 0)),
    ("shell_overhead", "ns", lambda r: r["shell_overhead_ns"]),
    ("user", "ns", lambda r: r["user_ns"]),
    ("sys", "ns", lambda r: r["sys_ns"]),
    ("max_rss", "KiB", lambda r: r["max_rss_kib"]),
    ("minflt", "count", lambda r: r["minflt"]),
    ("majflt", "count", lambda r: r["majflt"]),
    ("nvcsw", "count", lambda r: r["nvcsw"]),
    ("nivcsw", "count", lambda r: r["nivcsw"]),
)

_SESSION_FIELDS = ("name", "kind", "status", "created_utc", "finished_utc", "source",
                   "command_line")
_SESSION_JSON = ("metadata", "environment", "protocol", "system_checks", "load_before",
                 "load_after")


def format_value(value: float | int) -> str:
    """Shortest exact text of a number: integral values without a decimal point."""
    if isinstance(value, int):
        return str(value)
    v = float(value)
    if v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return repr(v)


def _one_line_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def export_csv(sessions: Sequence[SessionData]) -> str:
    """The long-format CSV text of ``sessions`` (see the module docstring)."""
    out = io.StringIO()
    out.write(f"# benchlab long-format CSV (benchlab {__version__}, exported {utc_now()})\n")
    for s in sessions:
        fields = {k: s.row.get(k) for k in _SESSION_FIELDS}
        out.write(f"# session {s.uid}: {_one_line_json(fields)}\n")
        for key in _SESSION_JSON:
            value = s.row.get(key)
            if value not in (None, "", {}, []):
                # JSON escapes newlines, so every '#' line stays one line.
                out.write(f"# session {s.uid} {key}: {_one_line_json(value)}\n")
        for m in s.metrics:
            declared = {k: m[k] for k in ("name", "unit", "origin", "pattern")}
            out.write(f"# session {s.uid} metric: {_one_line_json(declared)}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for s in sessions:
        units = {m["name"]: m["unit"] or "" for m in s.metrics}
        for bench in s.benchmarks:
            for run in bench.runs:
                r = run.row
                head = (s.uid, bench.name, r["seq"], r["iteration"], int(r["warmup"]), r["status"])
                for metric, unit, get in _HARNESS_ROWS:
                    value = get(r)
                    if value is not None:
                        writer.writerow((*head, metric, format_value(value), unit))
                for metric, values in run.samples.items():
                    unit = units.get(metric, "")
                    writer.writerows((*head, metric, format_value(v), unit) for v in values)
                for m in run.measurements:
                    if m["status"] == "ok" and m["value"] is not None:
                        writer.writerow((*head, f"{m['source']}.{m['name']}",
                                         format_value(m["value"]), m["unit"] or ""))
    return out.getvalue()
