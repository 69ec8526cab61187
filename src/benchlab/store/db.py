"""The SQLite store: every session, run and sample benchlab measures or imports.

Durability contract: each run is written in its own transaction, committed as soon as the run
ends. The database is in WAL mode with ``synchronous=NORMAL``: a committed transaction survives
a crash or ``kill -9`` of benchlab (it is in the WAL, which the OS holds); only a power loss or
kernel crash can lose the last few commits. That trade keeps fsync traffic off the machine while
benchmarks run.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import secrets
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from benchlab.errors import UserError
from benchlab.store.schema import MIGRATIONS, SCHEMA_VERSION

DEFAULT_DB = "benchlab.db"
BUSY_TIMEOUT_MS = 5000

RUN_COLUMNS = (
    "status", "exit_code", "signal", "error", "start_unix_ns", "start_mono_ns", "end_mono_ns",
    "wall_ns", "user_ns", "sys_ns", "max_rss_kib", "minflt", "majflt", "nvcsw", "nivcsw",
    "shell_overhead_ns", "cpus", "spawn_method", "extra",
)

#: Harness-side series every run can provide, by name: (column expression, unit).
HARNESS_METRICS: dict[str, tuple[str, str]] = {
    "wall": ("wall_ns - COALESCE(shell_overhead_ns, 0)", "ns"),
    "wall_raw": ("wall_ns", "ns"),
    "user": ("user_ns", "ns"),
    "sys": ("sys_ns", "ns"),
    "cpu": ("user_ns + sys_ns", "ns"),
    "max_rss": ("max_rss_kib", "KiB"),
    "minflt": ("minflt", "count"),
    "majflt": ("majflt", "count"),
    "nvcsw": ("nvcsw", "count"),
    "nivcsw": ("nivcsw", "count"),
}


def utc_now() -> str:
    """Current UTC time as ISO 8601 with a ``Z`` suffix and microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal data give equal text (and digests)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def default_db_path() -> str:
    """The database path: ``$BENCHLAB_DB`` if set, else ``./benchlab.db``."""
    return os.environ.get("BENCHLAB_DB") or DEFAULT_DB


@dataclass(frozen=True)
class SessionRef:
    """Identifies a session: ``id`` is the row id, ``uid`` the short id users type."""

    id: int
    uid: str


@dataclass
class Series:
    """One sample series selected for analysis (values in ``unit``)."""

    values: np.ndarray
    label: str
    unit: str
    metric: str
    session_uid: str
    session_id: int
    benchmark: str
    benchmark_id: int
    run_ids: np.ndarray


def _translate(exc: sqlite3.Error, path: str) -> UserError:
    msg = str(exc).lower()
    if "locked" in msg or "busy" in msg:
        return UserError(
            f"database {path} is locked by another process; wait for it to finish "
            f"or use another file with --db PATH")
    if "readonly" in msg or "read-only" in msg:
        return UserError(
            f"database {path} is read-only; make it writable (chmod u+w) or use --db PATH "
            f"in a writable place")
    if "unable to open" in msg:
        return UserError(
            f"cannot open database {path}: the file or its directory is not accessible; "
            f"check permissions or use --db PATH in a writable directory")
    if "not a database" in msg or "malformed" in msg:
        return UserError(
            f"{path} is not a valid benchlab database ({exc}); use --db PATH to choose another file")
    if "disk i/o" in msg or "disk is full" in msg:
        return UserError(f"cannot write database {path}: {exc}; free space or use --db PATH")
    return UserError(f"database {path}: {exc}")


