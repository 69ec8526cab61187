"""What one run of a benchmark harness reported: per benchmark, per metric, values with units.

Every harness format (Go's ``go test -bench`` text, Google Benchmark JSON, criterion's
directories, pytest-benchmark JSON) is parsed once, into an
:class:`~benchlab.store.formats.common.ImportedSession`; :func:`reported_of` reads that parse as
the gate and ``run --harness`` need it: every value a benchmark reported in the run, by metric.
One run of a harness can report several values of one benchmark (``go test -count 5``, Google
Benchmark repetitions, criterion's samples); a gate takes their median as the run's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchlab.store.formats.common import ImportedSession


@dataclass
class Reported:
    """One harness run's results.

    Attributes
    ----------
    benchmarks : dict of str to dict of str to list of float
        Benchmark name -> metric name -> the values the run reported, in the metric's unit.
    units : dict of str to str
        Metric name -> unit (``ns``, ``B``, ``MB/s``, ``1/s``, ``''``...).
    failed : dict of str to str
        Benchmarks the harness reported as failed or skipped -> its message.
    """

    benchmarks: dict[str, dict[str, list[float]]]
    units: dict[str, str]
    failed: dict[str, str] = field(default_factory=dict)


def reported_of(imported: ImportedSession) -> Reported:
    """The values of ``imported`` (one parsed harness output) by benchmark and metric.

    Warmup runs are left out; a benchmark whose every run failed is listed in ``failed``.
    """
    benchmarks: dict[str, dict[str, list[float]]] = {}
    failed: dict[str, str] = {}
    for bench in imported.benchmarks:
        values: dict[str, list[float]] = {}
        for run in bench.runs:
            if run.warmup:
                continue
            if run.fields.get("status") == "error":
                failed.setdefault(bench.name, str(run.fields.get("error") or "failed"))
                continue
            for metric, samples in run.samples.items():
                values.setdefault(metric, []).extend(float(v) for v in samples)
        if values:
            benchmarks[bench.name] = values
            failed.pop(bench.name, None)
    return Reported(benchmarks=benchmarks, units={m.name: m.unit for m in imported.metrics},
                    failed=failed)
