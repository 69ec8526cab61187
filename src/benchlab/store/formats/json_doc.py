"""The JSON export: every stored field of the selected sessions, in one document.

The document is described in ``docs/json-schema.md`` and validated by
``docs/benchlab-export.schema.json`` (JSON Schema draft 2020-12). Units: every ``*_ns`` field
is in nanoseconds, ``max_rss_kib`` in KiB, samples in their metric's declared unit.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Sequence

from benchlab import __version__
from benchlab.store.db import RUN_COLUMNS, utc_now
from benchlab.store.formats.exporters import ExportOptions
from benchlab.store.formats.gather import SessionData, redacted_row

if TYPE_CHECKING:
    from benchlab.store.formats.common import ImportedSession

FORMAT_NAME = "benchlab-export"
FORMAT_VERSION = 1

_SESSION_KEYS = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "command_line",
                 "source", "protocol", "environment", "system_checks", "load_before",
                 "load_after", "metadata")
_BENCH_KEYS = ("name", "command", "argv", "parameters", "position", "setup_id")
_RUN_KEYS = ("seq", "iteration", "warmup", "worker", "setup_id", *RUN_COLUMNS)
_MEASUREMENT_KEYS = ("source", "name", "value", "unit", "status", "note")


def _finite(value: Any) -> Any:
    # JSON has no NaN/Infinity; a stored non-finite value is exported as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def session_document(s: SessionData) -> dict[str, Any]:
    """One session as a JSON-ready dict (see ``docs/json-schema.md``)."""
    row = redacted_row(s.row)  # a store written before redaction may hold a password
    doc: dict[str, Any] = {k: row.get(k) for k in _SESSION_KEYS}
    doc["setups"] = {str(k): v for k, v in s.setups.items()}
    doc["metrics"] = [{k: m[k] for k in ("name", "unit", "origin", "pattern")} for m in s.metrics]
    benches = []
    for bench in s.benchmarks:
        b = {k: bench.row.get(k) for k in _BENCH_KEYS}
        runs = []
        for run in bench.runs:
            r = {k: run.row.get(k) for k in _RUN_KEYS}
            r["warmup"] = bool(r["warmup"])
            r["samples"] = {m: [_finite(v) for v in vals] for m, vals in run.samples.items()}
            r["measurements"] = [{k: _finite(m.get(k)) for k in _MEASUREMENT_KEYS}
                                 for m in run.measurements]
            runs.append(r)
        b["runs"] = runs
        benches.append(b)
    doc["benchmarks"] = benches
    return doc


def export_document(sessions: Sequence[SessionData]) -> dict[str, Any]:
    """The whole export document as a dict."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "benchlab_version": __version__,
        "exported_utc": utc_now(),
        "sessions": [session_document(s) for s in sessions],
    }


def export_json(sessions: Sequence[SessionData]) -> str:
    """The JSON export text (indented, UTF-8, no NaN)."""
    return json.dumps(export_document(sessions), indent=1, ensure_ascii=False,
                      allow_nan=False, default=str) + "\n"


# -- import of an export --------------------------------------------------------------------

_PROVENANCE_KEYS = ("uid", "name", "kind", "status", "created_utc", "finished_utc",
                    "command_line", "source")


def with_provenance(metadata: Any, provenance: dict[str, Any]) -> dict[str, Any]:
    """The exported session's metadata plus ``imported_from`` (its original uid, kind, status,
    times, command line, source), so a copy can be traced back to the session it came from."""
    if isinstance(metadata, dict):
        return {**metadata, "imported_from": provenance}
    if metadata is None:
        return {"imported_from": provenance}
    return {"original": metadata, "imported_from": provenance}


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected an integer, got {value!r}")
    if isinstance(value, float) and not value.is_integer() or not -2 ** 63 <= value < 2 ** 63:
        # SQLite's INTEGER is 64-bit: a bigger number is an OverflowError at INSERT
        raise ValueError(f"{value!r} is not a 64-bit integer")
    return int(value)


#: What the store's CHECK constraints accept (schema.py): refused here in one line, not as
#: an IntegrityError at INSERT.
RUN_STATUSES = ("ok", "failed", "signaled", "timeout", "error", "imported")
MEASUREMENT_STATUSES = ("ok", "unsupported", "unknown")


_INT_RUN_FIELDS = {"exit_code", "signal", "start_unix_ns", "start_mono_ns", "end_mono_ns",
                   "wall_ns", "user_ns", "sys_ns", "max_rss_kib", "minflt", "majflt", "nvcsw",
                   "nivcsw", "shell_overhead_ns"}


