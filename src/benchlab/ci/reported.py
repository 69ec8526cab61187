"""Metrics the benchmarked program reports itself, as the gate reads them.

``ab``, ``gate`` and ``bisect`` take ``--metric`` as ``run`` does: ``wall``, ``cpu`` and
``instructions`` are measured by benchlab; anything else is ``NAME[:UNIT]=REGEX``
(:class:`benchlab.measure.metrics.MetricSpec`, the one parser), a value the program prints
(``lz4 -b``'s MB/s, a harness's ns/op).

- **Direction** comes from the unit: anything per second (``MB/s``, ``ops/s``, ``it/s``,
  ``Hz``) is a throughput, higher is better; every other unit (time, bytes, counts, ``B/op``)
  is lower-is-better. ``--better NAME=higher`` (or ``lower``) overrides it.
- **One value per run**: a run that prints the metric several times (repetitions, per-file
  lines) counts with the median of its matches, and the gate's notes say so. Within a pair the
  ratio is head/base of the two runs' values.
- **A metric that never appears** in a run's output (stdout, then stderr) fails the benchmark
  (exit 3) naming the metric and the run.

The per-run readings are plain data, ``{benchmark: {metric: (values, unit)}}``
(:data:`Readings`), so a harness's parser that reads many benchmarks from one run's output
gives the gate the same shape a regex does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from benchlab.ci.gate import HIGHER, LOWER
from benchlab.errors import UserError

#: Metrics benchlab measures itself.
MEASURED = ("wall", "cpu", "instructions")
#: One run's readings: {benchmark: {metric: (values in that run, unit)}}.
Readings = dict[str, dict[str, tuple[list[float], str]]]



@dataclass(frozen=True)
class ReportedMetric:
    """A metric the program prints: ``name``, ``regex`` (one group around the number),
    ``unit`` and ``direction`` ("lower" or "higher" is better)."""

    name: str
    regex: str
    unit: str = ""
    direction: str = LOWER

    def spec(self):
        """The :class:`~benchlab.measure.metrics.MetricSpec` that extracts it."""
        from benchlab.measure.metrics import MetricSpec

        return MetricSpec(self.name, self.regex, self.unit)


def direction_of(unit: str) -> str:
    """``higher`` for a unit per time (a throughput: MB/s, ops/s, Hz), else ``lower``
    (:func:`benchlab.units.higher_is_better`, the one rule)."""
    from benchlab.units import higher_is_better

    return HIGHER if higher_is_better(unit) else LOWER


def parse_better(texts: Iterable[str]) -> dict[str, str]:
    """``--better NAME=higher|lower`` values as {name: direction}; one-line UserError."""
    out: dict[str, str] = {}
    for text in texts:
        name, sep, way = str(text).partition("=")
        if not sep or way.strip() not in (HIGHER, LOWER) or not name.strip():
            raise UserError(f"--better {text!r} must be NAME=higher or NAME=lower (which "
                            f"values of the metric are better)")
        out[name.strip()] = way.strip()
    return out


def parse_metrics(texts: Iterable[str], better: dict[str, str] | None = None,
                  where: str = "--metric") -> tuple[list[str], list[ReportedMetric]]:
    """The metric names to gate on and the reported ones among them, from ``--metric``
    values (``wall``, ``cpu``, ``instructions`` or ``NAME[:UNIT]=REGEX``); ``better``
    overrides directions. One-line UserError for a spec that cannot be used."""
    from benchlab.measure.metrics import parse_metric_spec

    better = dict(better or {})
    for name, way in better.items():
        if way not in (HIGHER, LOWER):
            raise UserError(f"{where} {name}: better is {way!r}; write higher or lower")
    names: list[str] = []
    reported: list[ReportedMetric] = []
    for text in texts:
        text = str(text)
        if text in MEASURED:
            names.append(text)
            continue
        if "=" not in text:
            raise UserError(f"{where} {text!r} is not one of {', '.join(MEASURED)} nor "
                            f"NAME[:UNIT]=REGEX (a value the program prints), e.g. "
                            f"--metric 'speed:MB/s=([0-9.]+) MB/s'")
        spec = parse_metric_spec(text)
        if spec.name in MEASURED:
            raise UserError(f"{where} {text!r}: {spec.name} is measured by benchlab; give the "
                            f"program's metric another name")
        if spec.name in names:
            raise UserError(f"{where} {spec.name} is given twice; give each metric once")
        names.append(spec.name)
        reported.append(ReportedMetric(spec.name, spec.regex, spec.unit,
                                       better.pop(spec.name, direction_of(spec.unit))))
    if better:
        raise UserError(f"--better {', '.join(sorted(better))}: no such --metric NAME=REGEX; "
                        f"give the metric's name as in its --metric")
    return names, reported


def stored_metric_names(texts: Iterable[str]) -> list[str]:
    """Metric names to gate two stored sessions on: ``--metric`` values as names (``wall``, a
    stored metric's ``NAME``, or ``NAME[:UNIT]=REGEX`` whose NAME is taken); default wall."""
    names = []
    for text in texts:
        name = str(text).partition("=")[0].partition(":")[0].strip()
        if not name:
            raise UserError(f"--metric {text!r} names no metric; give wall, cpu, instructions "
                            f"or the name of a metric the sessions store")
        names.append(name)
    return list(dict.fromkeys(names)) or ["wall"]


def missing_reported(benchmarks: Iterable, values: Callable[[str, str], int]) -> str | None:
    """The failure line of a fresh run in which a reported metric of a benchmark (an
    ``AbBenchmark``) never appeared (``values(benchmark, metric)``: how many it stored)."""
    for bench in benchmarks:
        for m in bench.reported:
            if not values(bench.name, m.name):
                return (f"benchmark {bench.name}: metric {m.name} never appeared in its output "
                        f"(stdout or stderr); check the regex {m.regex!r} against what the "
                        f"program prints")
    return None


def run_readings(benchmark: str, reported: Iterable[ReportedMetric],
                 samples: dict[str, list[float]]) -> Readings:
    """One run's readings of ``benchmark`` from the values its ``--metric`` regexes matched
    (``samples``: {metric: values}, as the run path extracts them)."""
    return {benchmark: {m.name: (list(samples.get(m.name, [])), m.unit) for m in reported}}