class Store:
    """A benchlab database file. Use :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(self, conn: sqlite3.Connection, path: str, readonly: bool):
        self.conn = conn
        self.path = path
        self.readonly = readonly

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, readonly: bool = False) -> "Store":
        """Open (creating and migrating when writable) the database at ``path``.

        Raises :class:`UserError` with a one-line reason for a locked, read-only, corrupt or
        inaccessible file, or a directory that is not writable.
        """
        path = str(path or default_db_path())
        p = Path(path)
        if p.is_dir():
            raise UserError(f"{path} is a directory, not a database file; use --db DIR/benchlab.db")
        if readonly:
            if not p.exists():
                raise UserError(f"no database at {path}; run `benchlab run ...` first or pass --db PATH")
            uri = f"file:{p.resolve()}?mode=ro"
        else:
            parent = p.resolve().parent
            if not parent.is_dir():
                raise UserError(f"directory {parent} does not exist; create it or use --db PATH")
            # WAL needs to create -wal/-shm files beside the database.
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UserError(
                    f"directory {parent} is not writable (the database needs its -wal file there); "
                    f"use --db PATH in a writable directory")
            if p.exists() and not os.access(p, os.W_OK):
                raise UserError(
                    f"database {path} is read-only; make it writable (chmod u+w) or use --db PATH")
            uri = f"file:{p.resolve()}"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not readonly:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise UserError(f"database {path} cannot use WAL journaling (got {mode}); "
                                    f"use a local file system for --db")
                conn.execute("PRAGMA synchronous = NORMAL")
            store = cls(conn, path, readonly)
            store._migrate()
        except sqlite3.Error as exc:
            raise _translate(exc, path) from None
        return store

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise UserError(
                f"database {self.path} has schema version {version}, newer than this benchlab "
                f"understands ({SCHEMA_VERSION}); upgrade benchlab")
        if version == SCHEMA_VERSION:
            return
        if self.readonly:
            raise UserError(f"database {self.path} needs a schema upgrade but was opened read-only; "
                            f"open it once without read-only access")
        for target in range(version, SCHEMA_VERSION):
            with self.transaction():
                for statement in _split_sql(MIGRATIONS[target]):
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {target + 1}")

    def close(self) -> None:
        """Close the connection (the WAL is checkpointed by SQLite when the last one closes)."""
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error); errors become UserError."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def integrity_ok(self) -> bool:
        """True when ``PRAGMA integrity_check`` answers ``ok``."""
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # -- writing ---------------------------------------------------------------------------

    def put_environment(self, environment: Mapping[str, Any], digest: str | None = None) -> int:
        """Store a machine fingerprint once; return its id. ``digest`` identifies the machine."""
        digest = digest or digest_of(environment)
        host = environment.get("host") if isinstance(environment, Mapping) else None
        hostname = host.get("hostname") if isinstance(host, Mapping) else None
        if not isinstance(hostname, str):
            hostname = None
        with self.transaction() as c:
            row = c.execute("SELECT id FROM environments WHERE digest = ?", (digest,)).fetchone()
            if row:
                return int(row[0])
            cur = c.execute("INSERT INTO environments (digest, hostname, data) VALUES (?, ?, ?)",
                            (digest, hostname, canonical_json(environment)))
            return int(cur.lastrowid)

    def put_setup(self, setup: Mapping[str, Any]) -> int:
        """Store an execution setup (affinity, cgroup limits, isolation, ...) once; return its id."""
        digest = digest_of(setup)
        with self.transaction() as c:
            row = c.execute("SELECT id FROM setups WHERE digest = ?", (digest,)).fetchone()
            if row:
                return int(row[0])
            cur = c.execute("INSERT INTO setups (digest, data) VALUES (?, ?)",
                            (digest, canonical_json(setup)))
            return int(cur.lastrowid)

    def create_session(self, kind: str, *, name: str | None = None,
                       command_line: Sequence[str] | None = None,
                       protocol: Mapping[str, Any] | None = None,
                       environment: Mapping[str, Any] | None = None,
                       environment_id: int | None = None,
                       system_checks: Any = None, load_before: Any = None,
                       metadata: Any = None, source: str | None = None,
                       status: str = "running") -> SessionRef:
        """Create a session row and commit it at once; return its reference."""
        with self.transaction() as c:
            for _ in range(10):
                uid = secrets.token_hex(4)
                if not c.execute("SELECT 1 FROM sessions WHERE uid = ?", (uid,)).fetchone():
                    break
            cur = c.execute(
                "INSERT INTO sessions (uid, name, kind, status, created_utc, command_line, protocol,"
                " environment_id, environment, system_checks, load_before, metadata, source)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (uid, name, kind, status, utc_now(), _json_or_none(command_line),
                 _json_or_none(protocol), environment_id, _json_or_none(environment),
                 _json_or_none(system_checks), _json_or_none(load_before),
                 _json_or_none(metadata), source))
            return SessionRef(int(cur.lastrowid), uid)

    def update_session(self, session_id: int, **fields: Any) -> None:
        """Set session columns (JSON-encoding dicts and lists) and commit."""
        allowed = {"name", "status", "finished_utc", "protocol", "system_checks", "load_after",
                   "metadata", "environment", "environment_id", "source"}
        bad = set(fields) - allowed
        if bad:
            raise ValueError(f"unknown session fields: {sorted(bad)}")
        cols = ", ".join(f"{k} = ?" for k in fields)
        values = [v if isinstance(v, (str, int, float, type(None))) else canonical_json(v)
                  for v in fields.values()]
        with self.transaction() as c:
            c.execute(f"UPDATE sessions SET {cols} WHERE id = ?", (*values, session_id))

    def finish_session(self, session_id: int, status: str, load_after: Any = None) -> None:
        """Mark a session complete, interrupted or failed, with its end time."""
        self.update_session(session_id, status=status, finished_utc=utc_now(),
                            load_after=load_after)

    def add_benchmark(self, session_id: int, name: str, *, position: int,
                      command: str | None = None, argv: Sequence[str] | None = None,
                      parameters: Mapping[str, Any] | None = None,
                      setup_id: int | None = None) -> int:
        """Add a benchmark (one command or label) to a session; return its id."""
        with self.transaction() as c:
            try:
                cur = c.execute(
                    "INSERT INTO benchmarks (session_id, name, command, argv, parameters, position,"
                    " setup_id) VALUES (?,?,?,?,?,?,?)",
                    (session_id, name, command, _json_or_none(argv), _json_or_none(parameters),
                     position, setup_id))
            except sqlite3.IntegrityError:
                raise UserError(f"two benchmarks are named {name!r} in one session; "
                                f"give distinct names with -n/--name") from None
            return int(cur.lastrowid)

    def add_metric(self, session_id: int, name: str, *, unit: str | None, origin: str,
                   pattern: str | None = None) -> None:
        """Declare a program-reported metric (its unit and where it comes from)."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO metrics (session_id, name, unit, origin, pattern)"
                      " VALUES (?,?,?,?,?)", (session_id, name, unit, origin, pattern))

    def next_seq(self, session_id: int) -> int:
        """The next free run sequence number in a session."""
        row = self.conn.execute("SELECT MAX(seq) FROM runs WHERE session_id = ?",
                                (session_id,)).fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def add_run(self, session_id: int, benchmark_id: int, *, seq: int, iteration: int,
                warmup: bool = False, worker: int = 0, setup_id: int | None = None,
                fields: Mapping[str, Any],
                samples: Mapping[str, Sequence[float] | np.ndarray] | None = None,
                measurements: Iterable[Mapping[str, Any]] = ()) -> int:
        """Write one finished run with its samples and measurements in ONE committed transaction.

        ``fields`` holds the harness columns (see ``RUN_COLUMNS``; times in ns, RSS in KiB).
        ``samples`` maps metric name -> values the program reported during this run.
        ``measurements`` are dicts with ``source``, ``name``, ``value``, ``unit``, ``status``, ``note``.
        """
        bad = set(fields) - set(RUN_COLUMNS)
        if bad:
            raise ValueError(f"unknown run fields: {sorted(bad)}")
        cols = ["benchmark_id", "session_id", "seq", "iteration", "warmup", "worker", "setup_id"]
        vals: list[Any] = [benchmark_id, session_id, seq, iteration, int(bool(warmup)), worker,
                           setup_id]
        for k, v in fields.items():
            cols.append(k)
            vals.append(canonical_json(v) if isinstance(v, (dict, list, tuple)) else v)
        with self.transaction() as c:
            cur = c.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES "
                            f"({', '.join('?' * len(cols))})", vals)
            run_id = int(cur.lastrowid)
            for metric, values in (samples or {}).items():
                arr = np.asarray(values, dtype=float)
                c.executemany("INSERT INTO samples (run_id, metric, seq, value) VALUES (?,?,?,?)",
                              ((run_id, metric, i, float(v)) for i, v in enumerate(arr)))
            for m in measurements:
                c.execute("INSERT OR REPLACE INTO measurements (run_id, source, name, value, unit,"
                          " status, note) VALUES (?,?,?,?,?,?,?)",
                          (run_id, m["source"], m["name"], m.get("value"), m.get("unit"),
                           m.get("status", "ok"), m.get("note")))
        return run_id

    # -- reading ---------------------------------------------------------------------------

    def sessions(self, limit: int | None = None) -> list[dict]:
        """Sessions, newest first, with counts of benchmarks and runs."""
        q = ("SELECT s.*, (SELECT COUNT(*) FROM benchmarks b WHERE b.session_id = s.id) AS n_benchmarks,"
             " (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS n_runs"
             " FROM sessions s ORDER BY s.id DESC")
        if limit:
            q += f" LIMIT {int(limit)}"
        return [_decode(dict(r)) for r in self.conn.execute(q)]

    def get_session(self, key: str | int) -> dict:
        """Find a session by uid, numeric id or name (the newest of that name).

        Raises UserError naming how to list sessions when nothing matches.
        """
        key_s = str(key)
        row = self.conn.execute("SELECT * FROM sessions WHERE uid = ?", (key_s,)).fetchone()
        if row is None and key_s.isdigit():
            row = self.conn.execute("SELECT * FROM sessions WHERE id = ?", (int(key_s),)).fetchone()
        if row is None:
            row = self.conn.execute("SELECT * FROM sessions WHERE name = ? ORDER BY id DESC LIMIT 1",
                                    (key_s,)).fetchone()
        if row is None:
            row = self.conn.execute("SELECT * FROM sessions WHERE uid LIKE ? ORDER BY id DESC",
                                    (key_s + "%",)).fetchone() if len(key_s) >= 4 else None
        if row is None:
            raise UserError(f"no session {key_s!r} in {self.path}; list them with `benchlab list`")
        return _decode(dict(row))

    def benchmarks(self, session_id: int) -> list[dict]:
        """The benchmarks of a session in their declared order."""
        return [_decode(dict(r)) for r in self.conn.execute(
            "SELECT * FROM benchmarks WHERE session_id = ? ORDER BY position", (session_id,))]

    def runs(self, *, session_id: int | None = None, benchmark_id: int | None = None,
             include_warmup: bool = True) -> list[dict]:
        """Runs in execution order, filtered by session and/or benchmark."""
        where, args = [], []
        if session_id is not None:
            where.append("session_id = ?")
            args.append(session_id)
        if benchmark_id is not None:
            where.append("benchmark_id = ?")
            args.append(benchmark_id)
        if not include_warmup:
            where.append("warmup = 0")
        q = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY seq"
        return [_decode(dict(r)) for r in self.conn.execute(q, args)]

    def metrics(self, session_id: int) -> list[dict]:
        """Program-reported metrics declared in a session."""
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM metrics WHERE session_id = ? ORDER BY name", (session_id,))]

    def sample_metrics(self, benchmark_id: int) -> list[str]:
        """Names of program-reported metrics that have samples in a benchmark's runs."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT metric FROM samples WHERE run_id IN "
            "(SELECT id FROM runs WHERE benchmark_id = ?) ORDER BY metric", (benchmark_id,))]

    def samples_of_run(self, run_id: int) -> dict[str, np.ndarray]:
        """All program-reported samples of one run, by metric."""
        out: dict[str, list[float]] = {}
        for metric, value in self.conn.execute(
                "SELECT metric, value FROM samples WHERE run_id = ? ORDER BY metric, seq", (run_id,)):
            out.setdefault(metric, []).append(value)
        return {k: np.asarray(v) for k, v in out.items()}

    def measurements_of_run(self, run_id: int) -> list[dict]:
        """Further measurements (cgroup, perf, isolator) of one run."""
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM measurements WHERE run_id = ? ORDER BY source, name", (run_id,))]

    def harness_values(self, benchmark_id: int, metric: str = "wall") -> tuple[np.ndarray, np.ndarray]:
        """Harness series of the benchmark's non-warmup ok runs: (values, run ids)."""
        expr, _unit = HARNESS_METRICS[metric]
        rows = self.conn.execute(
            f"SELECT id, {expr} FROM runs WHERE benchmark_id = ? AND warmup = 0 AND status = 'ok'"
            f" AND wall_ns IS NOT NULL ORDER BY seq", (benchmark_id,)).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vals = np.array([np.nan if r[1] is None else r[1] for r in rows], dtype=float)
        return vals, ids

    def sample_values(self, benchmark_id: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Program-reported samples of a benchmark's non-warmup ok runs, in order: (values, run ids)."""
        rows = self.conn.execute(
            "SELECT s.run_id, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
            " WHERE r.benchmark_id = ? AND r.warmup = 0 AND r.status IN ('ok', 'imported')"
            " AND s.metric = ? ORDER BY r.seq, s.seq", (benchmark_id, metric)).fetchall()
        if not rows:
            return np.empty(0), np.empty(0, dtype=np.int64)
        arr = np.array(rows, dtype=float)
        return arr[:, 1].copy(), arr[:, 0].astype(np.int64)

    def metric_unit(self, session_id: int, metric: str) -> str:
        """Unit of a metric: harness units, or the declared unit of a program metric ('' if none)."""
        if metric in HARNESS_METRICS:
            return HARNESS_METRICS[metric][1]
        row = self.conn.execute("SELECT unit FROM metrics WHERE session_id = ? AND name = ?",
                                (session_id, metric)).fetchone()
        return (row[0] or "") if row else ""

    def find_benchmark(self, name: str, session: str | int | None = None) -> tuple[dict, dict]:
        """The newest benchmark called ``name`` (in ``session`` if given): (session, benchmark)."""
        if session is not None:
            sess = self.get_session(session)
            row = self.conn.execute("SELECT * FROM benchmarks WHERE session_id = ? AND name = ?",
                                    (sess["id"], name)).fetchone()
            if row is None:
                names = ", ".join(b["name"] for b in self.benchmarks(sess["id"])) or "none"
                raise UserError(f"session {sess['uid']} has no benchmark {name!r} (it has: {names})")
            return sess, _decode(dict(row))
        row = self.conn.execute(
            "SELECT * FROM benchmarks WHERE name = ? ORDER BY session_id DESC, id DESC LIMIT 1",
            (name,)).fetchone()
        if row is None:
            raise UserError(f"no benchmark named {name!r} in {self.path}; "
                            f"see `benchlab list` for sessions and `benchlab show SESSION` for names")
        bench = _decode(dict(row))
        sess = _decode(dict(self.conn.execute("SELECT * FROM sessions WHERE id = ?",
                                              (bench["session_id"],)).fetchone()))
        return sess, bench

    def resolve_series(self, selector: str, metric: str | None = None) -> Series:
        """Select a sample series by ``[SESSION:]NAME[/METRIC]``.

        ``NAME`` is a benchmark name (newest session that has it) or, when no benchmark has that
        name, a session (uid, id or name) with exactly one benchmark. ``METRIC`` (or the
        ``metric`` argument) is a harness metric (wall, cpu, user, sys, max_rss, ...) or a
        program-reported one; by default the benchmark's only program metric when it has exactly
        one, else ``wall``. Only ok, non-warmup runs contribute.
        """
        sel = selector
        if metric is None and "/" in sel:
            sel, metric = sel.rsplit("/", 1)
        session_key = None
        if ":" in sel:
            session_key, sel = sel.split(":", 1)
        try:
            sess, bench = self.find_benchmark(sel, session_key)
        except UserError:
            if session_key is not None:
                raise
            try:
                sess = self.get_session(sel)
            except UserError:
                raise UserError(f"no benchmark or session named {sel!r} in {self.path}; "
                                f"see `benchlab list` and `benchlab show SESSION`") from None
            benches = self.benchmarks(sess["id"])
            if len(benches) != 1:
                names = ", ".join(b["name"] for b in benches) or "none"
                raise UserError(f"session {sess['uid']} has {len(benches)} benchmarks ({names}); "
                                f"select one as {sess['uid']}:NAME") from None
            bench = benches[0]
        program_metrics = self.sample_metrics(bench["id"])
        if metric is None:
            metric = program_metrics[0] if len(program_metrics) == 1 else "wall"
        if metric in HARNESS_METRICS and metric not in program_metrics:
            values, run_ids = self.harness_values(bench["id"], metric)
        elif metric in program_metrics:
            values, run_ids = self.sample_values(bench["id"], metric)
        else:
            known = ", ".join(sorted(set(HARNESS_METRICS) | set(program_metrics)))
            raise UserError(f"benchmark {bench['name']!r} has no metric {metric!r}; "
                            f"choose one of: {known}")
        return Series(values=values, label=bench["name"], unit=self.metric_unit(sess["id"], metric),
                      metric=metric, session_uid=sess["uid"], session_id=sess["id"],
                      benchmark=bench["name"], benchmark_id=bench["id"], run_ids=run_ids)


def _json_or_none(value: Any) -> str | None:
    return None if value is None else canonical_json(value)


_JSON_COLUMNS = {"command_line", "protocol", "environment", "system_checks", "load_before",
                 "load_after", "metadata", "argv", "parameters", "extra", "data"}


def _decode(row: dict) -> dict:
    for k in _JSON_COLUMNS & row.keys():
        if isinstance(row[k], str):
            try:
                row[k] = json.loads(row[k])
            except json.JSONDecodeError:
                pass
    return row


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
