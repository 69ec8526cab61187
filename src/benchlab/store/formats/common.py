"""What every import format shares: the parsed form of a file, and writing it atomically.

Public: the bundle (``store.bundle``) writes its sessions through :func:`write_imports` too.

Importers parse and validate the WHOLE input into an :class:`ImportedSession` first, so bad input
is rejected before anything touches the database. :func:`write_imports` then writes it through
the one session writer in ONE transaction: if writing fails part-way (locked database, full
disk, Ctrl-C, kill -9) nothing of the import is committed, and no other session is touched.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from benchlab.errors import UserError
from benchlab.store.db import SessionRef, Store, canonical_json
from benchlab.store.formats.readers import load_json, read_text  # noqa: F401  (re-exported)
from benchlab.store.writer import SessionWriter

if TYPE_CHECKING:
    import numpy as np  # imported where used: `benchlab run` reaches this package, not numpy

#: Factors from a time unit to nanoseconds (values are stored in ns).
TIME_UNIT_TO_NS: dict[str, float] = {
    "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9,
}


@dataclass
class ImportedRun:
    """One run as parsed from a file: harness ``fields`` (ns, KiB) and program ``samples``."""

    iteration: int
    fields: dict[str, Any]
    samples: dict[str, Sequence[float] | np.ndarray] = field(default_factory=dict)
    warmup: bool = False
    measurements: list[dict[str, Any]] = field(default_factory=list)
    seq: int | None = None
    """Execution order in the session; None -> after the previous run written."""
    worker: int = 0
    setup: Any = None
    """Execution setup (stored deduplicated through ``Store.put_setup``), if known."""


@dataclass
class ImportedBenchmark:
    """One benchmark (command or label) with its runs, in execution order."""

    name: str
    command: str | None = None
    argv: list[str] | None = None
    parameters: dict[str, Any] | None = None
    runs: list[ImportedRun] = field(default_factory=list)
    setup: Any = None


@dataclass
class ImportedMetric:
    """A program-reported metric declared in the session (``origin`` names the importer)."""

    name: str
    unit: str
    origin: str
    pattern: str | None = None


@dataclass
class ImportedSession:
    """Everything one import writes: session fields, metrics, benchmarks and runs."""

    name: str
    source: str
    metadata: dict[str, Any]
    benchmarks: list[ImportedBenchmark]
    metrics: list[ImportedMetric] = field(default_factory=list)
    protocol: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
    command_line: list[str] | None = None
    system_checks: Any = None
    load_before: Any = None
    load_after: Any = None


def find_duplicate(store: Store, input_digest: str | None) -> dict | None:
    """The newest session imported from content with this digest, or None."""
    if not input_digest:
        return None
    row = store.conn.execute("SELECT uid, name, source FROM sessions WHERE input_digest = ?"
                             " ORDER BY id DESC LIMIT 1", (input_digest,)).fetchone()
    return None if row is None else dict(row)


def write_import(store: Store, imp: ImportedSession, *, input_digest: str | None = None) -> SessionRef:
    """Write a parsed import as one new session (kind 'import', status 'complete') through the
    session writer, in one transaction: a failure or a kill -9 part-way leaves nothing.

    ``input_digest`` (SHA-256 of the content read and the parse options) is recorded so that a
    re-import of the same content can be recognised.
    """
    with store.transaction():
        writer = SessionWriter.create(store, "import", name=imp.name, command_line=imp.command_line,
                                      protocol=imp.protocol, environment=imp.environment,
                                      checks=imp.system_checks, load_before=imp.load_before,
                                      metadata=imp.metadata, source=imp.source,
                                      input_digest=input_digest)
        for metric in imp.metrics:
            writer.add_metric(metric.name, unit=metric.unit, origin=metric.origin,
                              pattern=metric.pattern)
        next_seq = 0
        for position, bench in enumerate(imp.benchmarks):
            bench_id = writer.add_benchmark(bench.name, position=position, command=bench.command,
                                            argv=bench.argv, parameters=bench.parameters,
                                            setup_id=_setup_id(store, bench.setup))
            for run in bench.runs:
                seq = next_seq if run.seq is None else run.seq
                next_seq = max(next_seq, seq + 1)
                big = sum(len(v) for v in run.samples.values()) > _BULK_SAMPLES
                run_id = writer.add_run(bench_id, seq=seq, iteration=run.iteration,
                                        warmup=run.warmup, worker=run.worker,
                                        setup_id=_setup_id(store, run.setup), fields=run.fields,
                                        samples=None if big else run.samples,
                                        measurements=run.measurements)
                if big:
                    store.add_samples_bulk(run_id, run.samples)
        writer.finish("done", load_after=imp.load_after)
    return writer.ref


def write_imports(store: Store, imports: Sequence[ImportedSession], *,
                  input_digest: str | None = None,
                  allow_duplicate: bool = False) -> list[SessionRef]:
    """Write several parsed sessions in one transaction (all or nothing).

    Raises UserError when content with the same ``input_digest`` was imported before, unless
    ``allow_duplicate``.
    """
    for imp in imports:
        check_import(imp)
    with store.transaction():
        if not allow_duplicate:
            dup = find_duplicate(store, input_digest)
            if dup is not None:
                raise UserError(
                    f"this content was already imported as session {dup['uid']} "
                    f"({dup['name'] or 'unnamed'}, from {dup['source']}); nothing imported; "
                    f"pass --allow-duplicate to import it again")
        return [write_import(store, imp, input_digest=input_digest) for imp in imports]


#: Run columns that hold a duration (ns), a size (KiB) or a count: never negative.
NON_NEGATIVE_FIELDS = ("wall_ns", "user_ns", "sys_ns", "shell_overhead_ns", "start_unix_ns",
                       "start_mono_ns", "end_mono_ns", "max_rss_kib", "minflt", "majflt",
                       "nvcsw", "nivcsw")


def check_measured(value: Any, where: str, unit: str = "") -> None:
    """Raise a one-line UserError naming ``value`` as written in the file when it is not a
    finite number >= 0 (a time, size or count as a tool reported it)."""
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not np.isfinite(value) or value < 0:
        shown = f"{value!r} {unit}".strip()
        raise UserError(f"{where} is {shown}, not a finite number >= 0; fix the file "
                        f"(a measured time cannot be negative or infinite)")


def check_import(imp: ImportedSession) -> None:
    """Refuse values no measurement can have, before anything is written (every format).

    Benchmarks need distinct, non-empty names; harness times, sizes and counts must be finite
    and not negative; samples must be finite numbers, and not negative in a time unit.
    Raises a one-line UserError naming the file, the benchmark and the run.
    """
    import numpy as np

    where = imp.source
    units = {m.name: m.unit for m in imp.metrics}
    seen: set[str] = set()
    for index, bench in enumerate(imp.benchmarks):
        if not isinstance(bench.name, str) or not bench.name.strip():
            raise UserError(f"{where}: benchmark #{index + 1} has no name; give every "
                            f"benchmark a non-empty name in the file")
        if bench.name in seen:
            raise UserError(f"{where}: two benchmarks are named {bench.name[:60]!r}; a session "
                            f"needs distinct names: rename one in the file")
        seen.add(bench.name)
        for r, run in enumerate(bench.runs):
            at = f"{where}: benchmark {bench.name[:60]!r} run {r}"
            for key in NON_NEGATIVE_FIELDS:
                value = run.fields.get(key)
                if value is None:
                    continue
                if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                        or not np.isfinite(value) or value < 0:
                    raise UserError(f"{at}: {key} is {value!r}, not a finite number >= 0; "
                                    f"fix the file (times, sizes and counts cannot be negative)")
            for metric, values in run.samples.items():
                try:
                    arr = np.asarray(values, dtype=float)
                except (TypeError, ValueError):
                    raise UserError(f"{at}: samples of {metric!r} are not all numbers; "
                                    f"fix the file") from None
                bad = ~np.isfinite(arr)
                if bad.any():
                    i = int(np.argmax(bad))
                    raise UserError(f"{at}: sample {i} of {metric!r} is {arr[i]!r}, not a finite "
                                    f"number; fix the file or leave the value out")
                # benchlab's own exports keep program metrics as measured (a --metric may be
                # negative); other tools' results are times, rates and counts
                own_copy = isinstance(imp.metadata, dict) and "imported_from" in imp.metadata
                if arr.size and arr.min() < 0 and (
                        units.get(metric) in TIME_UNIT_TO_NS or not own_copy):
                    i = int(np.argmax(arr < 0))
                    raise UserError(f"{at}: sample {i} of {metric!r} is negative ({arr[i]!r} "
                                    f"{units.get(metric) or ''}); results cannot be negative: "
                                    f"fix the file")


def _setup_id(store: Store, setup: Any) -> int | None:
    return None if setup is None else store.put_setup(setup)


#: Above this many samples per run, samples go in through ``Store.add_samples_bulk``.
_BULK_SAMPLES = 1000


def content_digest(path: str | os.PathLike, options: Any = None) -> str:
    """SHA-256 (hex) of what an import reads: the file's bytes (a directory: every file's
    relative path and bytes, in sorted order) and the parse ``options``. Streams the bytes
    (1 MiB at a time), so it costs no memory for big files."""
    h = hashlib.sha256(canonical_json(options).encode())
    p = Path(path)
    try:
        files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
        for f in files:
            h.update(b"\0" + str(f.relative_to(p) if p.is_dir() else "").encode() + b"\0")
            with open(f, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
    except FileNotFoundError:
        raise UserError(f"cannot import {path}: no such file; check the path") from None
    except PermissionError as exc:
        raise UserError(f"cannot import {path}: permission denied ({exc.filename}); make it "
                        f"readable (chmod u+r)") from None
    except OSError as exc:
        raise UserError(f"cannot import {path}: {exc.strerror or exc}; check the file") from None
    return h.hexdigest()


def source_of(path: str | os.PathLike) -> str:
    """The path recorded as a session's ``source``: absolute, symlinks kept as given."""
    return os.path.abspath(os.fspath(path))


