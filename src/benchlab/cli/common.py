"""Options and helpers shared by CLI modules: the ``--db`` option, opening the store, and
what ``list`` and ``show`` gather about a session (plain data; printing is in ``data.py``)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import weakref
from typing import Any

import click

from benchlab.cli.output_path import guard_outputs
from benchlab.store.db import Store, default_db_path

db_option = click.option(
    "--db", default=None, metavar="PATH", callback=guard_outputs,
    help="Database file (default: $BENCHLAB_DB, else ./benchlab.db when it exists, else "
         "~/.local/share/benchlab/benchlab.db).")


def open_store(db: str | None, *, readonly: bool = False) -> Store:
    """Open the store named by ``--db`` (or the default); errors are one-line UserErrors.

    An explicit empty ``--db ''`` is an error, not the default store.
    """
    path = default_db_path() if db is None else db
    created = not readonly and not os.path.lexists(path) and _holds_files(path)
    store = Store.open(path, readonly=readonly)
    if created:
        _CREATED_STORES.append(weakref.ref(store))
    return store


def _holds_files(path: str) -> bool:
    """Whether the store ``path`` is files on this machine (not a server's database)."""
    from benchlab.store.backends import backend_for

    return bool(backend_for(path).files(path))


#: Stores this process created: a command refused after opening one leaves no empty file behind.
_CREATED_STORES: list[weakref.ref] = []  # weak: a finished command's store closes as it is freed


def discard_unused_new_stores() -> None:
    """Remove each SQLite store this process created that still holds nothing (its -wal and
    -shm files too): bad input is refused with nothing left behind, even when the store was
    opened before the input was checked."""
    while _CREATED_STORES:
        store = _CREATED_STORES.pop()()
        if store is None:  # freed, so closed: the command finished with it
            continue
        try:
            unused = store.holds_nothing()
            files = store.store_files()
            store.close()
        except Exception:  # noqa: BLE001 - a store we cannot read is one we do not remove
            continue
        if unused:
            for name in files:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)


def resume_command(session: dict, db: str | None) -> str | None:
    """The command that resumes ``session`` (None for kinds that cannot be resumed)."""
    db_part = f" --db {shlex.quote(db)}" if db else ""
    if session.get("kind") == "run":
        return f"benchlab run --resume {session['uid']}{db_part}"
    if session.get("kind") == "study":
        return f"benchlab study run --resume {session['uid']}{db_part}"
    return None


def commands_of(store: Store, session_ids: list[int]) -> dict[int, list[str]]:
    """Each session's benchmark commands (or names), in order, by session id."""
    return store.commands_of(session_ids)


def _leaf(value: Any) -> str | None:
    from benchlab.environment import is_unknown  # list and show need no probe of the machine

    if value is None or is_unknown(value):
        return None
    return str(value)


def environment_summary(env: Any) -> dict[str, str]:
    """A few identifying lines of a stored environment snapshot (missing fields left out)."""
    if not isinstance(env, dict):
        return {}
    def get(*path: str) -> Any:
        node: Any = env
        for p in path:
            if not isinstance(node, dict):
                return None
            node = node.get(p)
        return node

    out: dict[str, str] = {}
    candidates = {
        "host": get("host", "hostname"),
        "os": get("os", "distribution", "pretty_name"),
        "kernel": get("os", "kernel", "release"),
        "cpu": get("cpu", "model"),
        "logical cores": get("cpu", "logical_cores"),
        "memory (KiB)": get("memory", "total_kib"),
        "virtualization": get("virtualization", "vm"),
        "python": get("python", "version"),
        "benchlab": get("benchlab", "version"),
        "git commit": get("git", "commit"),
        "digest": get("digest"),
    }
    for key, value in candidates.items():
        text = _leaf(value)
        if text is not None:
            out[key] = text
    return out


def session_overview(store: Store, key: str) -> dict[str, Any]:
    """What ``benchlab show`` prints: session fields, environment summary, protocol, metrics,
    benchmarks with run counts by status (warmups counted apart) and their sample metrics."""
    sess = store.get_session(key)
    sid = sess["id"]
    counts: dict[int, dict[str, int]] = {}
    warmups: dict[int, int] = {}
    for bench_id, warm, status, n in store.run_status_counts(sid):
        if warm:
            warmups[bench_id] = warmups.get(bench_id, 0) + n
        else:
            counts.setdefault(bench_id, {})[status] = n
    benchmarks = []
    for b in store.benchmarks(sid):
        benchmarks.append({
            "name": b["name"], "command": b["command"], "parameters": b["parameters"],
            "runs": counts.get(b["id"], {}), "warmup_runs": warmups.get(b["id"], 0),
            "sample_metrics": store.sample_metrics(b["id"]),
        })
    metrics = [{k: m[k] for k in ("name", "unit", "origin", "pattern")}
               for m in store.metrics(sid)]
    fields = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
              "command_line", "protocol", "metadata", "environment", "system_checks",
              "load_before", "load_after")
    return {
        "id": sid,
        **{k: sess.get(k) for k in fields},
        "environment_summary": environment_summary(sess.get("environment")),
        "metrics": metrics,
        "benchmarks": benchmarks,
    }


def _short_json(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def metadata_lines(meta: Any) -> list[tuple[str, str]]:
    """(key, short text) lines summarising a protocol or metadata value for ``show``."""
    if not isinstance(meta, dict):
        return [] if meta is None else [("metadata", _short_json(meta))]
    out = []
    for k, v in meta.items():
        if isinstance(v, list) and len(v) > 3:
            out.append((k, f"{len(v)} entries"))
        elif isinstance(v, dict) and len(json.dumps(v, default=str)) > 100:
            out.append((k, f"{len(v)} keys"))
        else:
            out.append((k, _short_json(v)))
    return out


#: Failed runs whose stderr tail ``show`` prints (the newest ones), and lines of each tail.
SHOWN_FAILURES = 5
TAIL_LINES = 6


def failed_runs(store: Store, session_id: int, limit: int = SHOWN_FAILURES) -> list[dict[str, Any]]:
    """The newest ``limit`` runs of a session that did not end ok, with their stderr tail."""
    return store.failed_runs(session_id, limit)


def verdict_lines(store: Store, session_id: int) -> list[str]:
    """hyperfine-style verdict over a session's benchmarks (wall time), or [] with fewer than
    two benchmarks that have measured runs."""
    series = []
    for bench in store.benchmarks(session_id):
        values, _ = store.harness_values(bench["id"], "wall")
        if values.size:
            series.append((bench["name"], values))
    if len(series) < 2:
        return []
    from benchlab.report.speed_verdict import speed_verdict

    return speed_verdict(series)
