"""Import JMH results (the Java Microbenchmark Harness: ``-rf json -rff FILE``).

The file is a JSON list with one entry per benchmark method, mode and parameter set:
``benchmark`` (``pkg.Class.method``), ``mode`` (``thrpt``, ``avgt``, ``sample``, ``ss``),
``params`` (``{"size": "100"}``, values as strings), run facts (``forks``, ``threads``,
``measurementIterations``, ``jmhVersion``, ``jdkVersion``, ``vmName``...), ``primaryMetric``
and ``secondaryMetrics`` (profilers' results such as ``gc.alloc.rate.norm`` in ``B/op``, and
the percentiles of the sample mode), each ``{score, scoreError, scoreUnit, rawData}``.
``rawData`` holds one list per fork of one value per measurement iteration (warmup iterations
are not written); the sample mode writes ``rawDataHistogram`` instead: per fork, per
iteration, ``[time, count]`` pairs. JMH writes NaN and infinities as the strings ``"NaN"``,
``"+INF"``, ``"-INF"``, and ``-Djmh.json.rawData=false`` leaves the raw data empty.

Mapping: one benchmark per method and parameter set, named ``pkg.Class.method/size=100``: the
parameters joined as ``/key=value`` in JMH's order, the way benchstat reads a Go
sub-benchmark's configuration (``BenchmarkX/size=100``), so each parameter set is its own
series and the name says which (the parameters are also the benchmark's ``parameters``). When
one method and parameter set ran in several modes, ``/mode=MODE`` is added as well, since the
profilers' metrics of each mode are different measurements. One run (status ``imported``) per
fork; each measurement iteration is one sample. The primary metric is named after the mode
(JMH's ``Mode`` column): ``thrpt`` in ``ops/s`` (higher is better), and ``avgt``, ``sample``,
``ss`` in ``ns`` per operation (lower is better), whatever ``@OutputTimeUnit`` the class chose,
so benchmarks of different classes compare. A sample-mode iteration counts with the mean of its
histogram (JMH's own score is the mean of all samples). Secondary metrics keep their names
(a leading ``·`` of JMH before 1.33 dropped, ``/`` spelt ``_per_``) and units, a time per
operation converted to ns; one with a value that is not a finite number >= 0 (a profiler's
NaN) is left out and named in the session's metadata under ``skipped_metrics``. Without raw data
a run holds one sample, the score, and says so (``extra.summary_only``). The JVM facts go to the
session's metadata.
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
    sniff_json,
    source_of,
    wrong_format,
)

#: The metric a gate decides on by default: the throughput, JMH's default mode.
PRIMARY = "thrpt"
#: JMH's modes (``Mode.shortLabel``); all but ``thrpt`` report a time per operation.
MODES = ("thrpt", "avgt", "sample", "ss")
#: ns per unit of JMH's time units (``TimeValue.tuToString``; the spelling of JMH before 1.0
#: too).
_UNIT_NS = {"ns": 1.0, "nsec": 1.0, "us": 1e3, "usec": 1e3, "µs": 1e3, "ms": 1e6, "msec": 1e6,
            "s": 1e9, "sec": 1e9, "min": 60e9, "hr": 3600e9, "hour": 3600e9, "day": 86400e9}
#: What the session keeps of the first entry's run facts.
_JVM_FACTS = ("jmhVersion", "jvm", "jvmArgs", "jdkVersion", "vmName", "vmVersion")
#: What each run keeps of its entry's settings.
_RUN_FACTS = ("mode", "threads", "forks", "warmupIterations", "warmupTime", "warmupBatchSize",
              "measurementIterations", "measurementTime", "measurementBatchSize")


def scale_of(unit: str, primary_mode: str | None = None) -> tuple[str, float]:
    """(stored unit, factor) of a JMH score unit: ``ops/TIME`` -> ``ops/s``, ``TIME/op`` ->
    ``ns``, anything else (``B/op``, ``MB/sec``, ``counts``) kept with factor 1. A primary
    metric (``primary_mode`` given) must be one of the first two; UserError otherwise."""
    top, _, bottom = unit.partition("/")
    if top == "ops" and bottom in _UNIT_NS:
        return "ops/s", 1e9 / _UNIT_NS[bottom]
    if bottom == "op" and top in _UNIT_NS:
        return "ns", _UNIT_NS[top]
    if primary_mode is not None:
        raise UserError(f"JMH mode {primary_mode} reports in unit {unit!r}, which is neither "
                        f"ops/TIME nor TIME/op; the file is damaged or from an unknown JMH")
    return unit, 1.0


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def _histogram_means(forks: Any, where: str) -> list[list[float]]:
    """Per fork, per iteration: the mean time of a sample-mode iteration's ``[time, count]``
    pairs."""
    means: list[list[float]] = []
    for fork in forks if isinstance(forks, list) else [None]:
        if not isinstance(fork, list):
            raise UserError(f"{where}: rawDataHistogram is not a list per fork of iterations; "
                            f"the file is damaged")
        means.append([])
        for pairs in fork:
            try:
                total = sum(float(t) * int(c) for t, c in pairs)
                count = sum(int(c) for _, c in pairs)
            except (TypeError, ValueError):
                raise UserError(f"{where}: rawDataHistogram holds something other than "
                                f"[time, count] pairs; the file is damaged") from None
            if count <= 0 or not math.isfinite(total):
                raise UserError(f"{where}: a sample-mode iteration has no samples; the file is "
                                f"damaged")
            means[-1].append(total / count)
    return means


def _raw(metric: dict[str, Any], where: str) -> list[list[Any]]:
    """Per fork, per iteration: the values of one metric (``rawData``)."""
    if "rawDataHistogram" in metric:
        return _histogram_means(metric["rawDataHistogram"], where)
    raw = metric.get("rawData", [])
    if not isinstance(raw, list) or not all(isinstance(fork, list) for fork in raw):
        raise UserError(f"{where}: rawData is not a list per fork of iteration values; the file "
                        f"is damaged")
    return raw


def _primary(entry: dict[str, Any], where: str) -> tuple[str, list[list[float]], bool]:
    """(stored unit, per fork its iteration values converted, whether only the score was
    there) of an entry's primary metric."""
    metric = entry["primaryMetric"]
    unit, factor = scale_of(str(metric.get("scoreUnit", "")), entry["mode"])
    forks = [fork for fork in _raw(metric, where) if fork]
    summary_only = not forks
    if summary_only:
        forks = [[metric.get("score")]]
    for fork in forks:
        for value in fork:
            if not _finite(value):
                raise UserError(f"{where}: the {entry['mode']} value {value!r} is not a finite "
                                f"number >= 0; the file is damaged")
    return unit, [[float(v) * factor for v in fork] for fork in forks], summary_only


