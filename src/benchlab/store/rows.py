"""Low-level row writes of the store: environments, setups, sessions, benchmarks, runs.

Sessions are written through :class:`benchlab.store.writer.SessionWriter`, which records who
owns a running session; these methods are its building blocks (and what imports use inside
one transaction). Each call commits on its own unless it runs inside ``Store.transaction()``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from benchlab.errors import UserError
from benchlab.records import record
from benchlab.store.connection import canonical_json, digest_of, translate_error, utc_now

if TYPE_CHECKING:
    import numpy as np

RUN_COLUMNS = (
    "status", "exit_code", "signal", "error", "start_unix_ns", "start_mono_ns", "end_mono_ns",
    "wall_ns", "user_ns", "sys_ns", "max_rss_kib", "minflt", "majflt", "nvcsw", "nivcsw",
    "shell_overhead_ns", "cpus", "spawn_method", "extra",
)



#: Types of a run's values bound as they are (anything else: JSON for a dict, list or tuple).
#: Run statuses whose harness wall time is a complete measurement of the command
#: (a timed-out run's wall time is cut short; an 'error' run never ran).
TIMED_STATUSES = ("ok", "failed", "signaled")
_PLAIN = frozenset({int, str, float, type(None), bool, bytes})


def corrected_wall_ns(run: Any) -> int | None:
    """A run's wall time less the shell's measured start-up cost, ns (None without a time).

    Clamped at 0, as hyperfine does: the subtracted cost is a median, so a command faster
    than an empty shell (a builtin such as ``true``) would otherwise get a negative time. The
    raw time stays in ``wall_ns``; :func:`corrected_wall_sql` is the same rule in SQL.
    """
    wall = run["wall_ns"]
    if wall is None:
        return None
    try:
        cost = run["shell_overhead_ns"] or 0
    except (KeyError, IndexError):  # a document without the field (sqlite3.Row: IndexError)
        cost = 0
    return max(0, wall - cost)


def corrected_wall_sql(prefix: str = "") -> str:
    """:func:`corrected_wall_ns` as an SQL expression over the runs table (SQLite and
    PostgreSQL); ``prefix`` is the table's alias with its dot (``"r."``), or empty. NULL when
    ``wall_ns`` is NULL."""
    wall, cost = f"{prefix}wall_ns", f"COALESCE({prefix}shell_overhead_ns, 0)"
    return f"(CASE WHEN {wall} < {cost} THEN 0 ELSE {wall} - {cost} END)"


#: The columns of a run every INSERT names before the harness fields.
_RUN_KEYS = ("benchmark_id", "session_id", "seq", "iteration", "warmup", "worker", "setup_id")

#: The INSERT of a run by its fields' names and which of all its values are None (a session
#: writes one text per run, so SQLite's statement cache finds it prepared).
_RUN_INSERTS: dict[tuple[tuple[str, ...], tuple[bool, ...]], str] = {}


def _run_insert(names: tuple[str, ...], missing: tuple[bool, ...]) -> str:
    """The INSERT statement of a run with the harness columns ``names`` (in this order), less
    the columns whose value is None (``missing``, over ``_RUN_KEYS`` then ``names``): those
    are left to their default, NULL. Binding None costs Python's sqlite3 two raised and
    cleared AttributeErrors a value (its adapter lookup), ~4,000 instructions; a run has about
    five. A NOT NULL column left out fails as binding NULL did. ValueError for a name that is
    not in ``RUN_COLUMNS``."""
    key = (names, missing)
    sql = _RUN_INSERTS.get(key)
    if sql is None:
        bad = set(names) - set(RUN_COLUMNS)
        if bad:
            raise ValueError(f"unknown run fields: {sorted(bad)}")
        cols = [c for c, gone in zip((*_RUN_KEYS, *names), missing) if not gone]
        sql = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        _RUN_INSERTS[key] = sql
    return sql


#: Session columns :meth:`RowWriter.update_session` may set.
SESSION_FIELDS = frozenset({
    "name", "status", "finished_utc", "protocol", "system_checks", "load_after", "metadata",
    "environment", "environment_id", "source", "owner_pid", "owner_host", "owner_start",
    "parent_id", "input_digest"})


@record(frozen=True)
class SessionRef:
    """Identifies a session: ``id`` is the row id, ``uid`` the short id users type."""

    id: int
    uid: str


def json_or_none(value: Any) -> str | None:
    """Canonical JSON of ``value``, or None for None (how JSON columns are stored)."""
    return None if value is None else canonical_json(value)


class RowWriter:
    """Write methods of :class:`~benchlab.store.db.Store` (mixed into it)."""

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
                       status: str = "running", parent_id: int | None = None,
                       input_digest: str | None = None,
                       owner: Mapping[str, Any] | None = None) -> SessionRef:
        """Create a session row and commit it at once; return its reference.

        ``owner`` holds ``owner_pid``, ``owner_host`` and ``owner_start`` (see
        :mod:`benchlab.store.writer`); use ``SessionWriter.create`` rather than this.
        """
        owner = owner or {}
        with self.transaction() as c:
            for _ in range(10):
                uid = os.urandom(4).hex()  # secrets.token_hex(4), without secrets' imports
                if not c.execute("SELECT 1 FROM sessions WHERE uid = ?", (uid,)).fetchone():
                    break
            cur = c.execute(
                "INSERT INTO sessions (uid, name, kind, status, created_utc, command_line, protocol,"
                " environment_id, environment, system_checks, load_before, metadata, source,"
                " parent_id, input_digest, owner_pid, owner_host, owner_start)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (uid, name, kind, status, utc_now(), json_or_none(command_line),
                 json_or_none(protocol), environment_id, json_or_none(environment),
                 json_or_none(system_checks), json_or_none(load_before),
                 json_or_none(metadata), source, parent_id, input_digest,
                 owner.get("owner_pid"), owner.get("owner_host"), owner.get("owner_start")))
            return SessionRef(int(cur.lastrowid), uid)

    def update_session(self, session_id: int, **fields: Any) -> None:
        """Set session columns (JSON-encoding dicts and lists) and commit."""
        bad = set(fields) - SESSION_FIELDS
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
                    (session_id, name, command, json_or_none(argv), json_or_none(parameters),
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
        vals: list[Any] = [benchmark_id, session_id, seq, iteration, int(bool(warmup)), worker,
                           setup_id]
        vals += [v if type(v) in _PLAIN else canonical_json(v)
                 if isinstance(v, (dict, list, tuple)) else v for v in fields.values()]
        missing = tuple([v is None for v in vals])
        sql = _run_insert(tuple(fields), missing)
        if True in missing:
            vals = [v for v in vals if v is not None]
        if not samples and not measurements and type(self.conn) is sqlite3.Connection \
                and not self.conn.in_transaction:
            # one statement, which SQLite commits as its own transaction: as durable as
            # BEGIN IMMEDIATE ... COMMIT, two statements fewer a run; a busy store waits as
            # long (busy_timeout), and its lock and disk errors become the same UserError
            try:
                return int(self.conn.execute(sql, vals).lastrowid)
            except sqlite3.OperationalError as exc:
                raise translate_error(exc, self.path) from None
        with self.transaction() as c:
            cur = c.execute(sql, vals)
            run_id = int(cur.lastrowid)
            for metric, values in (samples or {}).items():
                self.insert_samples(run_id, metric, values)
            for m in measurements:
                c.execute("INSERT OR REPLACE INTO measurements (run_id, source, name, value, unit,"
                          " status, note) VALUES (?,?,?,?,?,?,?)",
                          (run_id, m["source"], m["name"], m.get("value"), m.get("unit"),
                           m.get("status", "ok"), m.get("note")))
        return run_id

    def add_samples_bulk(self, run_id: int, samples: Mapping[str, Sequence[float] | np.ndarray]) -> None:
        """Insert many samples of one existing run (values converted in one go by ``tolist``,
        about 3x faster than one by one for 100,000 values)."""
        with self.transaction():
            for metric, values in samples.items():
                # chunked (SQLite) or COPY (PostgreSQL): StoreConnection.insert_samples
                self.insert_samples(run_id, metric, values)
