"""The JSON export: every stored field of the selected sessions, in one document.

The document is described in ``docs/json-schema.md`` and validated by
``docs/benchlab-export.schema.json`` (JSON Schema draft 2020-12). Units: every ``*_ns`` field
is in nanoseconds, ``max_rss_kib`` in KiB, samples in their metric's declared unit.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

from benchlab import __version__
from benchlab.store.db import RUN_COLUMNS, utc_now
from benchlab.store.formats._gather import SessionData

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
    doc: dict[str, Any] = {k: s.row.get(k) for k in _SESSION_KEYS}
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
