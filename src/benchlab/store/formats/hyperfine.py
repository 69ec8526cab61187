"""hyperfine's JSON (``hyperfine --export-json``): import, and a compatible export.

hyperfine writes ``{"results": [{"command", "mean", "stddev", "median", "user", "system",
"min", "max", "times": [...], "exit_codes": [...], "parameters": {...}}]}`` with all times in
seconds. Per run it has only ``times`` and (since 1.12) ``exit_codes``, plus
``memory_usage_byte`` in newer versions; ``user``/``system`` are per-benchmark MEANS.

Import: one benchmark per result (name = command; parameters kept), one run per entry of
``times`` with ``wall_ns`` (s -> ns, rounded to the nearest ns), ``exit_code`` and status ``ok``
(exit 0), ``failed`` (non-zero) or ``signaled`` (null exit code: killed by a signal);
``max_rss_kib`` from ``memory_usage_byte`` when present. Files without ``exit_codes``
(hyperfine < 1.12, which stopped at the first failure unless ``-i``) give status ``ok`` with
``exit_code`` null. Per-run user/system times do not exist
in the file and are NOT invented: the per-benchmark summary (mean, stddev, median, user, system,
min, max and any other scalar keys) is kept in the session metadata under ``results``.

Export: one result per benchmark. ``times`` are the harness wall times (shell overhead
subtracted, as hyperfine does) of non-warmup runs that ran to completion (ok, failed, signaled);
a benchmark without harness times (e.g. imported samples) uses its program metric when that is
in a time unit; one without any value (all runs failed) is left out. mean/median/min/max are recomputed from ``times``; ``stddev`` is the sample
standard deviation (null for one time, like hyperfine); ``user``/``system`` are the means of the
runs' user/sys times when every run has them, else the imported hyperfine summary, else null.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.store.formats.common import (
    TIME_UNIT_TO_NS,
    ImportedBenchmark,
    ImportedRun,
    ImportedSession,
    check_measured,
    default_session_name,
    load_json,
    source_of,
    wrong_format,
)
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData, primary_series
from benchlab.store.formats.spread import sample_sd


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def parse_hyperfine(path: str | os.PathLike, *, name: str | None = None,
                    command_line: list[str] | None = None) -> ImportedSession:
    """Parse a hyperfine ``--export-json`` file (nothing is written)."""
    doc = load_json(path, "hyperfine JSON", "hyperfine")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise wrong_format(path, "hyperfine", doc, "hyperfine JSON (no 'results' list)")
    if not doc["results"]:
        raise UserError(f"{path} has an empty 'results' list; re-run hyperfine with "
                        f"--export-json after at least one benchmark finished")
    benchmarks: list[ImportedBenchmark] = []
    summaries: list[dict[str, Any]] = []
    used: set[str] = set()
    for i, res in enumerate(doc["results"]):
        where = f"{path} results[{i}]"
        if not isinstance(res, dict) or not isinstance(res.get("command"), str):
            raise UserError(f"{where} has no 'command' string; the file is not hyperfine JSON "
                            f"or is damaged")
        times = res.get("times")
        if not isinstance(times, list) or not all(_is_number(t) for t in times):
            raise UserError(f"{where} ({res['command']!r}) has no 'times' list of numbers; "
                            f"export with a hyperfine that writes per-run times (>= 1.6)")
        for t in times:
            check_measured(t, f"{where} ({res['command'][:60]!r}) time", "s")
        codes = res.get("exit_codes")
        if codes is not None and (not isinstance(codes, list) or len(codes) != len(times)):
            raise UserError(f"{where}: 'exit_codes' does not hold one entry per time; "
                            f"the file is damaged")
        memory = res.get("memory_usage_byte")
        if not (isinstance(memory, list) and len(memory) == len(times)):
            memory = None
        bench_name = res["command"]
        k = 2
        while bench_name in used:  # hyperfine may time the same command twice
            bench_name = f"{res['command']} #{k}"
            k += 1
        used.add(bench_name)
        runs: list[ImportedRun] = []
        for j, t in enumerate(times):
            fields: dict[str, Any] = {"wall_ns": int(round(t * 1e9))}
            if codes is not None:
                code = codes[j]
                fields["exit_code"] = code
                fields["status"] = "signaled" if code is None else ("ok" if code == 0 else "failed")
            else:
                fields["status"] = "ok"
            if memory is not None and _is_number(memory[j]):
                fields["max_rss_kib"] = int(round(memory[j] / 1024))
            runs.append(ImportedRun(iteration=j, fields=fields))
        params = res.get("parameters")
        benchmarks.append(ImportedBenchmark(
            name=bench_name, command=res["command"], runs=runs,
            parameters=params if isinstance(params, dict) and params else None))
        summary = {k: v for k, v in res.items()
                   if k not in ("times", "exit_codes", "memory_usage_byte", "parameters")
                   and not isinstance(v, (list, dict))}
        summary["benchmark"] = bench_name
        summaries.append(summary)
    extra = {k: v for k, v in doc.items() if k != "results"}
    metadata: dict[str, Any] = {"format": "hyperfine", "results": summaries}
    if extra:
        metadata["document"] = extra
    return ImportedSession(name=name or default_session_name(path), source=source_of(path),
                           metadata=metadata, benchmarks=benchmarks, command_line=command_line)


def _imported_summary(session: SessionData, bench_name: str) -> dict[str, Any]:
    meta = session.row.get("metadata")
    if isinstance(meta, dict) and meta.get("format") == "hyperfine":
        for s in meta.get("results", []):
            if isinstance(s, dict) and s.get("benchmark") == bench_name:
                return s
    return {}


def _mean_s(values: list[Any]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(values)) / 1e9


def hyperfine_results(sessions: Sequence[SessionData]) -> list[dict[str, Any]]:
    """hyperfine ``results`` entries for every benchmark of ``sessions`` (times in s).

    Benchmarks without any measured value (every run failed) are left out, as hyperfine leaves
    them out. Raises UserError for a benchmark whose values are not times (neither harness wall
    times nor a program metric in a time unit), and when nothing is left.
    """
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    prefix = len(sessions) > 1
    for session in sessions:
        for bench in session.benchmarks:
            series = primary_series(session, bench, time_only=True)
            if series is None:
                if primary_series(session, bench) is None:
                    # Every run failed before yielding a value: hyperfine has no way to show
                    # such a command either (it aborts or reports only timed runs).
                    skipped.append(bench.name)
                    continue
                raise UserError(
                    f"benchmark {bench.name!r} of session {session.uid} has no wall times and no "
                    f"metric in a time unit, but hyperfine JSON holds seconds; export it with "
                    f"--format json or csv (a label,value CSV can be imported with --unit ns)")
            to_ns = TIME_UNIT_TO_NS[series.unit]
            # Dividing (not multiplying by 1e-9) gives the correctly rounded seconds, so
            # 2745678 ns reads back as hyperfine's own 0.002745678.
            times = [float(v) * to_ns / 1e9 for v in series.values]
            arr = np.asarray(times)
            summary = _imported_summary(session, bench.name)
            if series.metric == "wall":
                user = _mean_s([r.row["user_ns"] for r in series.runs])
                system = _mean_s([r.row["sys_ns"] for r in series.runs])
            else:
                user = system = None
            if user is None and _is_number(summary.get("user")):
                user = float(summary["user"])
            if system is None and _is_number(summary.get("system")):
                system = float(summary["system"])
            command = bench.name
            if prefix:
                command = f"{session.row.get('name') or session.uid}:{bench.name}"
            entry: dict[str, Any] = {
                "command": command,
                "mean": float(arr.mean()),
                "stddev": sample_sd(arr) if len(arr) > 1 else None,  # finite near 1e300
                "median": float(np.median(arr)),
                "user": user,
                "system": system,
                "min": float(arr.min()),
                "max": float(arr.max()),
                "times": times,
                "exit_codes": [r.row["exit_code"] for r in series.runs],
            }
            params = bench.row.get("parameters")
            if isinstance(params, dict) and params:
                entry["parameters"] = {str(k): str(v) for k, v in params.items()}
            results.append(entry)
    if not results:
        raise UserError(f"no benchmark in the selected session(s) has a measured value "
                        f"(all runs failed: {', '.join(skipped)}); see `benchlab show SESSION`")
    return results


def export_hyperfine(sessions: Sequence[SessionData]) -> str:
    """hyperfine-compatible JSON text (``{"results": [...]}``, indented like hyperfine's)."""
    return json.dumps({"results": hyperfine_results(sessions)}, indent=2) + "\n"


def export_hyperfine_csv(sessions: Sequence[SessionData]) -> str:
    """hyperfine's ``--export-csv`` text: ``command,mean,stddev,median,user,system,min,max``
    (seconds) and a ``parameter_NAME`` column per parameter of the first result."""
    import io

    from benchlab.store.formats.common import CsvWriter, spreadsheet_safe

    results = hyperfine_results(sessions)
    params = list((results[0].get("parameters") or {}).keys())
    buf = io.StringIO()
    writer = CsvWriter(buf)
    keys = ["mean", "stddev", "median", "user", "system", "min", "max"]
    writer.writerow(["command", *keys, *[f"parameter_{p}" for p in params]])
    for r in results:
        writer.writerow([spreadsheet_safe(r["command"]),
                         *["" if r[k] is None else repr(r[k]) for k in keys],
                         *[spreadsheet_safe(str((r.get("parameters") or {}).get(p, "")))
                           for p in params]])
    return buf.getvalue()


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``hyperfine`` export format (:mod:`benchlab.store.formats.exporters`)."""
    return export_hyperfine(sessions)


def export_summary_csv(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``hyperfine-csv`` export format (:mod:`benchlab.store.formats.exporters`)."""
    return export_hyperfine_csv(sessions)