def sniff_json(doc: Any) -> str | None:
    """Which known JSON format ``doc`` looks like: hyperfine, pyperf, gbench,
    pytest-benchmark, jmh, json or None."""
    if not isinstance(doc, dict):  # JMH writes a list of results
        first = doc[0] if isinstance(doc, list) and doc else None
        return "jmh" if isinstance(first, dict) and "primaryMetric" in first else None
    if isinstance(doc.get("benchmarks"), list) and isinstance(doc.get("machine_info"), dict):
        return "pytest-benchmark"  # it has a 'version' too, as pyperf files do
    if doc.get("format") == "benchlab-export":
        return "json"
    if isinstance(doc.get("results"), list):
        return "hyperfine"
    if isinstance(doc.get("benchmarks"), list):
        if isinstance(doc.get("context"), dict):
            return "gbench"
        if "version" in doc:
            return "pyperf"
    return None


def wrong_format(path: str | os.PathLike, fmt: str, doc: Any, expected: str) -> UserError:
    """The error for a file that parsed but is not ``fmt``; suggests the format it looks like."""
    guess = sniff_json(doc)
    if guess and guess != fmt:
        return UserError(f"{path} is not {expected}; it looks like {guess} JSON: "
                         f"use --format {guess}")
    return UserError(f"{path} is not {expected}; check the file or choose another --format")


