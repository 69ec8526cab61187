"""Keeping a store tidy: delete named sessions, rename one, give freed space back (VACUUM).

Nothing is deleted that was not named: :func:`delete_sessions` removes exactly the sessions it
is given, with their benchmarks, runs, samples, measurements and metrics (the schema's
``ON DELETE CASCADE``), in one transaction. Environments and setups are shared between sessions
by digest and are kept. A session that is still being written (status ``running`` and its owner
process alive, or on another host where that cannot be told) is never deleted; one whose owner
died (``crashed``) can be. Works on SQLite files and PostgreSQL team stores alike.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Sequence

from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.owner import owner_alive


@dataclass(frozen=True)
class DeletedSessions:
    """What :func:`delete_sessions` removed: the sessions (uid, name, kind) and their run count."""

    sessions: tuple[dict, ...]
    runs: int


def sessions_to_delete(store: Store, keys: Sequence[str] = (), *,
                       older_than_s: float | None = None,
                       now: _dt.datetime | None = None) -> list[dict]:
    """The sessions named by ``keys`` (uid, uid prefix, id or name) plus, with ``older_than_s``,
    every session created more than that many seconds before ``now`` (default: the current
    time); each once, oldest first. Raises UserError for a key that names no session, or when
    one of them is still running."""
    chosen: dict[int, dict] = {}
    for key in keys:
        row = store.get_session(key)
        chosen[row["id"]] = row
    if older_than_s is not None:
        now = now or _dt.datetime.now(_dt.timezone.utc)
        cutoff = (now - _dt.timedelta(seconds=older_than_s)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for (uid,) in store.conn.execute(
                "SELECT uid FROM sessions WHERE created_utc < ? ORDER BY id", (cutoff,)).fetchall():
            row = store.get_session(uid)
            chosen[row["id"]] = row
    rows = sorted(chosen.values(), key=lambda r: r["id"])
    _refuse_running(rows)
    return rows


def _still_running(row: dict[str, Any]) -> bool:
    """True when the session's writer may still be writing it (so it must not be deleted)."""
    raw = row.get("raw_status", row.get("status"))
    return raw == "running" and owner_alive(row) is not False


def _refuse_running(rows: Sequence[dict]) -> None:
    running = [r for r in rows if _still_running(r)]
    if running:
        shown = ", ".join(f"{r['uid'][:8]}" + (f" (pid {r['owner_pid']})" if r.get("owner_pid")
                                                else "") for r in running)
        raise UserError(f"session(s) still running: {shown}; nothing was deleted. Stop them "
                        "(Ctrl-C) or wait until they end, then delete")


def delete_sessions(store: Store, rows: Sequence[dict]) -> DeletedSessions:
    """Delete the sessions ``rows`` (from :func:`sessions_to_delete`) in one transaction.

    Their status is read again inside the transaction, so a session resumed meanwhile is not
    deleted (UserError, nothing deleted). Returns what was removed.
    """
    ids = [int(r["id"]) for r in rows]
    if not ids:
        return DeletedSessions((), 0)
    marks = ",".join("?" * len(ids))
    with store.transaction() as conn:
        columns = ("id", "uid", "name", "kind", "status", "owner_pid", "owner_host", "owner_start")
        fresh = [dict(zip(columns, tuple(r))) for r in conn.execute(
            f"SELECT {', '.join(columns)} FROM sessions WHERE id IN ({marks})", ids).fetchall()]
        _refuse_running(fresh)
        runs = int(conn.execute(f"SELECT COUNT(*) FROM runs WHERE session_id IN ({marks})",
                                ids).fetchone()[0])
        conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", ids)
    return DeletedSessions(tuple({"uid": r["uid"], "name": r["name"], "kind": r["kind"]}
                                 for r in sorted(fresh, key=lambda r: r["id"])), runs)


def rename_session(store: Store, key: str, name: str) -> tuple[dict, str | None]:
    """Give session ``key`` the name ``name``; returns (the session, its old name).

    Raises UserError for an empty name or one that looks like a session id (a number), which
    ``benchlab show NAME`` would read as the id.
    """
    name = name.strip()
    if not name:
        raise UserError("a session name cannot be empty; give a name, e.g. baseline")
    if name.isdigit():
        raise UserError(f"session name {name!r} is a number, which selects sessions by id; "
                        "use a name with a letter, e.g. run-{name}")
    row = store.get_session(key)
    with store.transaction() as conn:
        conn.execute("UPDATE sessions SET name = ? WHERE id = ?", (name, row["id"]))
    return row, row.get("name")


@dataclass(frozen=True)
class Vacuumed:
    """Result of :func:`vacuum`: the file's size before and after in bytes (None on PostgreSQL,
    where the server owns the files)."""

    bytes_before: int | None
    bytes_after: int | None


def vacuum(store: Store) -> Vacuumed:
    """Give the space of deleted rows back: ``VACUUM`` (SQLite: rewrites the file, and the WAL is
    checkpointed first; PostgreSQL: ``VACUUM ANALYZE`` of benchlab's tables). Deletes nothing."""
    return Vacuumed(*store.backend.vacuum(store))
