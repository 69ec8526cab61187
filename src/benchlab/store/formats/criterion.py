"""Import criterion.rs results: the directory ``cargo bench`` leaves in ``target/criterion``.

criterion writes, for each benchmark, ``<dir>/<group>[/<function>][/<value>]/new/`` with

* ``benchmark.json``: ``group_id``, ``function_id``, ``value_str``, ``full_id`` (the name it
  prints, e.g. ``fib/12``), ``throughput`` (``{"Bytes": n}``, ``{"BytesDecimal": n}`` or
  ``{"Elements": n}`` per iteration, or null);
* ``sample.json``: ``sampling_mode``, ``iters`` and ``times``, one pair per sample: a sample
  ran ``iters[i]`` iterations in ``times[i]`` nanoseconds;
* ``estimates.json``: its bootstrap estimates (mean, median, slope, std_dev...) with intervals.

``base/`` (the previous run, for criterion's own comparison) and ``report/`` are not read.

Mapping: one benchmark per ``new/`` directory, named by ``full_id``, in name order; one run
(status ``imported``) holding metric ``time``, the per-iteration time of each sample
(``times[i] / iters[i]``, ns), and, when the benchmark declares a throughput, metric
``throughput`` (``B/s`` or ``1/s``: the declared amount per iteration over that time). The
estimates go to the run's ``extra.estimates`` (point estimates, ns): they are criterion's
derived numbers, not samples. The path given may be ``target/criterion`` or one benchmark's
directory.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
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
)

#: The metric a gate decides on by default: the time per iteration.
PRIMARY = "time"
_THROUGHPUT_UNITS = {"Bytes": "B/s", "BytesDecimal": "B/s", "Elements": "1/s"}


def benchmark_dirs(root: str | os.PathLike) -> list[Path]:
    """Every ``new/`` directory of a benchmark under ``root`` (``root`` itself may be one)."""
    p = Path(root)
    found = [d.parent for d in p.rglob("benchmark.json")
             if d.parent.name == "new" and "report" not in d.relative_to(p).parts]
    return sorted(found)


def _numbers(doc: dict, key: str, where: str) -> list[float]:
    values = doc.get(key)
    if not isinstance(values, list) or not values or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0 for v in values):
        raise UserError(f"{where}: '{key}' must be a non-empty list of finite numbers >= 0; "
                        f"the file is damaged (re-run cargo bench)")
    return [float(v) for v in values]


def _one(new: Path) -> tuple[str, ImportedRun, str | None]:
    """(name, run, throughput unit) of one benchmark's ``new/`` directory."""
    meta = load_json(new / "benchmark.json", "criterion benchmark.json", "criterion")
    sample = load_json(new / "sample.json", "criterion sample.json", "criterion")
    where = str(new / "sample.json")
    if not isinstance(meta, dict) or not isinstance(meta.get("full_id"), str):
        raise UserError(f"{new / 'benchmark.json'} has no 'full_id'; it is not criterion's "
                        f"benchmark.json or it is damaged")
    if not isinstance(sample, dict):
        raise UserError(f"{where} is not a criterion sample (no 'iters' and 'times')")
    iters = _numbers(sample, "iters", where)
    times = _numbers(sample, "times", where)
    if len(iters) != len(times) or 0 in iters:
        raise UserError(f"{where}: {len(iters)} iteration counts for {len(times)} times, or a "
                        f"sample of 0 iterations; the file is damaged (re-run cargo bench)")
    per_iteration = [t / n for t, n in zip(times, iters)]
    samples: dict[str, list[float]] = {PRIMARY: per_iteration}
    unit = None
    throughput = meta.get("throughput")
    if isinstance(throughput, dict) and len(throughput) == 1:
        kind, amount = next(iter(throughput.items()))
        if kind in _THROUGHPUT_UNITS and isinstance(amount, (int, float)) and amount > 0:
            unit = _THROUGHPUT_UNITS[kind]
            samples["throughput"] = [amount * 1e9 / t if t > 0 else 0.0 for t in per_iteration]
    estimates: dict[str, Any] = {}
    if (new / "estimates.json").is_file():
        doc = load_json(new / "estimates.json", "criterion estimates.json", "criterion")
        if isinstance(doc, dict):
            estimates = {k: v.get("point_estimate") for k, v in doc.items()
                         if isinstance(v, dict)}
    extra = {"iters": iters, "sampling_mode": sample.get("sampling_mode"),
             "estimates": estimates, "throughput": throughput}
    run = ImportedRun(iteration=0, fields={"status": "imported", "extra": extra},
                      samples=samples)
    return meta["full_id"], run, unit


def parse_criterion(path: str | os.PathLike, *, name: str | None = None,
                    command_line: list[str] | None = None) -> ImportedSession:
    """Parse criterion's output directory (nothing is written)."""
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"{path} is not a directory; criterion results are a directory: give "
                        f"target/criterion (or one benchmark's directory in it)")
    dirs = benchmark_dirs(p)
    if not dirs:
        raise UserError(f"{path} holds no criterion results (no */new/benchmark.json); run "
                        f"cargo bench first, and give target/criterion")
    metrics = {PRIMARY: ImportedMetric(PRIMARY, "ns", "import:criterion")}
    benchmarks: list[ImportedBenchmark] = []
    for new in dirs:
        bench_name, run, unit = _one(new)
        if unit is not None:
            known = metrics.setdefault("throughput",
                                       ImportedMetric("throughput", unit, "import:criterion"))
            if known.unit != unit:  # one unit per metric in a session
                run.samples[f"throughput_{unit.replace('/', '_per_')}"] = \
                    run.samples.pop("throughput")
                alt = f"throughput_{unit.replace('/', '_per_')}"
                metrics.setdefault(alt, ImportedMetric(alt, unit, "import:criterion"))
        benchmarks.append(ImportedBenchmark(name=bench_name, runs=[run]))
    return ImportedSession(name=name or default_session_name(path), source=source_of(path),
                           metadata={"format": "criterion"}, benchmarks=benchmarks,
                           metrics=list(metrics.values()), command_line=command_line)
