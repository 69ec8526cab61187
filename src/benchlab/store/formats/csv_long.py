"""Long-format CSV export: one row per value, for spreadsheets, R, pandas and awk.

Layout::

    # benchlab long-format CSV (benchlab 0.2.0, exported 2026-11-22T11:00:00.000000Z)
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
``SOURCE.NAME`` (only those with status ok). Text cells a spreadsheet would run as a formula
(leading ``=``, ``+``, ``-``, ``@``, tab, CR) get a ``'`` prefix, which benchlab's own import
removes again; numbers are written as they are. Leading ``#`` lines carry each session's
fields, metadata, environment and protocol as one-line JSON, so nothing is lost; a JSON
column that is empty is left out. Integral values are written without a decimal point.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Sequence

import numpy as np

from benchlab import __version__
from benchlab.errors import UserError
from benchlab.store.db import utc_now
from benchlab.store.formats.common import CsvWriter, spreadsheet_safe, spreadsheet_unsafe
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData, redacted_row
from benchlab.store.rows import corrected_wall_ns

COLUMNS = ("session", "benchmark", "run", "iteration", "warmup", "status", "metric", "value",
           "unit")

#: Harness rows per run: (metric, unit, function of the run row -> value or None).
_HARNESS_ROWS: tuple[tuple[str, str, Any], ...] = (
    ("wall", "ns", corrected_wall_ns),
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


def format_values(values: Any) -> list[str]:
    """:func:`format_value` of each number, for a whole array: one C-level pass per kind
    (``repr`` is the shortest text that reads back as the same double; integral values are
    written as integers), with no Python function call of ours per value."""
    arr = np.asarray(values, dtype=float)
    integral = (arr == np.trunc(arr)) & (np.abs(arr) < 1e16)
    if integral.all():
        return list(map(str, arr.astype(np.int64).tolist()))
    texts = list(map(repr, arr.tolist()))
    for i in np.flatnonzero(integral).tolist():
        texts[i] = str(int(arr[i]))
    return texts


#: A cell text no head or unit can hold: marks where each value goes in a pre-formatted row.
_SLOT = "\ue000benchlab-value\ue000"


def _write_samples(out: io.StringIO, writer: CsvWriter, head: tuple, values: Any,
                   unit: str) -> None:
    """Rows ``head + (value, unit)`` for each value: the row is formatted by the CSV writer
    once, around a placeholder, and the values are joined into it (the same text as one
    ``writerow`` per value, without a tuple, a quoting check and a ``repr`` per value)."""
    line = io.StringIO()
    CsvWriter(line).writerow((*head, _SLOT, unit))
    parts = line.getvalue().split(_SLOT)
    if len(parts) != 2:  # a head or unit holding the placeholder text: the slow, plain way
        writer.writerows((*head, format_value(v), unit) for v in values)
        return
    texts = format_values(values)
    if texts:
        before, after = parts
        out.write(before + (after + before).join(texts) + after)


def _one_line_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def export_csv(sessions: Sequence[SessionData]) -> str:
    """The long-format CSV text of ``sessions`` (see the module docstring)."""
    out = io.StringIO()
    out.write(f"# benchlab long-format CSV (benchlab {__version__}, exported {utc_now()})\n")
    for s in sessions:
        row = redacted_row(s.row)  # a store written before redaction may hold a password
        fields = {k: row.get(k) for k in _SESSION_FIELDS}
        out.write(f"# session {s.uid}: {_one_line_json(fields)}\n")
        for key in _SESSION_JSON:
            value = row.get(key)
            if value not in (None, "", {}, []):
                # JSON escapes newlines, so every '#' line stays one line.
                out.write(f"# session {s.uid} {key}: {_one_line_json(value)}\n")
        for m in s.metrics:
            declared = {k: m[k] for k in ("name", "unit", "origin", "pattern")}
            out.write(f"# session {s.uid} metric: {_one_line_json(declared)}\n")
    writer = CsvWriter(out)
    writer.writerow(COLUMNS)
    for s in sessions:
        units = {m["name"]: m["unit"] or "" for m in s.metrics}
        for bench in s.benchmarks:
            for run in bench.runs:
                r = run.row
                head = (s.uid, spreadsheet_safe(bench.name), r["seq"], r["iteration"],
                        int(r["warmup"]), r["status"])
                for metric, unit, get in _HARNESS_ROWS:
                    value = get(r)
                    if value is not None:
                        writer.writerow((*head, metric, format_value(value), unit))  # fixed names
                for metric, values in run.samples.items():
                    unit = spreadsheet_safe(units.get(metric, ""))
                    _write_samples(out, writer, (*head, spreadsheet_safe(metric)), values, unit)
                for m in run.measurements:
                    if m["status"] == "ok" and m["value"] is not None:
                        writer.writerow((*head, spreadsheet_safe(f"{m['source']}.{m['name']}"),
                                         format_value(m["value"]), spreadsheet_safe(m["unit"] or "")))
    return out.getvalue()


# -- import of a long-format CSV ------------------------------------------------------------


def _rows(reader: Any, path: Any, header_lineno: int) -> Any:
    """``(line number, row)`` of a csv reader positioned after the header line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise UserError(f"malformed CSV {path} line {header_lineno + reader.line_num}: "
                            f"{exc}; fix the line or re-export the session") from None
        yield header_lineno + reader.line_num, row