def _secondaries(entry: dict[str, Any], where: str, skipped: set[str]
                 ) -> dict[str, tuple[str, list[list[float]]]]:
    """Secondary metric name -> (stored unit, per fork its iteration values converted); a
    metric with a value that is not a finite number >= 0 is added to ``skipped`` instead."""
    found: dict[str, tuple[str, list[list[float]]]] = {}
    metrics = entry.get("secondaryMetrics") or {}
    if not isinstance(metrics, dict):
        raise UserError(f"{where}: secondaryMetrics is not an object; the file is damaged")
    for raw_name, metric in metrics.items():
        name = str(raw_name).lstrip("·").replace("/", "_per_") or "secondary"
        if not isinstance(metric, dict):
            raise UserError(f"{where}: secondary metric {raw_name!r} is not an object; the "
                            f"file is damaged")
        forks = _raw(metric, f"{where} {raw_name}")
        if not any(forks) or not all(_finite(v) for fork in forks for v in fork):
            skipped.add(name)
            continue
        unit, factor = scale_of(str(metric.get("scoreUnit", "")))
        found[name] = (unit, [[float(v) * factor for v in fork] for fork in forks])
    return found


def _check_entry(entry: Any, where: str) -> None:
    if not (isinstance(entry, dict) and isinstance(entry.get("benchmark"), str)
            and isinstance(entry.get("primaryMetric"), dict)):
        raise UserError(f"{where} has no 'benchmark' name or 'primaryMetric'; the file is not "
                        f"JMH JSON (-rf json) or is damaged")
    if entry.get("mode") not in MODES:
        raise UserError(f"{where} ({entry['benchmark']}) has mode {entry.get('mode')!r}, not "
                        f"one of {', '.join(MODES)}; the file is damaged")
    if not isinstance(entry.get("params", {}), dict):
        raise UserError(f"{where} ({entry['benchmark']}): params is not an object; the file "
                        f"is damaged")


