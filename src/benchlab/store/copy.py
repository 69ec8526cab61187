"""Copying sessions between stores (SQLite and PostgreSQL, either way), verified by digests.

A session is identified across stores by its ``uid``; row ids differ from store to store, so
everything is copied by content: the environment and setups by their digests (reused when the
destination has them), benchmarks by name, runs by ``seq``. The **session digest** is the
SHA-256 of that content with every row id replaced by what it stands for (benchmark name, setup
and environment digest, parent uid), so it is the same in any store holding the same session.

Copying is idempotent: a session whose uid the destination already holds with the same digest is
left alone; one held with a different digest is refused before anything is written. Each session
is written in one transaction that also re-reads it and compares digest and row counts, so a
copy that does not verify is rolled back.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.sample_blocks import insert_blocks, run_samples

#: Session columns copied as they are (``id``, ``environment_id`` and ``parent_id`` are mapped).
SESSION_COLUMNS = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "command_line",
                   "protocol", "environment", "system_checks", "load_before", "load_after",
                   "metadata", "source", "owner_pid", "owner_host", "owner_start", "input_digest")
BENCHMARK_COLUMNS = ("name", "command", "argv", "parameters", "position")
RUN_COLUMNS = ("seq", "iteration", "warmup", "worker", "status", "exit_code", "signal", "error",
               "start_unix_ns", "start_mono_ns", "end_mono_ns", "wall_ns", "user_ns", "sys_ns",
               "max_rss_kib", "minflt", "majflt", "nvcsw", "nivcsw", "shell_overhead_ns", "cpus",
               "spawn_method", "extra")
MEASUREMENT_COLUMNS = ("source", "name", "value", "unit", "status", "note")
METRIC_COLUMNS = ("name", "unit", "origin", "pattern")


@dataclass
class Copied:
    """What happened to one session: ``copied`` or ``present`` (already there, same digest)."""

    uid: str
    name: str | None
    action: str
    digest: str
    counts: dict[str, int]


def _cell(value: Any) -> Any:
    # floats by their exact hex, so the digest does not depend on how a backend prints them
    return value.hex() if isinstance(value, float) else value


def _rows(store: Store, sql: str, args: Sequence[Any] = ()) -> list[dict]:
    return [dict(r) for r in store.conn.execute(sql, tuple(args))]


def _digest_of_data(store: Store, table: str, row_id: int | None) -> str | None:
    if row_id is None:
        return None
    row = store.conn.execute(f"SELECT digest FROM {table} WHERE id = ?", (row_id,)).fetchone()
    return None if row is None else row[0]


def session_content(store: Store, session_id: int) -> tuple[str, dict[str, int]]:
    """(digest, row counts) of one session, independent of the store's row ids.

    Counts are of benchmarks, runs, samples, measurements and metrics; the digest is SHA-256
    (hex) over the session's columns, its environment and setup digests, its parent's uid and
    every row below it in a fixed order.
    """
    h = hashlib.sha256()

    def feed(kind: str, values: Sequence[Any]) -> None:
        h.update(json.dumps([kind, *map(_cell, values)], default=str).encode())

    sess = dict(store.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone())
    parent = None
    if sess.get("parent_id") is not None:
        row = store.conn.execute("SELECT uid FROM sessions WHERE id = ?",
                                 (sess["parent_id"],)).fetchone()
        parent = None if row is None else row[0]
    feed("session", [sess[c] for c in SESSION_COLUMNS] +
         [_digest_of_data(store, "environments", sess["environment_id"]), parent])
    counts = dict.fromkeys(("benchmarks", "runs", "samples", "measurements", "metrics"), 0)
    bench_names: dict[int, str] = {}
    for b in _rows(store, "SELECT * FROM benchmarks WHERE session_id = ? ORDER BY position, name",
                   (session_id,)):
        bench_names[b["id"]] = b["name"]
        feed("benchmark", [b[c] for c in BENCHMARK_COLUMNS] +
             [_digest_of_data(store, "setups", b["setup_id"])])
        counts["benchmarks"] += 1
    for m in _rows(store, "SELECT * FROM metrics WHERE session_id = ? ORDER BY name", (session_id,)):
        feed("metric", [m[c] for c in METRIC_COLUMNS])
        counts["metrics"] += 1
    for r in _rows(store, "SELECT * FROM runs WHERE session_id = ? ORDER BY seq", (session_id,)):
        feed("run", [r[c] for c in RUN_COLUMNS] +
             [bench_names.get(r["benchmark_id"]), _digest_of_data(store, "setups", r["setup_id"])])
        counts["runs"] += 1
        for m in _rows(store, "SELECT * FROM measurements WHERE run_id = ? ORDER BY source, name",
                       (r["id"],)):
            feed("measurement", [m[c] for c in MEASUREMENT_COLUMNS])
            counts["measurements"] += 1
        for metric, (values, seqs) in run_samples(store.conn, r["id"]).items():
            # the values' bytes, not their layout in blocks: equal content, equal digest
            feed("samples", [metric])
            h.update(seqs.astype("<i8").tobytes())
            h.update(values.astype("<f8").tobytes())
            counts["samples"] += len(values)
    return h.hexdigest(), counts


def _id_by_digest(src: Store, dst: Store, table: str, row_id: int | None) -> int | None:
    """The destination's id of the environment or setup ``row_id`` of ``src`` (copied if new)."""
    if row_id is None:
        return None
    row = dict(src.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone())
    found = dst.conn.execute(f"SELECT id FROM {table} WHERE digest = ?", (row["digest"],)).fetchone()
    if found is not None:
        return int(found[0])
    cols = [c for c in row if c != "id"]
    cur = dst.conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
                           f"({', '.join('?' * len(cols))})", [row[c] for c in cols])
    return int(cur.lastrowid)