def session_from_document(s: dict[str, Any], *, source: str, name: str | None,
                          command_line: list[str] | None) -> "ImportedSession":
    """Turn one exported SESSION object back into an :class:`ImportedSession`.

    Raises KeyError/TypeError/ValueError on a damaged document (the caller words the error).
    """
    from benchlab.store.formats.common import (
        ImportedBenchmark,
        ImportedMetric,
        ImportedRun,
        ImportedSession,
    )
    setups = s.get("setups") or {}
    benchmarks = []
    seqs: set[int] = set()
    names: set[str] = set()
    for b in s["benchmarks"]:
        if b.get("name") in names:
            raise ValueError(f"two benchmarks are named {b['name']!r:.60}; names are unique in a "
                             f"session")
        names.add(b.get("name"))
        runs = []
        for r in b["runs"]:
            fields = {}
            for key in RUN_COLUMNS:
                value = r.get(key)
                if value is None:
                    continue
                fields[key] = _int_or_none(value) if key in _INT_RUN_FIELDS else value
            if "status" not in fields:
                raise KeyError("status")
            if fields["status"] not in RUN_STATUSES:
                raise ValueError(f"a run's status is {fields['status']!r:.40}, not one of "
                                 f"{', '.join(RUN_STATUSES)}")
            seq = _int_or_none(r["seq"])
            if seq is None or seq in seqs:
                raise ValueError(f"two runs have seq {seq!r}; each run's seq is unique in a "
                                 f"session")
            seqs.add(seq)
            samples = {}
            for metric, values in (r.get("samples") or {}).items():
                if any(v is None or isinstance(v, bool) or not isinstance(v, (int, float))
                       for v in values):
                    raise ValueError(f"samples of {metric!r} hold a null or non-number")
                samples[metric] = [float(v) for v in values]
            measurements = [{k: m.get(k) for k in _MEASUREMENT_KEYS} | {"status": m.get("status") or "ok"}
                            for m in (r.get("measurements") or [])]
            for m in measurements:
                if m["status"] not in MEASUREMENT_STATUSES:
                    raise ValueError(f"a measurement's status is {m['status']!r:.40}, not one "
                                     f"of {', '.join(MEASUREMENT_STATUSES)}")
            setup_id = r.get("setup_id")
            runs.append(ImportedRun(
                iteration=int(r["iteration"]), fields=fields, samples=samples,
                warmup=bool(r.get("warmup")), measurements=measurements,
                seq=seq, worker=_int_or_none(r.get("worker")) or 0,
                setup=setups.get(str(setup_id)) if setup_id is not None else None))
        bsetup = b.get("setup_id")
        if not isinstance(b["name"], str):
            raise ValueError(f"a benchmark name is {b['name']!r:.40}, not text")
        benchmarks.append(ImportedBenchmark(
            name=b["name"], command=b.get("command"), argv=b.get("argv"),
            parameters=b.get("parameters"), runs=runs,
            setup=setups.get(str(bsetup)) if bsetup is not None else None))
    provenance = {k: s.get(k) for k in _PROVENANCE_KEYS}
    metrics = [ImportedMetric(str(m["name"]), m.get("unit") or "", str(m.get("origin") or "import"),
                              m.get("pattern")) for m in s.get("metrics") or []]
    return ImportedSession(
        name=name or s.get("name") or s["uid"], source=source,
        metadata=with_provenance(s.get("metadata"), provenance), benchmarks=benchmarks,
        metrics=metrics, protocol=s.get("protocol"), environment=s.get("environment"),
        command_line=command_line, system_checks=s.get("system_checks"),
        load_before=s.get("load_before"), load_after=s.get("load_after"))


def parse_export(path: Any, *, name: str | None = None,
                 command_line: list[str] | None = None) -> list["ImportedSession"]:
    """Parse a benchlab JSON export back into sessions (one per exported session).

    Everything is kept: benchmarks, runs with their harness fields and original execution
    order (``seq``), samples, measurements, setups, environment, protocol, metrics. The new
    session's metadata is the exported one plus ``imported_from`` (see :func:`with_provenance`).
    """
    from benchlab.errors import UserError
    from benchlab.store.formats.common import load_json, source_of, wrong_format

    doc = load_json(path, "a benchlab JSON export", "json")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise wrong_format(path, "json", doc, "a benchlab JSON export (no \"format\": "
                                             "\"benchlab-export\")")
    if doc.get("format_version") != FORMAT_VERSION:
        raise UserError(f"{path} has format_version {doc.get('format_version')!r}; this benchlab "
                        f"reads version {FORMAT_VERSION}: use a matching benchlab to import it")
    sessions = doc.get("sessions")
    if not isinstance(sessions, list) or not sessions:
        raise UserError(f"{path} holds no sessions; export at least one session")
    if name and len(sessions) > 1:
        raise UserError(f"--name names one session but {path} holds {len(sessions)}; "
                        f"drop --name (each keeps its exported name)")
    out = []
    for i, s in enumerate(sessions):
        try:
            out.append(session_from_document(s, source=source_of(path), name=name,
                                             command_line=command_line))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise UserError(f"{path} sessions[{i}] is damaged ({what}); re-export it with "
                            f"benchlab export --format json") from None
    return out


def export(sessions: Sequence[SessionData], options: ExportOptions) -> str:
    """The ``json`` export format (:mod:`benchlab.store.formats.exporters`): :func:`export_json`."""
    return export_json(sessions)
