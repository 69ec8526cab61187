"""Import generic ``label,value`` CSV files (the layout JayBeams' benchmark drivers write).

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
Values are stored as written (no unit conversion); they must be finite numbers, and not
negative (results are times, rates or counts). The header is the first row whose second field is not a
number at all (``a,nan`` is a row with a value that is not finite: an error).
"""

from __future__ import annotations

import csv
import io
import math
import os
from array import array
from collections.abc import Iterator
from typing import Any, TextIO

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
from benchlab.store.formats.readers import MAX_LINE_CHARS, iter_lines, join_quoted, open_text

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
    per exported session), else a ``label,value`` file (one session). The file is read as a
    stream: memory grows with the values (8 bytes each), not with the text."""
    from benchlab.store.formats.csv_long import HEADER, parse_long_csv

    with open_text(path, "a label,value CSV file") as fh:
        lines = iter_lines(fh, path)
        head: list[str] = []
        first: tuple[int, str] | None = None
        for lineno, line in lines:
            if line.startswith("#") or not line.strip():
                head.append(line)
                continue
            first = (lineno, line)
            break
        if first is not None and first[1].strip() == HEADER:
            if unit is not None:
                raise UserError(f"{path} is a benchlab long-format CSV, which carries its "
                                f"units; drop --unit")
            return parse_long_csv(path, head, fh, first[0], name=name,
                                  command_line=command_line)
        comments = [ln for ln in head if ln.startswith("#")]
        rest = lines if first is None else _chain(first, lines)
        return [_label_value_session(path, comments, rest, name=name, unit=unit,
                                     command_line=command_line, fh=fh)]


def _chain(first: tuple[int, str], rest: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield first
    yield from rest


def _label_value_session(path: Any, comments: list[str], lines: Iterator[tuple[int, str]], *,
                         name: str | None, unit: str | None,
                         command_line: list[str] | None,
                         fh: TextIO | None = None) -> ImportedSession:
    header: str | None = None
    values: dict[str, array] = {}  # insertion order = order of first appearance
    rows = 0
    # a quoted label may hold a line break: records, not lines
    for lineno, line in join_quoted(_fast_blocks(lines, values, fh, path), path):
        if lineno < 0:  # a block the fast path took: ``line`` holds how many rows it had
            rows += int(line)
            continue
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
                # a header's second field is a word; 'nan' or 'inf' parse, so they are values
                header = line
                if unit is None:
                    unit = unit_from_header(header)
                continue
            raise UserError(
                f"malformed CSV {path} line {lineno}: value {raw[:40]!r} of label {label[:40]!r} "
                f"is not a number; fix or delete that line (comment lines start with '#')") from None
        if not math.isfinite(value):
            raise UserError(f"malformed CSV {path} line {lineno}: value {raw[:40]!r} is not a "
                            f"finite number; fix or delete that line")
        if value < 0:
            raise UserError(f"malformed CSV {path} line {lineno}: negative value {raw[:40]!r}"
                            f"{f' ({unit})' if unit else ''}; results cannot be negative: fix or "
                            f"delete that line")
        if not label:
            raise UserError(f"malformed CSV {path} line {lineno}: empty label; "
                            f"every row needs label,value")
        bucket = values.get(label)
        if bucket is None:
            bucket = values[label] = array("d")
        bucket.append(value)
        rows += 1
    if rows == 0:
        raise UserError(f"{path} has no label,value rows (only comments or a header); "
                        f"check the file, or choose another --format")
    benchmarks = [
        ImportedBenchmark(name=label, runs=[ImportedRun(
            iteration=0, fields={"status": "imported"},
            samples={METRIC: np.frombuffer(vals, dtype=float)})])
        for label, vals in values.items()
    ]
    metadata: dict[str, Any] = {"format": "csv", "comments": comments, "header": header,
                                "rows": rows}
    return ImportedSession(
        name=name or default_session_name(path), source=source_of(path), metadata=metadata,
        benchmarks=benchmarks, metrics=[ImportedMetric(METRIC, unit or "", "import:csv")],
        command_line=command_line)


#: Lines the fast path parses at once.
_BLOCK_LINES = 20_000


def _fast_blocks(lines: Iterator[tuple[int, str]], values: dict[str, array],
                 fh: TextIO | None = None, path: Any = None) -> Iterator[tuple[int, str]]:
    """Pass ``lines`` through, except that after the first data row, blocks of plain
    ``label,value`` rows (no comments, quotes, blank lines, odd field counts, non-finite or
    negative values) are parsed here at numpy speed straight into ``values``; each such block
    yields ``(-1, "<rows>")``. Anything unusual goes through line by line, so errors still
    name their line. With ``fh`` (the file ``lines`` reads), the rows after the first data
    row are read from it in chunks of whole lines, without a Python step per line."""
    seen_data = False
    lineno = 0
    while fh is not None and not seen_data:
        item = next(lines, None)
        if item is None:
            return
        lineno = item[0]
        yield item
        seen_data = bool(item[1].strip()) and not item[1].startswith("#")
    if fh is not None:
        yield from _chunk_blocks(fh, path, lineno, values)
        return
    while True:
        block: list[tuple[int, str]] = []
        for item in lines:
            block.append(item)
            if len(block) >= (_BLOCK_LINES if seen_data else 1):
                break
        if not block:
            return
        texts = [text for _, text in block]
        parsed = _parse_block(texts, values) if seen_data else None
        if parsed is None:
            yield from block
            seen_data = seen_data or any(t.strip() and not t.startswith("#") for t in texts)
        else:
            yield -1, str(parsed)


#: Characters the chunk reader takes from the file at once (then completes the last line).
_CHUNK_CHARS = 1 << 20


def _chunk_blocks(fh: TextIO, path: Any, lineno: int, values: dict[str, array]
                  ) -> Iterator[tuple[int, str]]:
    """The rest of ``fh`` (line ``lineno + 1`` on) as :func:`_fast_blocks` yields it, read in
    chunks of about 1 MiB of whole lines (memory stays near the values' 8 bytes each);
    lines split as ``iter_lines`` splits them."""
    while True:
        chunk = fh.read(_CHUNK_CHARS)
        if not chunk:
            return
        if not chunk.endswith("\n"):
            chunk += fh.readline(MAX_LINE_CHARS + 1)  # complete the last line (or "\r\n")
        while chunk.count('"') % 2 and len(chunk) < 2 * _CHUNK_CHARS + MAX_LINE_CHARS:
            more = fh.readline(MAX_LINE_CHARS + 1)  # a quoted line break: the record whole
            if not more:
                break
            chunk += more
        if "\r" in chunk:  # newline="" splits at \r, \n and \r\n, as readline does
            texts = [t.rstrip("\r\n") for t in io.StringIO(chunk, newline="")]
            body = None
        else:
            body = chunk[:-1] if chunk.endswith("\n") else chunk
            texts = body.split("\n")
        first, lineno = lineno + 1, lineno + len(texts)
        if max(map(len, texts)) > MAX_LINE_CHARS:
            at = first + next(i for i, t in enumerate(texts) if len(t) > MAX_LINE_CHARS)
            raise UserError(f"cannot read a label,value CSV file {path}: line {at} is longer than "
                            f"{MAX_LINE_CHARS:,} characters; this is not line-based text; check "
                            f"the file and --format")
        parsed = _parse_plain_text(body, len(texts), values) if body is not None else None
        if parsed is None:
            parsed = _parse_block(texts, values)
        if parsed is None:
            yield from zip(range(first, lineno + 1), texts)
        else:
            yield -1, str(parsed)


#: Longest label the chunk parser's fixed-width label column holds (longer: the line parser).
_LABEL_CHARS = 32


def _parse_plain_text(body: str, n_lines: int, values: dict[str, array]) -> int | None:
    """Rows of ``body`` (``n_lines`` lines joined by ``\n``) added to ``values``, parsed by
    numpy's C reader into a label column and a value column (no Python object per row);
    None (nothing added) unless every line is a plain ``label,value`` row without spaces,
    quotes or ``#``, with a label shorter than 32 characters."""
    if '"' in body or "#" in body or " " in body or "\t" in body or "\n\n" in body:
        return None
    try:
        # Labels as bytes (a quarter of the memory traffic of "U", 0.1 s per 1M rows): numpy
        # encodes them as Latin-1, so decoding with Latin-1 gives the text back exactly; a
        # label outside Latin-1 raises here and the block takes the line parser.
        rows = np.loadtxt(io.StringIO(body), delimiter=",", comments=None, ndmin=1,
                          dtype=[("label", f"S{_LABEL_CHARS}"), ("value", "f8")])
    except ValueError:
        return None
    if len(rows) != n_lines:
        return None
    labels, vals = rows["label"], rows["value"]
    lengths = np.char.str_len(labels)
    if (lengths == 0).any() or (lengths >= _LABEL_CHARS).any() \
            or not np.isfinite(vals).all() or (vals < 0).any():
        return None
    # group by label in order of first appearance: one C comparison pass per distinct label
    rest = np.arange(len(labels))
    for _ in range(64):
        if not len(rest):
            return n_lines
        label = labels[rest[0]]
        mine = labels[rest] == label
        values.setdefault(label.decode("latin-1"), array("d")).frombytes(
            vals[rest[mine]].tobytes())
        rest = rest[~mine]
    if len(rest):
        for label, v in zip(labels[rest].tolist(), vals[rest].tolist()):
            values.setdefault(label.decode("latin-1"), array("d")).append(v)
    return n_lines


def _add_values(labels: list[str], vals: np.ndarray, values: dict[str, array]) -> None:
    distinct = dict.fromkeys(labels)
    if len(distinct) == 1:
        values.setdefault(labels[0], array("d")).frombytes(vals.tobytes())
    elif len(distinct) <= 64:
        label_arr = np.array(labels, dtype=object)
        for label in distinct:
            values.setdefault(label, array("d")).frombytes(vals[label_arr == label].tobytes())
    else:
        for label, v in zip(labels, vals.tolist()):
            values.setdefault(label, array("d")).append(v)


def _parse_block(texts: list[str], values: dict[str, array]) -> int | None:
    """Rows of a plain block added to ``values`` (their count), or None (nothing added) when
    the block needs the line-by-line parser."""
    if any(not t or t[0] == "#" or '"' in t for t in texts):
        return None
    parts = [t.split(",") for t in texts]
    if any(len(p) != 2 for p in parts):
        return None
    labels = [p[0].strip() for p in parts]
    try:
        vals = np.array([p[1] for p in parts], dtype=float)
    except ValueError:
        return None
    # negatives and the rest are left to the line parser, whose errors name the line
    if not np.isfinite(vals).all() or (vals < 0).any() or not all(labels):
        return None
    _add_values(labels, vals, values)
    return len(texts)


def _field_count_error(path: str | os.PathLike, lineno: int, line: str, n: int) -> str:
    if line.startswith(("{", "[")):
        return (f"{path} line {lineno} looks like JSON, not label,value CSV; "
                f"use --format hyperfine, pyperf or gbench")
    return (f"malformed CSV {path} line {lineno}: {n} fields where label,value needs 2 "
            f"({line[:60]!r}); fix the line, or mark it as a comment with '#'")
