"""What every import format shares: the parsed form of a file, and writing it atomically.

Importers parse and validate the WHOLE input into an :class:`ImportedSession` first, so bad input
is rejected before anything touches the database. :func:`write_import` then writes it through
the :class:`~benchlab.store.db.Store` API; if writing fails part-way (locked database, full disk,
Ctrl-C) the new session is deleted again, so an import is all or nothing and never touches
another session.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.store.db import SessionRef, Store

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


def write_import(store: Store, imp: ImportedSession) -> SessionRef:
    """Write a parsed import as one new session (kind 'import', status 'complete').

    All or nothing: on any failure the new session (and, by cascade, its benchmarks, runs and
    samples) is deleted before the error propagates.
    """
    environment_id = None
    if isinstance(imp.environment, dict):
        from benchlab.environment import environment_digest
        environment_id = store.put_environment(imp.environment, environment_digest(imp.environment))
    ref = store.create_session("import", name=imp.name, command_line=imp.command_line,
                               protocol=imp.protocol, environment=imp.environment,
                               environment_id=environment_id, system_checks=imp.system_checks,
                               load_before=imp.load_before, metadata=imp.metadata,
                               source=imp.source)
    try:
        for metric in imp.metrics:
            store.add_metric(ref.id, metric.name, unit=metric.unit, origin=metric.origin,
                             pattern=metric.pattern)
        next_seq = 0
        for position, bench in enumerate(imp.benchmarks):
            bench_id = store.add_benchmark(ref.id, bench.name, position=position,
                                           command=bench.command, argv=bench.argv,
                                           parameters=bench.parameters,
                                           setup_id=_setup_id(store, bench.setup))
            for run in bench.runs:
                seq = next_seq if run.seq is None else run.seq
                next_seq = max(next_seq, seq + 1)
                big = sum(len(v) for v in run.samples.values()) > _BULK_SAMPLES
                run_id = store.add_run(ref.id, bench_id, seq=seq, iteration=run.iteration,
                                       warmup=run.warmup, worker=run.worker,
                                       setup_id=_setup_id(store, run.setup), fields=run.fields,
                                       samples=None if big else run.samples,
                                       measurements=run.measurements)
                if big:
                    add_samples_bulk(store, run_id, run.samples)
        store.finish_session(ref.id, "complete", load_after=imp.load_after)
    except BaseException:
        discard_session(store, ref.id)
        raise
    return ref


def write_imports(store: Store, imports: Sequence[ImportedSession]) -> list[SessionRef]:
    """Write several parsed sessions, all or nothing: a failure discards those already written."""
    refs: list[SessionRef] = []
    try:
        for imp in imports:
            refs.append(write_import(store, imp))
    except BaseException:
        for ref in refs:
            discard_session(store, ref.id)
        raise
    return refs


def _setup_id(store: Store, setup: Any) -> int | None:
    return None if setup is None else store.put_setup(setup)


#: Above this many samples per run, samples go in through :func:`add_samples_bulk`.
_BULK_SAMPLES = 1000


def add_samples_bulk(store: Store, run_id: int, samples: dict[str, Sequence[float] | np.ndarray]) -> None:
    """Insert many samples of one existing run in one transaction.

    Same rows as ``Store.add_run(samples=...)`` writes, but about 3x faster for 100,000 values:
    the values are converted to Python floats in one go (``tolist``) instead of one by one.
    """
    with store.transaction() as conn:
        for metric, values in samples.items():
            floats = np.asarray(values, dtype=float).tolist()
            conn.executemany("INSERT INTO samples (run_id, metric, seq, value) VALUES (?,?,?,?)",
                             zip(repeat(run_id), repeat(metric), range(len(floats)), floats))


def discard_session(store: Store, session_id: int) -> None:
    """Delete one session and everything in it (best effort: a failure here is not raised,
    since it would hide the error that made us discard the session)."""
    try:
        with store.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    except (sqlite3.Error, UserError):
        pass


def source_of(path: str | os.PathLike) -> str:
    """The path recorded as a session's ``source``: absolute, symlinks kept as given."""
    return os.path.abspath(os.fspath(path))


def read_text(path: str | os.PathLike, what: str) -> str:
    """Read a text file (transparently gunzipping ``*.gz``); problems become one-line UserErrors.

    ``what`` names the expected content for messages, e.g. ``"hyperfine JSON"``.
    """
    p = Path(path)
    try:
        # utf-8-sig: files saved by spreadsheet tools often start with a byte order mark.
        if p.suffix == ".gz":
            with gzip.open(p, "rt", encoding="utf-8-sig") as fh:
                return fh.read()
        return p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"cannot import {p}: no such file; check the path") from None
    except IsADirectoryError:
        raise UserError(f"cannot import {p}: it is a directory, but {what} is one file; "
                        f"give the file (only --format metric reads a directory)") from None
    except PermissionError:
        raise UserError(f"cannot import {p}: permission denied; make it readable "
                        f"(chmod u+r) or copy it somewhere readable") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"cannot import {p}: not UTF-8 text (byte {exc.start}); "
                        f"it is not {what}, check the file and --format") from None
    except (gzip.BadGzipFile, EOFError) as exc:
        raise UserError(f"cannot import {p}: broken gzip file ({exc}); "
                        f"decompress or re-create it") from None
    except OSError as exc:
        raise UserError(f"cannot import {p}: {exc.strerror or exc}; check the file") from None


def load_json(path: str | os.PathLike, what: str, fmt: str) -> Any:
    """Parse a JSON file; a syntax error becomes a UserError with line and column."""
    text = read_text(path, what)
    if not text.strip():
        raise UserError(f"cannot import {path}: the file is empty; expected {what}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if text.lstrip()[:1] not in "{[":
            hint = " (it does not look like JSON at all; for label,value files use --format csv)"
        raise UserError(
            f"malformed JSON in {path} at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}; "
            f"fix or re-create the file, or choose the right --format (now {fmt})") from None


def sniff_json(doc: Any) -> str | None:
    """Which known JSON format ``doc`` looks like: hyperfine, pyperf, gbench, json or None."""
    if not isinstance(doc, dict):
        return None
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


def is_number_text(text: str) -> bool:
    """True when ``text`` parses as a finite float."""
    try:
        value = float(text)
    except ValueError:
        return False
    return value == value and value not in (float("inf"), float("-inf"))
