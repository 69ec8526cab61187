"""Import Google Benchmark JSON (``--benchmark_format=json`` / ``--benchmark_out=F``).

The file holds ``{"context": {...}, "benchmarks": [...]}``; each entry of ``benchmarks`` is
either one repetition (``run_type: "iteration"``) or an aggregate over repetitions
(``run_type: "aggregate"``, ``aggregate_name`` mean/median/stddev/cv/...). Times are per
iteration in ``time_unit`` (ns, us, ms, s).

Mapping: one benchmark per ``run_name`` (in order of first appearance), one run (status
``imported``) per repetition with samples ``real_time`` and ``cpu_time`` converted to ns, and
every other numeric field of the entry (user counters, ``bytes_per_second``,
``items_per_second``, ...) as a sample metric of the same name (unit '', per second rates
``1/s`` / ``B/s``). ``iterations``, ``threads``, ``repetition_index``, ``label`` and the entry
name go to the run's ``extra``. A repetition that reported ``error_occurred`` (or ``skipped``)
becomes a run of status ``error`` with the message. Aggregates are NOT samples (they are derived): they are kept
in the session metadata under ``aggregates`` by run name; ``context`` is kept as
``context``.

Files from Google Benchmark before 1.5 lack ``run_name``/``run_type``: there, the
``_mean``/``_median``/``_stddev``/``_cv``/``_BigO``/``_RMS`` name suffixes mark aggregates.

``real_time`` is the series benchlab analyses and compares by default, as Google Benchmark
reports it first (``store.queries.PRIMARY_METRICS``); the context's machine facts (host, CPU
count, caches...) become the session's environment (:mod:`.tool_metadata`).
"""

from __future__ import annotations

import math
import os
from typing import Any

from benchlab.errors import UserError
from benchlab.store.formats.common import (
    TIME_UNIT_TO_NS,
    ImportedBenchmark,
    ImportedMetric,
    ImportedRun,
    ImportedSession,
    check_measured,
    default_session_name,
    load_json,
    source_of,
    wrong_format,
)
from benchlab.store.formats.tool_metadata import gbench_environment

_AGG_SUFFIXES = ("_mean", "_median", "_stddev", "_cv", "_BigO", "_RMS")
_NOT_SAMPLES = {
    "name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
    "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index",
    "aggregate_name", "aggregate_unit", "label", "error_occurred", "error_message", "skipped",
    "skip_message",
}
_RATE_UNITS = {"bytes_per_second": "B/s", "items_per_second": "1/s"}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _classify(entry: dict[str, Any]) -> tuple[str, str]:
    """(run_name, run_type) of an entry, also for files that predate those keys."""
    name = str(entry.get("name", ""))
    run_name = entry.get("run_name")
    run_type = entry.get("run_type")
    if run_type is None:
        for suffix in _AGG_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)], "aggregate"
        return name, "iteration"
    return str(run_name or name), str(run_type)


def _entry_samples(entry: dict[str, Any], where: str,
                   metrics: dict[str, ImportedMetric]) -> dict[str, list[float]]:
    """One repetition's samples: ``real_time`` and ``cpu_time`` in ns (from its ``time_unit``),
    and each user counter as given (a rate counter in its unit); every metric seen is added to
    ``metrics``. UserError for an unknown unit, a time that is not a number, or no time."""
    unit = entry.get("time_unit", "ns")
    if unit not in TIME_UNIT_TO_NS:
        raise UserError(f"{where} ({entry['name']}) has unknown time_unit {unit!r}; "
                        f"expected ns, us, ms or s")
    factor = TIME_UNIT_TO_NS[unit]
    samples: dict[str, list[float]] = {}
    for key in ("real_time", "cpu_time"):
        if key in entry:
            if not _number(entry[key]):
                raise UserError(f"{where} ({entry['name']}): {key} is not a number; "
                                f"the file is damaged")
            check_measured(entry[key], f"{where} ({entry['name']}) {key}", unit)
            samples[key] = [float(entry[key]) * factor]
            metrics.setdefault(key, ImportedMetric(key, "ns", "import:gbench"))
    for key, value in entry.items():
        if key in _NOT_SAMPLES or not _number(value):
            continue
        samples[key] = [float(value)]
        metrics.setdefault(key, ImportedMetric(key, _RATE_UNITS.get(key, ""), "import:gbench"))
    if not samples:
        raise UserError(f"{where} ({entry['name']}) has neither real_time nor cpu_time; "
                        f"the file is not Google Benchmark JSON or is damaged")
    return samples


def parse_gbench(path: str | os.PathLike, *, name: str | None = None,
                 command_line: list[str] | None = None) -> ImportedSession:
    """Parse a Google Benchmark JSON file (nothing is written)."""
    doc = load_json(path, "Google Benchmark JSON", "gbench")
    if not (isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list)
            and isinstance(doc.get("context"), dict)):
        raise wrong_format(path, "gbench", doc,
                           "Google Benchmark JSON (needs 'context' and a 'benchmarks' list)")
    order: list[str] = []
    runs_by_name: dict[str, list[ImportedRun]] = {}
    aggregates: dict[str, list[dict[str, Any]]] = {}
    metrics: dict[str, ImportedMetric] = {}
    for i, entry in enumerate(doc["benchmarks"]):
        where = f"{path} benchmarks[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise UserError(f"{where} has no 'name'; the file is not Google Benchmark JSON "
                            f"or is damaged")
        run_name, run_type = _classify(entry)
        if run_type == "aggregate":
            aggregates.setdefault(run_name, []).append(entry)
            continue
        if run_name not in runs_by_name:
            runs_by_name[run_name] = []
            order.append(run_name)
        runs = runs_by_name[run_name]
        extra = {k: entry[k] for k in ("name", "iterations", "threads", "repetition_index",
                                       "repetitions", "label") if k in entry}
        if entry.get("error_occurred") or entry.get("skipped"):
            # SkipWithError (error_occurred) or, since 1.8, SkipWithMessage (skipped): the
            # times are not measurements.
            message = (str(entry.get("error_message") or "error_occurred")
                       if entry.get("error_occurred")
                       else f"skipped: {entry.get('skip_message') or ''}".rstrip(": "))
            runs.append(ImportedRun(iteration=len(runs), fields={
                "status": "error", "error": message, "extra": extra}))
            continue
        samples = _entry_samples(entry, where, metrics)
        index = entry.get("repetition_index")
        runs.append(ImportedRun(iteration=index if isinstance(index, int) else len(runs),
                                fields={"status": "imported", "extra": extra}, samples=samples))
    if not order:
        raise UserError(f"{path} has no benchmark repetitions (only aggregates or nothing); "
                        f"re-run with --benchmark_report_aggregates_only=false")
    metadata = {"format": "gbench", "context": doc["context"], "aggregates": aggregates}
    benchmarks = [ImportedBenchmark(name=n, runs=runs_by_name[n]) for n in order]
    return ImportedSession(name=name or default_session_name(path), source=source_of(path),
                           metadata=metadata, benchmarks=benchmarks,
                           metrics=list(metrics.values()), command_line=command_line,
                           environment=gbench_environment(doc["context"]))