def _insert(dst: Store, table: str, row: dict) -> int | None:
    cols = list(row)
    cur = dst.conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
                           f"({', '.join('?' * len(cols))})", [row[c] for c in cols])
    return cur.lastrowid


def _copy_one(src: Store, dst: Store, sess: dict) -> None:
    sid = sess["id"]
    row = {c: sess[c] for c in SESSION_COLUMNS}
    row["environment_id"] = _id_by_digest(src, dst, "environments", sess["environment_id"])
    row["parent_id"] = None
    if sess.get("parent_id") is not None:
        parent = src.conn.execute("SELECT uid FROM sessions WHERE id = ?",
                                  (sess["parent_id"],)).fetchone()
        there = None if parent is None else dst.conn.execute(
            "SELECT id FROM sessions WHERE uid = ?", (parent[0],)).fetchone()
        row["parent_id"] = None if there is None else int(there[0])
    new_sid = _insert(dst, "sessions", row)
    bench_ids: dict[int, int] = {}
    for b in _rows(src, "SELECT * FROM benchmarks WHERE session_id = ?", (sid,)):
        new = {c: b[c] for c in BENCHMARK_COLUMNS}
        new.update(session_id=new_sid, setup_id=_id_by_digest(src, dst, "setups", b["setup_id"]))
        bench_ids[b["id"]] = _insert(dst, "benchmarks", new)
    metrics = _rows(src, "SELECT * FROM metrics WHERE session_id = ?", (sid,))
    if metrics:
        dst.conn.executemany("INSERT INTO metrics (session_id, name, unit, origin, pattern) "
                             "VALUES (?,?,?,?,?)",
                             [(new_sid, *(m[c] for c in METRIC_COLUMNS)) for m in metrics])
    for r in _rows(src, "SELECT * FROM runs WHERE session_id = ? ORDER BY seq", (sid,)):
        new = {c: r[c] for c in RUN_COLUMNS}
        new.update(session_id=new_sid, benchmark_id=bench_ids[r["benchmark_id"]],
                   setup_id=_id_by_digest(src, dst, "setups", r["setup_id"]))
        run_id = _insert(dst, "runs", new)
        ms = _rows(src, "SELECT * FROM measurements WHERE run_id = ?", (r["id"],))
        if ms:
            dst.conn.executemany(
                "INSERT INTO measurements (run_id, source, name, value, unit, status, note) "
                "VALUES (?,?,?,?,?,?,?)",
                [(run_id, *(m[c] for c in MEASUREMENT_COLUMNS)) for m in ms])
        _copy_samples(src, dst, r["id"], run_id)


def _copy_samples(src: Store, dst: Store, src_run: int, dst_run: int) -> None:
    cur = src.conn.cursor()
    cur.row_factory = None
    rows = cur.execute("SELECT metric, first_seq, n, data FROM sample_blocks WHERE run_id = ?"
                       " ORDER BY metric, first_seq", (src_run,)).fetchall()
    # bit for bit: the blocks are copied as they are
    insert_blocks(dst.conn, [(dst_run, m, first, n, bytes(data)) for m, first, n, data in rows])


def copy_sessions(src: Store, dst: Store, keys: Sequence[str] = ()) -> list[Copied]:
    """Copy the sessions ``keys`` (uid, id or name; default: all, oldest first) from ``src``
    to ``dst``; return what happened to each.

    Raises UserError, before writing anything, when ``dst`` holds one of the uids with other
    content. Each copied session is verified (digest and row counts) inside its transaction.
    """
    if keys:
        chosen: dict[int, dict] = {}
        for key in keys:
            sess = src.get_session(key)
            chosen[sess["id"]] = sess
        ids = sorted(chosen)  # oldest first: a study's parent before its member sessions
    else:
        ids = [int(r[0]) for r in src.conn.execute("SELECT id FROM sessions ORDER BY id")]
    plan: list[tuple[dict, str, dict[str, int], bool]] = []
    for sid in ids:
        sess = dict(src.conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone())
        digest, counts = session_content(src, sid)
        there = dst.conn.execute("SELECT id FROM sessions WHERE uid = ?", (sess["uid"],)).fetchone()
        if there is not None:
            other, _ = session_content(dst, int(there[0]))
            if other != digest:
                raise UserError(f"session {sess['uid']} is already in {dst.path} with different "
                                f"content (digest {other[:12]} there, {digest[:12]} here); nothing "
                                f"was copied: remove it there or copy other sessions with -s")
        plan.append((sess, digest, counts, there is not None))
    done: list[Copied] = []
    for sess, digest, counts, present in plan:
        if not present:
            with dst.transaction():
                _copy_one(src, dst, sess)
                new_id = dst.conn.execute("SELECT id FROM sessions WHERE uid = ?",
                                          (sess["uid"],)).fetchone()[0]
                got, got_counts = session_content(dst, int(new_id))
                if got != digest or got_counts != counts:
                    raise UserError(f"copy of session {sess['uid']} did not verify (digest "
                                    f"{got[:12]} vs {digest[:12]}, counts {got_counts} vs "
                                    f"{counts}); it was rolled back; please report this")
        done.append(Copied(sess["uid"], sess["name"], "present" if present else "copied", digest,
                           counts))
    return done
