"""Import pyperf's JSON result files (pyperf itself is not needed).

pyperf (file format version 1.0) writes::

    {"version": "1.0",
     "metadata": {...common to all benchmarks...},
     "benchmarks": [{"metadata": {"name": "...", "unit": "second", "loops": 1024, ...},
                     "runs": [{"metadata": {"date": ..., "inner_loops": ...},
                               "warmups": [[loops, value], ...],
                               "values": [value, ...]}, ...]}]}

Values (and warmup values) are already normalised per inner loop iteration; the unit is the
``unit`` metadata (``second`` by default, or ``byte`` / ``integer``). The metadata of a run is
the file's, overridden by the benchmark's, overridden by the run's. ``*.json.gz`` files are read
transparently.

Mapping: one benchmark per pyperf benchmark (name from its ``name`` metadata), and for each
pyperf run (one worker process): first, if it has warmups, a WARMUP run holding the warmup values
(with ``extra.warmup_loops``), then a run holding ``values`` with ``extra.loops`` and
``extra.inner_loops`` (a calibration run has warmups only). Older files (format 6 and 5, pyperf
0.8-0.9) are read too: their warmups are raw values, divided here by loops x inner_loops, and
format 5 calls values ``samples``. All
runs have status ``imported``; samples are metric ``value``. Seconds are converted to ns (unit
``ns``), ``byte`` becomes ``B``, ``integer`` ''. If one file mixes units, the non-time
benchmarks use metric ``value_<unit>`` instead, as a session declares one unit per metric.
Metadata is kept: file and benchmark metadata in the session's metadata, run metadata in each
run's ``extra.metadata``; the machine it describes (hostname, CPU model and count, Python...)
also becomes the session's environment (:mod:`.tool_metadata`), so imported sessions diff.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.store.formats.common import (
    ImportedBenchmark,
    ImportedMetric,
    ImportedRun,
    ImportedSession,
    default_session_name,
    load_json,
    source_of,
    wrong_format,
)
from benchlab.store.formats.tool_metadata import pyperf_environment

_UNITS = {"second": ("ns", 1e9), "byte": ("B", 1.0), "integer": ("", 1.0)}
#: File format versions pyperf itself can read ('1.0' since pyperf 1.0; 6 and 5 from 0.9/0.8).
_VERSIONS = ("1.0", 6, 5)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _benchmarks_of(path: Any, benchmarks: list[Any], file_meta: dict[str, Any],
                   bench_key: str) -> list[tuple[str, str, dict[str, Any], list[Any]]]:
    """(name, pyperf unit, benchmark metadata, runs) of each benchmark of the file, its name and
    unit from the metadata its first run sees; UserError for a damaged benchmark."""
    parsed: list[tuple[str, str, dict[str, Any], list[Any]]] = []
    for i, bench in enumerate(benchmarks):
        where = f"{path} benchmarks[{i}]"
        if not isinstance(bench, dict) or not isinstance(bench.get("runs"), list):
            raise UserError(f"{where} has no 'runs' list; the file is not pyperf JSON or damaged")
        bmeta = bench.get(bench_key) if isinstance(bench.get(bench_key), dict) else {}
        # pyperf moves metadata common to all runs up to the benchmark, and metadata common to
        # all benchmarks up to the file: a run's metadata is the merge of the three.
        first = next((r for r in bench["runs"] if isinstance(r, dict)), {})
        rmeta0 = first.get("metadata") if isinstance(first.get("metadata"), dict) else {}
        merged = {**file_meta, **bmeta, **rmeta0}
        unit = merged.get("unit", "second")
        if unit not in _UNITS:
            raise UserError(f"{where} has unknown unit {unit!r}; pyperf units are "
                            f"second, byte and integer")
        raw_name = merged.get("name")
        if raw_name is not None and not isinstance(raw_name, str):
            raise UserError(f"{where} has a name that is not text ({raw_name!r:.40}); the file "
                            f"is not pyperf JSON or is damaged")
        parsed.append((raw_name or f"benchmark{i}", unit, bmeta, bench["runs"]))
    return parsed


def _imported_runs(where: str, j: int, run: Any, outer_meta: dict[str, Any], values_key: str,
                   old: bool, metric: str, factor: float) -> list[ImportedRun]:
    """pyperf run ``j`` as benchlab runs: its warmups (one warmup run) and its values (one
    run), each in the store's unit (times ``factor``); ``outer_meta``: the file's and the
    benchmark's metadata, under the run's own. UserError for a damaged run."""
    if not isinstance(run, dict):
        raise UserError(f"{where} is not an object; the file is damaged")
    values = run.get(values_key) or []
    warmups = run.get("warmups") or []
    if not isinstance(values, list) or not all(_number(v) for v in values):
        raise UserError(f"{where}: '{values_key}' must be a list of numbers; "
                        f"the file is damaged")
    if not isinstance(warmups, list) or not all(
            isinstance(w, list) and len(w) == 2 and _number(w[0]) and _number(w[1])
            for w in warmups):
        raise UserError(f"{where}: 'warmups' must be [loops, value] pairs; "
                        f"the file is damaged")
    rmeta = run.get("metadata") if isinstance(run.get("metadata"), dict) else {}
    merged = {**outer_meta, **rmeta}
    loops = merged.get("loops", 1)
    inner = merged.get("inner_loops", 1)
    runs: list[ImportedRun] = []
    if warmups:
        warm = np.asarray([w[1] for w in warmups], float)
        if old:  # before format 1.0 warmups were raw (not per-iteration) values
            warm = warm / (np.asarray([w[0] for w in warmups], float) * inner)
        runs.append(ImportedRun(
            iteration=j, warmup=True,
            fields={"status": "imported",
                    "extra": {"pyperf_run": j, "warmup_loops": [w[0] for w in warmups],
                              "inner_loops": inner}},
            samples={metric: warm * factor}))
    if values:
        runs.append(ImportedRun(
            iteration=j,
            fields={"status": "imported",
                    "extra": {"pyperf_run": j, "loops": loops, "inner_loops": inner,
                              "metadata": rmeta}},
            samples={metric: np.asarray(values, float) * factor}))
    return runs


def parse_pyperf(path: str | os.PathLike, *, name: str | None = None,
                 command_line: list[str] | None = None) -> ImportedSession:
    """Parse a pyperf JSON file (nothing is written)."""
    doc = load_json(path, "pyperf JSON", "pyperf")
    if not (isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list)
            and "version" in doc and "context" not in doc and "machine_info" not in doc):
        raise wrong_format(path, "pyperf", doc,
                           "pyperf JSON (needs 'version' and a 'benchmarks' list)")
    if not doc["benchmarks"]:
        raise UserError(f"{path} holds no benchmarks; check the pyperf output file")
    version = doc.get("version")
    if version not in _VERSIONS:
        raise UserError(f"{path} has pyperf file format version {version!r}; pyperf itself reads "
                        f"only 5, 6 and 1.0: convert it with a current pyperf (pyperf convert)")
    old = version != "1.0"
    file_meta = doc.get("metadata") if (version != 5 and isinstance(doc.get("metadata"), dict)) else {}
    values_key = "samples" if version == 5 else "values"
    parsed = _benchmarks_of(path, doc["benchmarks"], file_meta,
                            "common_metadata" if version == 5 else "metadata")
    units = {u for _, u, _, _ in parsed}
    mixed = len(units) > 1
    metrics: dict[str, ImportedMetric] = {}
    benchmarks: list[ImportedBenchmark] = []
    bench_meta: list[dict[str, Any]] = []
    used: set[str] = set()
    for i, (bname, unit, bmeta, runs_doc) in enumerate(parsed):
        store_unit, factor = _UNITS[unit]
        metric = "value" if (not mixed or unit == "second") else f"value_{unit}"
        metrics[metric] = ImportedMetric(metric, store_unit, "import:pyperf")
        final = bname
        k = 2
        while final in used:
            final = f"{bname} #{k}"
            k += 1
        used.add(final)
        runs: list[ImportedRun] = []
        for j, run in enumerate(runs_doc):
            runs += _imported_runs(f"{path} benchmarks[{i}].runs[{j}]", j, run,
                                   {**file_meta, **bmeta}, values_key, old, metric, factor)
        if not runs:
            raise UserError(f"{path} benchmark {bname!r} has no values or warmups; "
                            f"check the pyperf output file")
        benchmarks.append(ImportedBenchmark(name=final, runs=runs))
        bench_meta.append({"name": final, "unit": unit, "metadata": bmeta})
    metadata = {"format": "pyperf", "version": doc.get("version"), "metadata": file_meta,
                "benchmarks": bench_meta}
    # The machine: the file's metadata, or what every benchmark shares (pyperf moves metadata
    # common to all benchmarks up to the file only when there are several).
    common = dict(file_meta)
    shared = [b["metadata"] for b in bench_meta]
    for key in set(shared[0]) if shared else ():
        if all(m.get(key) == shared[0][key] for m in shared):
            common.setdefault(key, shared[0][key])
    return ImportedSession(name=name or default_session_name(path), source=source_of(path),
                           metadata=metadata, benchmarks=benchmarks,
                           metrics=list(metrics.values()), command_line=command_line,
                           environment=pyperf_environment(common))