#: Harness metric rows -> run columns (``wall`` gets ``shell_overhead`` added back).
_HARNESS_FIELDS = {"wall": "wall_ns", "shell_overhead": "shell_overhead_ns", "user": "user_ns",
                   "sys": "sys_ns", "max_rss": "max_rss_kib", "minflt": "minflt",
                   "majflt": "majflt", "nvcsw": "nvcsw", "nivcsw": "nivcsw"}
HEADER = ",".join(COLUMNS)
_SESSION_PREFIX = "# session "


def parse_long_csv(path: Any, head: list[str], fh: Any, header_lineno: int, *,
                   name: str | None = None,
                   command_line: list[str] | None = None) -> list[Any]:
    """Parse a long-format CSV (as :func:`export_csv` writes it) back into sessions.

    ``head`` holds the lines before the header (the ``# session`` lines restore each session's
    fields, metadata, environment, protocol and metrics); the rows after the header, read from
    the open text stream ``fh`` (``newline=""``, so quoted names keep their line breaks), restore
    runs (harness values, samples, ``SOURCE.NAME`` measurements).
    A row's metric is a sample when the session declares it, else a harness value when it has a
    harness name, else a measurement when it contains a dot, else an undeclared sample. Runs
    that had no value at all (e.g. an error before anything was measured) are not in a CSV and
    so cannot come back; use the JSON export for a complete copy.
    """
    sessions: dict[str, dict[str, Any]] = {}

    def session(uid: str) -> dict[str, Any]:
        return sessions.setdefault(uid, {"uid": uid, "name": None, "benchmarks": [],
                                         "metrics": [], "_benches": {}, "_runs": {}})

    for lineno, line in enumerate(head, 1):
        _read_session_line(path, lineno, line, session)
    for lineno, row in _rows(csv.reader(fh), path, header_lineno):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        uid, bench_name, seq, iteration, warmup, status, metric, value, unit = _checked_row(
            path, lineno, row)
        s = session(uid)
        run = _run_of(path, lineno, s, bench_name, seq, iteration, warmup, status)
        _add_value(s, run, metric, value, unit)
    return _imported_sessions(path, sessions, name, command_line)


def _read_session_line(path: Any, lineno: int, line: str, session: Any) -> None:
    """Restore what a ``# session UID[ FIELD]: JSON`` line of the head says into
    ``session(UID)``; other lines are left alone."""
    if not line.startswith(_SESSION_PREFIX):
        return
    head_text, sep, payload = line[len(_SESSION_PREFIX):].partition(": ")
    if not sep:
        return
    parts = head_text.split(" ")
    try:
        value = json.loads(payload)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" ({exc.msg} at column {exc.colno + len(line) - len(payload)})" \
            if isinstance(exc, json.JSONDecodeError) else ""
        raise UserError(f"{path} line {lineno}: damaged JSON in a '# session' line"
                        f"{where}; re-export the session") from None
    s = session(parts[0])
    if len(parts) == 1 and isinstance(value, dict):
        s.update({k: v for k, v in value.items() if k in _SESSION_FIELDS})
    elif len(parts) == 2 and parts[1] == "metric" and isinstance(value, dict):
        s["metrics"].append(value)
    elif len(parts) == 2 and parts[1] in _SESSION_JSON:
        s[parts[1]] = value


