"""Import Go benchmark results: ``go test -bench`` output, the text format benchstat reads.

The format (Go's benchmark data format, ``golang.org/x/perf/benchfmt``) is line based:

* a **result line** ``BenchmarkName-8   1000000   1234 ns/op   512 B/op   3 allocs/op``: the
  name (``Benchmark`` then nothing or a character that is not a lower-case letter; ``-8`` is
  GOMAXPROCS), the iteration count, then value-unit pairs: ``ns/op`` (or ``sec/op``), ``B/op``,
  ``allocs/op``, ``MB/s`` (``b.SetBytes``) and any custom unit of ``b.ReportMetric``;
* a **configuration line** ``key: value`` (a key starting with a lower-case letter, without
  spaces or upper-case letters: ``goos``, ``goarch``, ``pkg``, ``cpu``...), in force for the
  results below it until changed;
* anything else (``PASS``, ``ok  pkg 1.2s``, test logs, ``Unit`` lines) is not data.

Mapping: one benchmark per name, ``Benchmark`` and the ``-N`` suffix dropped (``Sum`` for
``BenchmarkSum-8``; the suffix is kept when one name ran at several GOMAXPROCS, and the package
is put first, ``pkg:Name``, when the output covers several packages with the same name). One run
(status ``imported``) per result line, in order (``-count 5`` gives five), with
``extra.iterations``, ``extra.procs`` and ``extra.pkg``. Each unit is a metric named after it with
``/`` spelt ``_per_`` (a benchmark selector splits at ``/``): ``ns/op`` -> ``ns_per_op`` (unit
``ns``), ``B/op`` -> ``B_per_op`` (``B``), ``allocs/op`` -> ``allocs_per_op`` (``allocs``),
``MB/s`` -> ``MB_per_s`` (``MB/s``), ``frobs/op`` -> ``frobs_per_op`` (``frobs``). The unit tells
the direction (:func:`benchlab.units.higher_is_better`: MB/s higher is better, the rest lower).
The configuration lines go to the session's metadata under ``config``.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from benchlab.errors import UserError
from benchlab.store.formats.common import (
    ImportedBenchmark,
    ImportedMetric,
    ImportedRun,
    ImportedSession,
    default_session_name,
    source_of,
)
from benchlab.store.formats.readers import iter_lines, open_text

#: The metric a gate decides on by default: the time per operation.
PRIMARY = "ns_per_op"
_CONFIG = re.compile(r"^([a-z][^\sA-Z:]*):(?:\s+(.*?))?\s*$")
_NAME = re.compile(r"^Benchmark(?![a-z])\S*$")
_PROCS = re.compile(r"^(.*?)-(\d+)$")


def metric_of_unit(unit: str) -> tuple[str, str, float]:
    """(metric name, stored unit, factor to the stored unit) of a Go result unit."""
    if unit == "sec/op":  # benchfmt's normalised time unit
        return PRIMARY, "ns", 1e9
    if unit == "ns/op":
        return PRIMARY, "ns", 1.0
    name = unit.replace("/", "_per_")
    stored = unit[:-3] if unit.endswith("/op") else unit
    return name, stored, 1.0


def _result(words: list[str], where: str) -> tuple[str, int, list[tuple[str, float]]]:
    """(name, iterations, [(unit, value)]) of a result line split into words."""
    name = words[0]
    if not words[1].isdigit():
        raise UserError(f"{where}: iteration count {words[1]!r} of {name} is not a whole "
                        f"number; this is not `go test -bench` output or it is damaged")
    pairs = words[2:]
    if not pairs or len(pairs) % 2:
        raise UserError(f"{where}: {name} has no value-unit pairs after its iteration count "
                        f"(a value or a unit is missing); the line is damaged")
    values: list[tuple[str, float]] = []
    for value, unit in zip(pairs[0::2], pairs[1::2]):
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"{where}: {name} reports {value!r} {unit}, not a number; the "
                            f"line is damaged") from None
        if not math.isfinite(number) or number < 0:
            raise UserError(f"{where}: {name} reports {value} {unit}, not a finite number "
                            f">= 0; the line is damaged")
        values.append((unit, number))
    return name, int(words[1]), values


def _lines_to_results(lines, source: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    results: list[dict[str, Any]] = []
    config: dict[str, str] = {}
    first_config: dict[str, str] = {}
    for lineno, line in lines:
        words = line.split()
        if len(words) >= 2 and _NAME.match(words[0]):
            name, iterations, values = _result(words, f"{source} line {lineno}")
            short = name[len("Benchmark"):] or "Benchmark"
            match = _PROCS.match(short)
            procs = int(match.group(2)) if match else None
            results.append({"full": short, "base": match.group(1) if match else short,
                            "procs": procs, "iterations": iterations, "values": values,
                            "pkg": config.get("pkg", "")})
            continue
        match = _CONFIG.match(line)
        if match:
            config[match.group(1)] = match.group(2) or ""
            first_config.setdefault(match.group(1), match.group(2) or "")
    return results, first_config


def _names(results: list[dict[str, Any]]) -> list[str]:
    """The benchmark name of each result (see the module docstring)."""
    procs_of: dict[tuple[str, str], set] = {}
    for r in results:
        procs_of.setdefault((r["pkg"], r["base"]), set()).add(r["procs"])
    names = [r["full"] if len(procs_of[(r["pkg"], r["base"])]) > 1 else r["base"]
             for r in results]
    packages_of: dict[str, set] = {}
    for r, name in zip(results, names):
        packages_of.setdefault(name, set()).add(r["pkg"])
    return [f"{r['pkg']}:{name}" if len(packages_of[name]) > 1 else name
            for r, name in zip(results, names)]


def parse_gotest_lines(lines, source: str, *, name: str,
                       command_line: list[str] | None = None) -> ImportedSession:
    """Parse ``(line number, text)`` pairs of ``go test -bench`` output (nothing is written).

    Raises a one-line UserError for a damaged result line or an output with no result line.
    """
    results, config = _lines_to_results(lines, source)
    if not results:
        raise UserError(f"{source} holds no Go benchmark result line (BenchmarkName N value "
                        f"unit ...); run go test with -bench PATTERN, and check that the "
                        f"pattern matches a benchmark")
    order: list[str] = []
    runs: dict[str, list[ImportedRun]] = {}
    metrics: dict[str, ImportedMetric] = {}
    for result, bench_name in zip(results, _names(results)):
        if bench_name not in runs:
            runs[bench_name] = []
            order.append(bench_name)
        samples: dict[str, list[float]] = {}
        for unit, value in result["values"]:
            metric, stored, factor = metric_of_unit(unit)
            known = metrics.setdefault(metric, ImportedMetric(metric, stored, "import:go"))
            if known.unit != stored:
                raise UserError(f"{source}: metric {metric} comes in {known.unit} and in "
                                f"{stored}; the output mixes two formats")
            samples[metric] = [value * factor]
        extra = {"iterations": result["iterations"], "procs": result["procs"],
                 "pkg": result["pkg"]}
        runs[bench_name].append(ImportedRun(iteration=len(runs[bench_name]), samples=samples,
                                            fields={"status": "imported", "extra": extra}))
    benchmarks = [ImportedBenchmark(name=n, runs=runs[n]) for n in order]
    return ImportedSession(name=name, source=source, metadata={"format": "go", "config": config},
                           benchmarks=benchmarks, metrics=list(metrics.values()),
                           command_line=command_line)


def parse_gotest(path: str | os.PathLike, *, name: str | None = None,
                 command_line: list[str] | None = None) -> ImportedSession:
    """Parse a file of ``go test -bench`` output (nothing is written)."""
    with open_text(path, "go test -bench output") as fh:
        return parse_gotest_lines(iter_lines(fh, path), source_of(path),
                                  name=name or default_session_name(path),
                                  command_line=command_line)


def parse_gotest_text(text: str, source: str, *, name: str) -> ImportedSession:
    """Parse ``go test -bench`` output held in memory (a harness run's standard output)."""
    return parse_gotest_lines(enumerate(text.splitlines(), 1), source, name=name)


def looks_like_gotest(head: str) -> bool:
    """Whether the start of a text file holds a Go benchmark result line (for ``--format auto``)."""
    for line in head.splitlines()[:200]:
        words = line.split()
        if len(words) >= 4 and _NAME.match(words[0]) and words[1].isdigit():
            return True
    return False