def benchmark_name(entry: dict[str, Any], with_mode: bool = False) -> str:
    """``pkg.Class.method/key=value...`` of a JMH result (``/mode=MODE`` too when asked):
    benchstat's ``/key=value`` configuration of a sub-benchmark."""
    parts = [entry["benchmark"], *(f"{k}={v}" for k, v in (entry.get("params") or {}).items())]
    return "/".join(parts + ([f"mode={entry['mode']}"] if with_mode else []))


def _runs(entry: dict[str, Any], where: str, units: dict[str, str],
          skipped: set[str]) -> list[ImportedRun]:
    """One run per fork of an entry, its samples the iteration values of every metric; the
    unit of each metric is checked against ``units`` (one unit per metric in a session)."""
    unit, forks, summary_only = _primary(entry, where)
    metrics = {entry["mode"]: (unit, forks), **_secondaries(entry, where, skipped)}
    for name, (metric_unit, _) in metrics.items():
        if units.setdefault(name, metric_unit) != metric_unit:
            raise UserError(f"{where}: metric {name} is in {metric_unit} here but in "
                            f"{units[name]} elsewhere in the file; the file is damaged")
    extra = {k: entry[k] for k in _RUN_FACTS if k in entry}
    extra.update({k: entry["primaryMetric"].get(k) for k in ("score", "scoreError",
                                                              "scoreUnit")})
    if summary_only:
        extra["summary_only"] = ("no raw data in the file (-Djmh.json.rawData=false): the one "
                                 "sample is JMH's score")
    runs = []
    for fork in range(len(forks)):
        samples = {name: values[fork] for name, (_, values) in metrics.items()
                   if fork < len(values) and values[fork]}
        runs.append(ImportedRun(iteration=fork, samples=samples,
                                fields={"status": "imported", "extra": {**extra, "fork": fork}}))
    return runs


def parse_jmh_doc(doc: Any, source: str, *, name: str,
                  command_line: list[str] | None = None) -> ImportedSession:
    """Parse a loaded JMH JSON document (nothing is written)."""
    if sniff_json(doc) != "jmh":
        if doc == []:
            raise UserError(f"{source} holds no JMH results; check that the benchmark regexps "
                            f"of the JMH command match a benchmark")
        raise wrong_format(source, "jmh", doc, "JMH JSON (a list of results with 'benchmark' "
                                               "and 'primaryMetric')")
    for i, entry in enumerate(doc):
        _check_entry(entry, f"{source} [{i}]")
    plain = [benchmark_name(entry) for entry in doc]
    units: dict[str, str] = {}
    skipped: set[str] = set()
    benchmarks: list[ImportedBenchmark] = []
    for i, entry in enumerate(doc):
        bench = benchmark_name(entry, with_mode=plain.count(plain[i]) > 1)
        if any(b.name == bench for b in benchmarks):
            raise UserError(f"{source} [{i}]: {bench} appears twice in one file; the file "
                            f"joins two runs: import each run's file on its own")
        benchmarks.append(ImportedBenchmark(
            name=bench, parameters=dict(entry.get("params") or {}),
            runs=_runs(entry, f"{source} [{i}] ({entry['benchmark']})", units, skipped)))
    metadata = {"format": "jmh", "jvm": {k: doc[0][k] for k in _JVM_FACTS if k in doc[0]}}
    if skipped:
        metadata["skipped_metrics"] = sorted(skipped)
    return ImportedSession(name=name, source=source, metadata=metadata, benchmarks=benchmarks,
                           metrics=[ImportedMetric(m, u, "import:jmh") for m, u in units.items()],
                           command_line=command_line)


def parse_jmh(path: str | os.PathLike, *, name: str | None = None,
              command_line: list[str] | None = None) -> ImportedSession:
    """Parse a JMH JSON result file (``-rf json -rff FILE``; nothing is written)."""
    doc = load_json(path, "JMH JSON", "jmh")
    return parse_jmh_doc(doc, source_of(path), name=name or default_session_name(path),
                         command_line=command_line)
