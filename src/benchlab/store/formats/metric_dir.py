"""Import saved program outputs through ``--metric NAME[:UNIT]=REGEX`` specs.

``PATH`` is a directory of output files (one run per regular, non-hidden file, in sorted file
name order) or a single file (one run). All runs belong to ONE benchmark named ``--name``
(default: the directory's name, or the file's stem). Each run has status ``imported``,
``extra = {"file": <file name>}`` and, per metric, the values of every match in the file.

A file in which no metric matches becomes a run of status ``error`` (kept so the gap is visible,
and excluded from analysis); a regex that matches in no file at all is a UserError, as is a
directory without files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.store.formats.common import (
    ImportedBenchmark,
    ImportedMetric,
    ImportedRun,
    ImportedSession,
    default_session_name,
    source_of,
)
from benchlab.store.formats.metric_spec import MetricSpec, extract, parse_metric_spec


def _read_output(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except PermissionError:
        raise UserError(f"cannot read {path}: permission denied; make it readable (chmod u+r)") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}; check the file") from None


def output_files(path: str | os.PathLike) -> list[Path]:
    """The files a metric import reads: ``path`` itself, or a directory's regular non-hidden
    files sorted by name. Raises UserError for a missing path or an empty directory."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"cannot import {p}: no such file or directory; check the path")
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise UserError(f"cannot import {p}: not a regular file or directory")
    try:
        entries = sorted(os.scandir(p), key=lambda e: e.name)
    except PermissionError:
        raise UserError(f"cannot list directory {p}: permission denied; make it readable") from None
    files = [Path(e.path) for e in entries if not e.name.startswith(".") and e.is_file()]
    if not files:
        raise UserError(f"directory {p} has no files to import; point at the directory "
                        f"holding the program outputs")
    return files


def parse_metric_outputs(path: str | os.PathLike, specs: Sequence[str | MetricSpec], *,
                         name: str | None = None,
                         command_line: list[str] | None = None) -> ImportedSession:
    """Parse program outputs under ``path`` with the metric ``specs`` (nothing is written).

    Values are stored as captured, in each spec's unit.
    """
    if not specs:
        raise UserError("--format metric needs at least one --metric NAME[:UNIT]=REGEX, "
                        "e.g. --metric 'latency_ns:ns=<<BENCHMARK>> (\\d+)'")
    parsed = [s if isinstance(s, MetricSpec) else parse_metric_spec(s) for s in specs]
    names = [s.name for s in parsed]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"--metric {duplicates[0]} is given twice; give each metric once")
    files = output_files(path)
    runs: list[ImportedRun] = []
    matched_anywhere = {s.name: 0 for s in parsed}
    for index, file in enumerate(files):
        text = _read_output(file)
        samples = {}
        for spec in parsed:
            found = extract(spec, text, where=str(file))
            if found:
                samples[spec.name] = np.asarray(found, dtype=float)
                matched_anywhere[spec.name] += 1
        fields: dict = {"extra": {"file": file.name}}
        if samples:
            fields["status"] = "imported"
            missing = [n for n in names if n not in samples]
            if missing:
                fields["extra"]["missing_metrics"] = missing
        else:
            fields["status"] = "error"
            fields["error"] = "no --metric matched in this file"
        runs.append(ImportedRun(iteration=index, fields=fields, samples=samples))
    never = [s for s in parsed if matched_anywhere[s.name] == 0]
    if never:
        spec = never[0]
        where = f"the {len(files)} files in {path}" if len(files) > 1 else str(files[0])
        raise UserError(f"--metric {spec.name} regex '{spec.regex}' matched nothing in {where}; "
                        f"check the regex against a file (grep -E) and the path")
    p = Path(path)
    bench_name = name or default_session_name(p)
    metadata = {
        "format": "metric",
        "files": len(files),
        "metrics": [s.as_dict() for s in parsed],
        "files_matched": matched_anywhere,
    }
    return ImportedSession(
        name=bench_name, source=source_of(path), metadata=metadata,
        benchmarks=[ImportedBenchmark(name=bench_name, runs=runs)],
        metrics=[ImportedMetric(s.name, s.unit, "import:metric", s.regex) for s in parsed],
        command_line=command_line)