def _checked_row(path: Any, lineno: int, row: list[str]) -> tuple[Any, ...]:
    """A value row's fields (run and iteration as int, the value as a finite float, names
    unescaped), or UserError naming the line."""
    if len(row) != len(COLUMNS):
        raise UserError(f"malformed CSV {path} line {lineno}: {len(row)} fields where the "
                        f"long format has {len(COLUMNS)} ({HEADER}); fix the line")
    uid, bench_name, seq, iteration, warmup, status, metric, raw, unit = row
    bench_name, metric, unit = (spreadsheet_unsafe(x) for x in (bench_name, metric, unit))
    try:
        value = float(raw)
        seq_i, iteration_i = int(seq), int(iteration)
    except ValueError:
        raise UserError(f"malformed CSV {path} line {lineno}: run, iteration and value must "
                        f"be numbers (got {seq[:20]!r}, {iteration[:20]!r}, {raw[:20]!r}); "
                        f"fix the line") from None
    if not math.isfinite(value):
        raise UserError(f"malformed CSV {path} line {lineno}: value {raw[:20]!r} is not a "
                        f"finite number; fix or delete the line")
    if value < 0 and unit in ("ns", "us", "µs", "ms", "s", "KiB"):
        raise UserError(f"malformed CSV {path} line {lineno}: negative {metric[:40]} "
                        f"{raw[:20]} {unit}; fix or delete the line")
    return uid, bench_name, seq_i, iteration_i, warmup, status, metric, value, unit


def _run_of(path: Any, lineno: int, s: dict[str, Any], bench_name: str, seq: int,
            iteration: int, warmup: str, status: str) -> dict[str, Any]:
    """Run ``seq`` of session ``s`` under benchmark ``bench_name``, made on its first row;
    UserError when an earlier row put that run under another benchmark."""
    bench = s["_benches"].get(bench_name)
    if bench is None:
        bench = s["_benches"][bench_name] = {"name": bench_name, "runs": []}
        s["benchmarks"].append(bench)
    run = s["_runs"].get(seq)
    if run is None:
        run = s["_runs"][seq] = {"seq": seq, "iteration": iteration,
                                 "warmup": warmup.strip() in ("1", "true", "True"),
                                 "status": status, "samples": {}, "measurements": [],
                                 "_bench": bench_name}
        bench["runs"].append(run)
    elif run["_bench"] != bench_name:
        raise UserError(f"malformed CSV {path} line {lineno}: run {seq} of session {s['uid']} "
                        f"is listed under two benchmarks ({run['_bench'][:40]!r} and "
                        f"{bench_name[:40]!r}); a run number belongs to one benchmark")
    return run


def _add_value(s: dict[str, Any], run: dict[str, Any], metric: str, value: float,
               unit: str) -> None:
    """One row's value into ``run``: a declared sample, a harness value, a ``SOURCE.NAME``
    measurement, or else a sample of a metric the session now declares."""
    declared = {m.get("name") for m in s["metrics"]}
    if metric in declared:
        run["samples"].setdefault(metric, []).append(value)
    elif metric in _HARNESS_FIELDS:
        run[_HARNESS_FIELDS[metric]] = int(round(value))
    elif "." in metric:
        source, _, mname = metric.partition(".")
        run["measurements"].append({"source": source, "name": mname, "value": value,
                                    "unit": unit or None, "status": "ok"})
    else:
        s["metrics"].append({"name": metric, "unit": unit, "origin": "import:csv-long",
                             "pattern": None})
        run["samples"].setdefault(metric, []).append(value)


def _imported_sessions(path: Any, sessions: dict[str, dict[str, Any]], name: str | None,
                       command_line: list[str] | None) -> list[Any]:
    """The parsed sessions with values as ImportedSessions (the shell's cost added back to
    wall time, as the export subtracted it); UserError when none has a value."""
    from benchlab.store.formats.common import source_of
    from benchlab.store.formats.json_doc import session_from_document

    out = []
    for uid, s in sessions.items():
        if not s["benchmarks"]:
            continue
        for run in s["_runs"].values():
            if "wall_ns" in run and run.get("shell_overhead_ns"):
                run["wall_ns"] += run["shell_overhead_ns"]
        s.pop("_benches")
        s.pop("_runs")
        try:
            out.append(session_from_document(s, source=source_of(path), name=name,
                                             command_line=command_line))
        except (KeyError, TypeError, ValueError) as exc:
            # what the store's CHECK/UNIQUE/INTEGER would refuse (a status 7, a 2**70 value)
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise UserError(f"{path}: session {uid} cannot be imported ({what}); fix the rows "
                            f"or re-export it with benchlab export --format csv") from None
    if not out:
        raise UserError(f"{path} has the long-format header but no value rows; "
                        f"export a session with values")
    if name and len(out) > 1:
        raise UserError(f"--name names one session but {path} holds {len(out)}; drop --name")
    return out


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``csv`` export format (:mod:`benchlab.store.formats.exporters`): :func:`export_csv`."""
    return export_csv(sessions)