def default_session_name(path: str | os.PathLike) -> str:
    """Session name from a path: the file stem (``vm-results.csv`` -> ``vm-results``),
    or a directory's name."""
    p = Path(os.path.abspath(os.fspath(path)))
    if p.is_dir():
        return p.name
    name = p.name
    for suffix in (".gz", ".json", ".csv", ".txt"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


# -- text that users control, written into files other programs interpret ---------------------

#: First characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) evaluate a
#: cell as a formula (OWASP "CSV injection"); tab and CR too, as some parsers strip them first.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` for a CSV cell that a spreadsheet shows instead of running: a leading formula
    character gets a ``'`` prefix. Reversible by :func:`spreadsheet_unsafe` (a text that
    already starts with ``'`` before such a character gets one more). Only for text columns:
    numbers are written untouched."""
    if text.lstrip("'")[:1] in FORMULA_TRIGGERS and text.lstrip("'"):
        return "'" + text
    return text


def spreadsheet_unsafe(text: str) -> str:
    """Undo :func:`spreadsheet_safe` (used when benchlab reads its own CSV back)."""
    if text.startswith("'") and text.lstrip("'")[:1] in FORMULA_TRIGGERS and text.lstrip("'"):
        return text[1:]
    return text


def _escape_newlines(text: str) -> str:
    return text.replace("\r\n", "\\n").replace("\r", "\\n").replace("\n", "\\n")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown inline text: every ASCII punctuation character is
    backslash-escaped (so ``[x](y)``, ``<b>``, ``*``, ``|``, ``#`` ... stay text, CommonMark
    allows escaping any of them) and line breaks become a visible ``\\n``."""
    out = []
    for ch in text:
        if ch in "\r\n":
            out.append(ch)
        elif ord(ch) < 128 and not ch.isalnum() and not ch.isspace():
            out.append("\\" + ch)
        else:
            out.append(ch)
    return _escape_newlines("".join(out))


def markdown_code(text: str) -> str:
    """``text`` as a Markdown code span for a table cell: nothing inside is interpreted (HTML,
    links, emphasis), a fence longer than any backtick run inside it, ``|`` escaped as GFM
    tables require, and line breaks shown as ``\\n`` so the row stays one line."""
    body = _escape_newlines(text).replace("|", "\\|")
    longest = max((len(run) for run in _backtick_runs(body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _backtick_runs(text: str) -> list[str]:
    runs, current = [], ""
    for ch in text:
        if ch == "`":
            current += ch
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return runs


def one_line(text: str) -> str:
    """``text`` with its line breaks shown as ``\\n`` (for one-line table cells)."""
    return _escape_newlines(text)


class CsvWriter:
    """``csv.writer`` with ``\n`` line ends that also quotes cells holding a bare ``\r``.

    Python's writer quotes only cells containing the delimiter, the quote character or a
    character of its line terminator, so with ``\n`` a name holding ``\r`` would be written
    bare and split the row for every reader. Such (rare) rows are written fully quoted.
    """

    def __init__(self, out) -> None:
        import csv

        self._plain = csv.writer(out, lineterminator="\n")
        self._quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row) -> None:
        """Write one row (see the class docstring)."""
        row = tuple(row)
        if any(isinstance(cell, str) and "\r" in cell for cell in row):
            self._quoted.writerow(row)
        else:
            self._plain.writerow(row)

    def writerows(self, rows) -> None:
        """Write several rows."""
        for row in rows:
            self.writerow(row)

