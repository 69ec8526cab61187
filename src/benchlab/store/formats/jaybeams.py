"""Import ``label,value`` CSV files as written by JayBeams' benchmark drivers.

Layout::

    # free-form lines about the environment (kept verbatim, in order, as session metadata)
    book_type,nanoseconds        <- optional header: second field not a number
    map,1000474
    array,537670
    # more comment lines may follow the data

Each distinct label becomes one benchmark (in order of first appearance) with ONE run of status
``imported`` (the file has no harness timings) whose samples of metric ``value`` are the label's
values in file order. The unit is ``--unit``, else derived from the header's second field
(nanoseconds/ns -> ns, microseconds/us -> us, milliseconds/ms -> ms, seconds/s -> s), else ''.
Values are stored as written (no unit conversion).
"""

from __future__ import annotations

import csv
import math
import os
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.store.formats._common import (
    ImportedBenchmark, ImportedMetric, ImportedRun, ImportedSession, default_session_name,
    is_number_text, read_text, source_of,
)

METRIC = "value"

_HEADER_UNITS = {
    "nanoseconds": "ns", "nanosecond": "ns", "ns": "ns", "nsec": "ns",
    "microseconds": "us", "microsecond": "us", "us": "us", "usec": "us", "µs": "us",
    "milliseconds": "ms", "millisecond": "ms", "ms": "ms", "msec": "ms",
    "seconds": "s", "second": "s", "s": "s", "sec": "s",
}


def unit_from_header(header: str | None) -> str:
    """The unit a header such as ``book_type,nanoseconds`` names ('' when it names none)."""
    if not header:
        return ""
    fields = header.split(",")
    if len(fields) < 2:
        return ""
    word = fields[1].strip().strip('"').lower()
    for token in (word, word.strip("[]()"), word.split("[")[-1].rstrip("]"),
                  word.split("_")[-1]):
        if token in _HEADER_UNITS:
            return _HEADER_UNITS[token]
    return ""


def _split(line: str) -> list[str]:
    if '"' in line:
        return next(csv.reader([line]))
    return line.split(",")


def parse_csv(path: str | os.PathLike, *, name: str | None = None, unit: str | None = None,
              command_line: list[str] | None = None) -> list[ImportedSession]:
    """Parse a CSV file: benchlab's long-format export when it has that header (one session
    per exported session), else a ``label,value`` file (one session)."""
    from benchlab.store.formats.csv_long import is_long_csv, parse_long_csv

    text = read_text(path, "a label,value CSV file")
    lines = text.splitlines()
    if is_long_csv(lines):
        if unit is not None:
            raise UserError(f"{path} is a benchlab long-format CSV, which carries its units; "
                            f"drop --unit")
        return parse_long_csv(path, lines, name=name, command_line=command_line)
    return [parse_label_value_csv(path, name=name, unit=unit, command_line=command_line,
                                  lines=lines)]


def parse_label_value_csv(path: str | os.PathLike, *, name: str | None = None,
                          unit: str | None = None,
                          command_line: list[str] | None = None,
                          lines: list[str] | None = None) -> ImportedSession:
    """Parse a JayBeams-style CSV into an :class:`ImportedSession` (nothing is written).

    Raises a one-line UserError naming the line for a malformed row (wrong field count,
    non-numeric value), and for a file without any ``label,value`` row.
    """
    if lines is None:
        lines = read_text(path, "a label,value CSV file").splitlines()
    fast = _parse_fast(lines)
    if fast is not None:
        comments, header, order, values, rows = fast
    else:
        # The slow path parses line by line, so it can name the offending line.
        comments, header, order, values, rows = _parse_slow(path, lines)
    if rows == 0:
        raise UserError(f"{path} has no label,value rows (only comments or a header); "
                        f"check the file, or choose another --format")
    if unit is None:
        unit = unit_from_header(header)
    benchmarks = [
        ImportedBenchmark(name=label, runs=[ImportedRun(
            iteration=0, fields={"status": "imported"},
            samples={METRIC: np.asarray(values[label], dtype=float)})])
        for label in order
    ]
    metadata: dict[str, Any] = {"format": "csv", "comments": comments, "header": header,
                                "rows": rows}
    return ImportedSession(
        name=name or default_session_name(path), source=source_of(path), metadata=metadata,
        benchmarks=benchmarks, metrics=[ImportedMetric(METRIC, unit, "import:csv")],
        command_line=command_line)


_Parsed = tuple[list[str], "str | None", list[str], dict[str, Any], int]


def _parse_fast(lines: list[str]) -> _Parsed | None:
    """Vectorised parse of a well-formed file; None when anything needs a closer look."""
    comments = [ln for ln in lines if ln.startswith("#")]
    data = [ln for ln in lines if not ln.startswith("#") and ln.strip()]
    if not data or any('"' in ln for ln in data):
        return None
    header = None
    first = data[0].split(",")
    if len(first) == 2 and not is_number_text(first[1]):
        header = data[0]
        data = data[1:]
    parts = [ln.split(",") for ln in data]
    if any(len(p) != 2 for p in parts):
        return None
    labels = [p[0].strip() for p in parts]
    try:
        vals = np.array([p[1] for p in parts], dtype=float)
    except ValueError:
        return None
    if not np.isfinite(vals).all() or "" in labels:
        return None
    order = list(dict.fromkeys(labels))
    if len(order) == 1:
        values = {order[0]: vals}
    else:
        label_arr = np.array(labels, dtype=object)
        values = {label: vals[label_arr == label] for label in order}
    return comments, header, order, values, len(vals)


def _parse_slow(path: str | os.PathLike, lines: list[str]) -> _Parsed:
    comments: list[str] = []
    header: str | None = None
    order: list[str] = []
    values: dict[str, list[float]] = {}
    rows = 0
    for lineno, line in enumerate(lines, 1):
        if line.startswith("#"):
            comments.append(line)
            continue
        stripped = line.strip()
        if not stripped:
            continue
        parts = _split(stripped)
        if len(parts) != 2:
            raise UserError(_field_count_error(path, lineno, stripped, len(parts)))
        label, raw = parts[0].strip(), parts[1].strip()
        try:
            value = float(raw)
        except ValueError:
            if rows == 0 and header is None:
                header = line
                continue
            raise UserError(
                f"malformed CSV {path} line {lineno}: value {raw[:40]!r} of label {label[:40]!r} "
                f"is not a number; fix or delete that line (comment lines start with '#')") from None
        if not math.isfinite(value):
            raise UserError(f"malformed CSV {path} line {lineno}: value {raw!r} is not finite; "
                            f"fix or delete that line")
        if not label:
            raise UserError(f"malformed CSV {path} line {lineno}: empty label; "
                            f"every row needs label,value")
        bucket = values.get(label)
        if bucket is None:
            bucket = values[label] = []
            order.append(label)
        bucket.append(value)
        rows += 1
    return comments, header, order, values, rows


def _field_count_error(path: str | os.PathLike, lineno: int, line: str, n: int) -> str:
    if line.startswith(("{", "[")):
        return (f"{path} line {lineno} looks like JSON, not label,value CSV; "
                f"use --format hyperfine, pyperf or gbench")
    return (f"malformed CSV {path} line {lineno}: {n} fields where label,value needs 2 "
            f"({line[:60]!r}); fix the line, or mark it as a comment with '#'")
