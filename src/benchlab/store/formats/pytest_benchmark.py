"""Import pytest-benchmark JSON (``pytest --benchmark-json=FILE``, or a saved run from
``.benchmarks/``).

The file holds ``machine_info``, ``commit_info``, ``datetime``, ``version`` and ``benchmarks``:
each entry has ``name`` (``test_fib[10]``), ``fullname`` (``tests/test_x.py::test_fib[10]``),
``group``, ``params``, ``options`` and ``stats``, whose times are seconds per iteration of the
benchmarked function: ``min``, ``max``, ``mean``, ``stddev``, ``median``, ``iqr``, ``q1``, ``q3``,
``rounds``, ``iterations``, ``ops`` (1/mean) and, when the run was saved with
``--benchmark-save-data`` (or ``--benchmark-json`` with it), ``data``: the time of each round
divided by its iterations.

Mapping: one benchmark per entry, named by ``name`` (by ``fullname`` when two entries share a
name); one run (status ``imported``) holding metric ``time`` (ns). With ``data`` the samples are
the rounds themselves. Without it only summaries exist: the run holds one sample, the
``median`` of the rounds, and says so (``extra.summary_only``); two such sessions compare as one
value each, so save the data when a gate reads the file. The other statistics, ``params``,
``group`` and ``extra_info`` go to the run's ``extra``; ``machine_info`` and ``commit_info`` to
the session's metadata.
"""

from __future__ import annotations

import math
import os
from typing import Any

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

#: The metric a gate decides on by default: the time per iteration.
PRIMARY = "time"


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def looks_like(doc: Any) -> bool:
    """Whether a parsed JSON document is pytest-benchmark's."""
    return (isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list)
            and isinstance(doc.get("machine_info"), dict))


def _run(entry: dict[str, Any], where: str) -> ImportedRun:
    stats = entry.get("stats")
    if not isinstance(stats, dict):
        raise UserError(f"{where} has no 'stats'; the file is not pytest-benchmark JSON or is "
                        f"damaged")
    data = stats.get("data")
    extra = {k: entry.get(k) for k in ("fullname", "group", "params", "extra_info")}
    extra["stats"] = {k: v for k, v in stats.items() if k != "data"}
    if data is not None:
        if not isinstance(data, list) or not data or not all(_finite(v) for v in data):
            raise UserError(f"{where}: stats.data must be a non-empty list of finite times "
                            f">= 0; the file is damaged")
        values = [float(v) * 1e9 for v in data]
    else:
        if not _finite(stats.get("median")):
            raise UserError(f"{where}: stats.median is {stats.get('median')!r}, not a finite "
                            f"time >= 0; the file is damaged")
        values = [float(stats["median"]) * 1e9]
        extra["summary_only"] = ("no raw data in the file: the one sample is the median of "
                                 f"{stats.get('rounds')} rounds (save with "
                                 f"--benchmark-save-data for every round)")
    return ImportedRun(iteration=0, fields={"status": "imported", "extra": extra},
                       samples={PRIMARY: values})


def parse_pytest_benchmark_doc(doc: Any, source: str, *, name: str,
                               command_line: list[str] | None = None) -> ImportedSession:
    """Parse a loaded pytest-benchmark JSON document (nothing is written)."""
    if not looks_like(doc):
        raise wrong_format(source, "pytest-benchmark", doc,
                           "pytest-benchmark JSON (needs 'machine_info' and a 'benchmarks' list)")
    entries = doc["benchmarks"]
    if not entries:
        raise UserError(f"{source} holds no benchmarks; check that pytest ran tests using the "
                        f"benchmark fixture (and not with --benchmark-disable)")
    names = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise UserError(f"{source} benchmarks[{i}] has no 'name'; the file is not "
                            f"pytest-benchmark JSON or is damaged")
        names.append(entry["name"])
    benchmarks = []
    for i, entry in enumerate(entries):
        bench_name = entry["name"]
        if names.count(bench_name) > 1:
            bench_name = str(entry.get("fullname") or bench_name)
        run = _run(entry, f"{source} benchmarks[{i}] ({entry['name']})")
        benchmarks.append(ImportedBenchmark(name=bench_name, runs=[run]))
    metadata = {"format": "pytest-benchmark", "version": doc.get("version"),
                "datetime": doc.get("datetime"), "machine_info": doc.get("machine_info"),
                "commit_info": doc.get("commit_info")}
    return ImportedSession(name=name, source=source, metadata=metadata, benchmarks=benchmarks,
                           metrics=[ImportedMetric(PRIMARY, "ns", "import:pytest-benchmark")],
                           command_line=command_line)


def parse_pytest_benchmark(path: str | os.PathLike, *, name: str | None = None,
                           command_line: list[str] | None = None) -> ImportedSession:
    """Parse a pytest-benchmark JSON file (nothing is written)."""
    doc = load_json(path, "pytest-benchmark JSON", "pytest-benchmark")
    return parse_pytest_benchmark_doc(doc, source_of(path),
                                      name=name or default_session_name(path),
                                      command_line=command_line)
