"""Import other tools' results into the store, and export sessions in other tools' formats.

Imports create sessions of kind ``import``, status ``complete``, ``source`` = the absolute
path, the file's own metadata kept in the session's ``metadata`` with a ``format`` key — one
session per file, or one per exported session for benchlab's own exports. All or nothing: bad
input raises a one-line UserError before anything is written, and a failure while writing
deletes what this import wrote (never another session).

============  ===========================================  ===========================
format        input                                         module
============  ===========================================  ===========================
csv           ``label,value`` rows, ``#`` comment lines     :mod:`.label_value_csv`
              (or benchlab's long-format CSV export)        :mod:`.csv_long`
json          benchlab's own JSON export (full copy)        :mod:`.json_doc`
metric        program outputs (a file or a directory)       :mod:`.metric_dir`
              read through ``--metric NAME[:UNIT]=REGEX``
hyperfine     ``hyperfine --export-json``                   :mod:`.hyperfine`
pyperf        pyperf JSON (``.json`` or ``.json.gz``)        :mod:`.pyperf`
gbench        Google Benchmark ``--benchmark_format=json``  :mod:`.gbench`
go            ``go test -bench`` output (benchfmt text)     :mod:`.gotest`
criterion     criterion.rs's ``target/criterion`` dir       :mod:`.criterion`
pytest-       pytest-benchmark ``--benchmark-json``         :mod:`.pytest_benchmark`
benchmark
jmh           JMH's ``-rf json -rff FILE``                  :mod:`.jmh`
============  ===========================================  ===========================

``auto`` picks the format from the content (a directory -> criterion when it holds
``*/new/benchmark.json``, else metric; JSON -> by its keys; text with a Go benchmark result line
-> go; anything else -> csv).

Exports (text; the newest session when none is named): ``csv`` (long format, one row per
value, :mod:`.csv_long`), ``json`` (every stored field, :mod:`.json_doc`, schema in
``docs/json-schema.md``), ``hyperfine`` (hyperfine-compatible JSON, :mod:`.hyperfine`),
``markdown`` (hyperfine-style table, :mod:`.markdown`), ``hyperfine-csv`` (hyperfine's
``--export-csv`` summary), ``asciidoc`` and ``orgmode`` (hyperfine's tables, :mod:`.asciidoc`,
:mod:`.orgmode`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from benchlab.errors import UserError
from benchlab.store.db import SessionRef, Store
from benchlab.store.formats.metric_spec import MetricSpec, parse_metric_spec

if TYPE_CHECKING:
    from benchlab.store.formats.common import ImportedSession

# common (hashlib), gather and readers are imported by the functions that use them:
# `benchlab run` imports this package for MetricSpec alone, ~10 ms sooner.


def __getattr__(name: str) -> Any:
    if name == "spreadsheet_safe":
        from benchlab.store.formats.common import spreadsheet_safe
        return spreadsheet_safe
    if name == "EXPORT_FORMATS":  # the registry's names, read when asked (run never asks)
        from benchlab.store.formats.exporters import EXPORTERS
        return tuple(EXPORTERS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Formats this package parses itself; other layers add theirs with :func:`register_import_format`.
BUILTIN_IMPORT_FORMATS = ("csv", "metric", "hyperfine", "pyperf", "gbench", "go", "criterion",
                          "pytest-benchmark", "jmh", "json")
#: The other tools' formats, each read by one function into one session: format ->
#: ``module.function`` of this package (imported when its format is asked for).
_ONE_SESSION_PARSERS = {
    "hyperfine": "hyperfine.parse_hyperfine", "pyperf": "pyperf.parse_pyperf",
    "gbench": "gbench.parse_gbench", "go": "gotest.parse_gotest",
    "criterion": "criterion.parse_criterion",
    "pytest-benchmark": "pytest_benchmark.parse_pytest_benchmark", "jmh": "jmh.parse_jmh"}
#: Formats whose input is a directory.
_DIRECTORY_FORMATS = ("metric", "criterion")
#: Importers registered by higher layers (``benchlab.machines.varsys16`` registers
#: ``varsys16``): name -> ``importer(store, path, *, name, unit, metrics, command_line)``.
_REGISTERED: dict[str, Callable[..., list[SessionRef]]] = {}
#: Content tests of registered formats for ``--format auto``: name -> ``detect(path) -> bool``.
_DETECTORS: dict[str, Callable[[Path], bool]] = {}


def register_import_format(name: str, importer: Callable[..., list[SessionRef]],
                           detect: Callable[[Path], bool] | None = None) -> None:
    """Register an import format implemented above the store (the store never imports it).

    ``importer(store, path, *, name, unit, metrics, command_line)`` writes the sessions (one
    transaction: wrap the writes in ``store.transaction()``) and returns their references.
    ``detect(path)``, if given, tells ``--format auto`` whether a file is in this format: it
    must be cheap (read the first bytes) and never raise for a file of another format.
    """
    _REGISTERED[name] = importer
    if detect is not None:
        _DETECTORS[name] = detect


def import_formats() -> tuple[str, ...]:
    """Every import format known now: the built-in ones, then registered ones."""
    return BUILTIN_IMPORT_FORMATS + tuple(sorted(_REGISTERED))


#: The built-in formats (kept for callers that list them; see :func:`import_formats`).
IMPORT_FORMATS = BUILTIN_IMPORT_FORMATS


def detect_format(path: str | os.PathLike) -> str:
    """Guess the import format of ``path`` from its content (a directory -> ``metric``; a
    registered format whose detector recognises it, e.g. a bundle; JSON -> by its keys;
    anything else -> ``csv``). Reads only the start of a non-JSON file."""
    from benchlab.store.formats.common import sniff_json
    from benchlab.store.formats.readers import open_text, parse_json_text

    p = Path(path)
    if p.is_dir():
        from benchlab.store.formats.criterion import benchmark_dirs
        return "criterion" if benchmark_dirs(p) else "metric"
    for name, detect in sorted(_DETECTORS.items()):
        if detect(p):
            return name
    with open_text(p, "a result file") as fh:
        head = fh.read(4096)
        if head.lstrip("\ufeff \t\r\n")[:1] not in ("{", "["):
            from benchlab.store.formats.gotest import looks_like_gotest
            return "go" if looks_like_gotest(head) else "csv"
        text = head + fh.read()
    guess = sniff_json(parse_json_text(text, p, "a result file"))
    if guess is None or guess not in BUILTIN_IMPORT_FORMATS:
        raise UserError(f"cannot tell which tool wrote {p}; give --format "
                        f"{'|'.join(import_formats())}")
    return guess


def parse_path(path: str | os.PathLike, fmt: str, *, name: str | None = None,
               unit: str | None = None, metrics: Sequence[Any] = (),
               command_line: list[str] | None = None) -> list[ImportedSession]:
    """Parse ``path`` in format ``fmt`` into sessions without writing anything."""
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt not in BUILTIN_IMPORT_FORMATS:
        raise UserError(f"unknown import format {fmt!r}; choose one of "
                        f"{', '.join(import_formats())}")
    if metrics and fmt != "metric":
        raise UserError(f"--metric applies to --format metric only (not {fmt}); "
                        f"drop --metric or use --format metric")
    if unit is not None and fmt != "csv":
        raise UserError(f"--unit applies to --format csv only (not {fmt}); "
                        f"{fmt} files carry their own units")
    if fmt not in _DIRECTORY_FORMATS and Path(path).is_dir():
        raise UserError(f"cannot import {path}: it is a directory, but --format {fmt} reads one "
                        f"file; give the file, or use --format metric for a directory of outputs")
    if fmt == "csv":
        from benchlab.store.formats.label_value_csv import parse_csv
        return parse_csv(path, name=name, unit=unit, command_line=command_line)
    if fmt == "metric":
        from benchlab.store.formats.metric_dir import parse_metric_outputs
        return [parse_metric_outputs(path, metrics, name=name, command_line=command_line)]
    if fmt == "json":
        from benchlab.store.formats.json_doc import parse_export
        return parse_export(path, name=name, command_line=command_line)
    import importlib

    module, _, function = _ONE_SESSION_PARSERS[fmt].partition(".")
    parse = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return [parse(path, name=name, command_line=command_line)]


def import_path(store: Store, path: str | os.PathLike, fmt: str = "auto", *,
                name: str | None = None, unit: str | None = None,
                metrics: Sequence[Any] = (),
                command_line: list[str] | None = None,
                allow_duplicate: bool = False) -> list[SessionRef]:
    """Import ``path`` (a file, or for ``metric`` a directory) as a new session, in one
    transaction. Content imported before (same bytes, format and options: SHA-256) is refused
    with a UserError unless ``allow_duplicate``.

    Parameters
    ----------
    store : Store
        Open, writable store.
    path : path-like
        The file or directory to import.
    fmt : str
        One of :data:`IMPORT_FORMATS` or ``auto``.
    name : str, optional
        Session name (default: the file stem or directory name); for ``metric`` also the
        benchmark's name.
    unit : str, optional
        ``csv`` only: unit of the values (default: from the header, else '').
    metrics : sequence of str or MetricSpec
        ``metric`` only: ``NAME[:UNIT]=REGEX`` specs (values stored in UNIT as captured).
    command_line : list of str, optional
        The benchlab command line to record in the session.
    allow_duplicate : bool
        Import content that was imported before (default: refuse).

    Returns
    -------
    list of SessionRef
        The sessions created: one, except for benchlab's own exports (``json``, long-format
        ``csv``), which create one per exported session. All or nothing.
    """
    from benchlab.store.formats.common import content_digest, find_duplicate, write_imports
    from benchlab.store.formats.readers import check_prefix, refuse_special_file

    refuse_special_file(path, "the import file")  # hashing /dev/zero would never end
    if fmt != "auto":  # auto reads only the start already; an explicit format is checked so too
        check_prefix(path, fmt)
    if fmt in _REGISTERED:
        return _REGISTERED[fmt](store, path, name=name, unit=unit, metrics=metrics,
                                command_line=command_line)
    if fmt == "auto":
        fmt = detect_format(path)
        if fmt in _REGISTERED:
            return _REGISTERED[fmt](store, path, name=name, unit=unit, metrics=metrics,
                                    command_line=command_line)
    options = {"format": fmt, "unit": unit, "metrics": [str(getattr(m, "spec", m)) for m in metrics]}
    input_digest = content_digest(path, options)
    if not allow_duplicate:
        dup = find_duplicate(store, input_digest)
        if dup is not None:  # before parsing: a re-import of a big file fails fast
            raise UserError(
                f"{path} was already imported as session {dup['uid']} "
                f"({dup['name'] or 'unnamed'}); nothing imported; pass --allow-duplicate "
                f"to import it again")
    imported = parse_path(path, fmt, name=name, unit=unit, metrics=metrics,
                          command_line=command_line)
    return write_imports(store, imported, input_digest=input_digest,
                         allow_duplicate=allow_duplicate)


def export_sessions(store: Store, sessions: Sequence[str | int | SessionRef | dict],
                    fmt: str, *, time_unit: str | None = None, sort: str = "auto",
                    reference: str | None = None) -> str:
    """Export ``sessions`` (uids, ids, names, SessionRefs or session rows; empty -> the newest
    session) as text in format ``fmt`` (a name of the registry,
    :data:`benchlab.store.formats.exporters.EXPORTERS`). The tables
    (markdown, asciidoc, orgmode) take hyperfine's ``time_unit`` (second, millisecond,
    microsecond) and its ``sort`` and ``reference`` (a benchmark name)."""
    from benchlab.store.formats.exporters import ExportOptions, exporter
    from benchlab.store.formats.gather import resolve_sessions

    export = exporter(fmt)  # before reading the store: an unknown format is one line
    return export(resolve_sessions(store, sessions),
                  ExportOptions(time_unit=time_unit, sort=sort, reference=reference))


__all__ = ["MetricSpec", "parse_metric_spec", "IMPORT_FORMATS", "BUILTIN_IMPORT_FORMATS",
           "register_import_format", "import_formats",
           "EXPORT_FORMATS", "import_path", "export_sessions", "parse_path", "detect_format",
           "spreadsheet_safe"]
