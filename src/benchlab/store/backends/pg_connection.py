"""The store on PostgreSQL: a connection that speaks the SQLite dialect the store is written in.

The store's SQL (rows, queries, the session writer, the import formats) is written once, for
SQLite. Rather than fork every statement, :class:`PgConnection` presents the subset of
``sqlite3.Connection`` the store uses and translates each statement once (cached):

- ``?`` placeholders become ``%s`` (a literal ``%`` is doubled);
- ``INSERT INTO`` a table with an ``id`` gets ``RETURNING id`` so ``cursor.lastrowid`` works;
- ``INSERT OR IGNORE`` / ``INSERT OR REPLACE`` become ``ON CONFLICT DO NOTHING`` / an upsert on
  the table's primary key;
- DDL: ``INTEGER PRIMARY KEY`` becomes an identity column, ``INTEGER`` ``BIGINT`` (times are ns),
  ``REAL`` ``DOUBLE PRECISION``, ``BLOB`` ``BYTEA``, ``WITHOUT ROWID`` goes;
- ``PRAGMA user_version`` reads and writes the table ``benchlab_schema_version``; the integrity
  pragmas answer ``ok`` (PostgreSQL keeps its own consistency) and the WAL/sync pragmas are
  SQLite's alone;
- ``BEGIN IMMEDIATE`` becomes ``BEGIN`` plus a transaction-scoped advisory lock. The store's
  writes check-then-insert (environments by digest, the next run ``seq``, the resume claim),
  which SQLite makes safe by admitting one writer at a time; the same lock gives PostgreSQL the
  same guarantee across machines. Write transactions are one run each (milliseconds), and
  readers are never blocked (MVCC).

psycopg errors are raised as the matching ``sqlite3`` exception classes, so the store keeps one
error vocabulary (``sqlite3.IntegrityError`` for a duplicate benchmark name on either backend).
This module is imported only when a ``postgresql://`` URL is opened: psycopg never loads
otherwise.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from typing import Any, Iterable, Iterator, Sequence

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row

from benchlab.errors import UserError

#: Key of the advisory lock every write transaction takes (``BEGIN IMMEDIATE``): any constant
#: 64-bit number unlikely to clash with another application's locks in the same database.
WRITE_LOCK_KEY = 0x62656E63686C6162  # "benchlab"

#: Tables whose rows have an ``id`` identity column: inserts return it as ``lastrowid``.
ID_TABLES = frozenset({"environments", "setups", "sessions", "benchmarks", "runs"})
#: Primary keys of the tables without ``id`` (the conflict target of ``INSERT OR REPLACE``).
CONFLICT_KEYS = {"metrics": ("session_id", "name"), "measurements": ("run_id", "source", "name"),
                 "store_meta": ("key",)}

VERSION_TABLE = "benchlab_schema_version"


def redact(url: str) -> str:
    """``url`` (a URL or a libpq keyword string) with any password replaced by ``***`` (for
    messages and ``Store.path``)."""
    url = re.sub(r"^(postgres(?:ql)?://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"(?i)(\b(?:password|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)",
                  r"\1***", url)


class _Row(tuple):
    """A result row addressable by index and by column name, like ``sqlite3.Row``."""

    __slots__ = ()
    _names: tuple[str, ...] = ()
    _index: dict[str, int] = {}

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """Column names, in order (``dict(row)`` uses them)."""
        return list(self._names)


@functools.lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type:
    return type("Row", (_Row,), {"__slots__": (), "_names": names,
                                 "_index": {n: i for i, n in enumerate(names)}})


def _named_row(cursor: Any):
    names = tuple(d.name for d in cursor.description or ())
    cls = _row_class(names)
    return cls


def _sqlite_error(exc: psycopg.Error) -> sqlite3.Error:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, psycopg.IntegrityError):
        return sqlite3.IntegrityError(text)
    if isinstance(exc, psycopg.OperationalError):
        return sqlite3.OperationalError(text)
    return sqlite3.DatabaseError(text)


def _placeholders(sql: str) -> str:
    """``?`` -> ``%s`` and ``%`` -> ``%%`` outside quoted text."""
    out, quote = [], None
    for ch in sql:
        if quote:
            if ch == quote:
                quote = None
            out.append("%%" if ch == "%" else ch)
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


#: Statements run right after a table is created. Sample blocks are doubles that barely
#: compress: PostgreSQL's default (EXTENDED) storage tries pglz on every 512 KiB block anyway,
#: which took two thirds of a million-sample ingest's writes (0.15 s -> 0.05 s without it).
#: SQLite stores them uncompressed too. (PostgreSQL 15 has no STORAGE clause in CREATE TABLE.)
_AFTER_CREATE = {
    "sample_blocks": "ALTER TABLE sample_blocks ALTER COLUMN data SET STORAGE EXTERNAL",
}


def translate_ddl(sql: str) -> str:
    """A SQLite ``CREATE``/``ALTER`` statement of the schema in PostgreSQL's dialect (with the
    table's :data:`_AFTER_CREATE` statement appended: no parameters, so psycopg runs both)."""
    sql = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                 sql)
    sql = re.sub(r"\bINTEGER\b", "BIGINT", sql)
    sql = re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)
    sql = re.sub(r"\bBLOB\b", "BYTEA", sql)
    sql = re.sub(r"\)\s*WITHOUT ROWID\s*$", ")", sql.strip())
    created = re.match(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql, re.IGNORECASE)
    if created and created.group(1) in _AFTER_CREATE:
        sql = f"{sql}; {_AFTER_CREATE[created.group(1)]}"
    return sql


_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)\s*\(([^)]*)\)",
                     re.IGNORECASE)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, bool]:
    """One store statement in PostgreSQL's dialect: (statement, returns the new row's id)."""
    head = sql.lstrip()[:12].upper()
    if head.startswith(("CREATE", "ALTER")):
        sql = translate_ddl(sql)
    match = _INSERT.match(sql)
    returns_id = False
    if match:
        action, table, cols = match.group(1), match.group(2).lower(), match.group(3)
        if action:
            sql = re.sub(r"^\s*INSERT\s+OR\s+\w+\s+INTO", "INSERT INTO", sql, count=1,
                         flags=re.IGNORECASE)
            if action.upper() == "IGNORE":
                sql += " ON CONFLICT DO NOTHING"
            else:
                keys = CONFLICT_KEYS[table]
                names = [c.strip() for c in cols.split(",")]
                updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in names if c not in keys)
                sql += f" ON CONFLICT ({', '.join(keys)}) " + \
                    (f"DO UPDATE SET {updates}" if updates else "DO NOTHING")
        if table in ID_TABLES and "RETURNING" not in sql.upper():
            sql += " RETURNING id"
            returns_id = True
    return _placeholders(sql), returns_id


def _params(params: Sequence[Any] | None) -> tuple:
    # sqlite3 stores a Python bool as 0/1; PostgreSQL would refuse a boolean in a BIGINT column
    if not params:
        return ()
    return tuple(int(p) if isinstance(p, bool) else p for p in params)


class _Rows:
    """The answer to a translated PRAGMA: a fixed list of rows, read like a cursor."""

    def __init__(self, rows: list[tuple]):
        self._rows = rows
        self.lastrowid = None
        self.description = None

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchall(self):
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self):
        return iter(self.fetchall())


class PgCursor:
    """A cursor with ``sqlite3.Cursor``'s shape: ``execute``, ``fetch*``, ``lastrowid``."""

    def __init__(self, owner: "PgConnection"):
        self._owner = owner
        self._cur = owner.raw.cursor(row_factory=_named_row)
        self.lastrowid: int | None = None
        self._pending: list = []

    @property
    def row_factory(self):
        return self._cur.row_factory

    @row_factory.setter
    def row_factory(self, factory) -> None:
        # ``None`` asks for plain tuples, as on sqlite3 (the cheap path for a million samples)
        self._cur.row_factory = tuple_row if factory is None else _named_row

    @property
    def description(self):
        return self._cur.description

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> "PgCursor | _Rows":
        special = self._owner.special(sql)
        if special is not None:
            return special
        text, returns_id = translate(sql)
        try:
            self._cur.execute(text, _params(params))
            if returns_id:
                self.lastrowid = int(self._cur.fetchone()[0])
        except psycopg.Error as exc:
            raise _sqlite_error(exc) from None
        return self

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> "PgCursor":
        text, _ = translate(sql)
        try:
            self._cur.executemany(text, (_params(p) for p in seq))
        except psycopg.Error as exc:
            raise _sqlite_error(exc) from None
        return self

    def fetchone(self):
        return self._cur.fetchone() if self._cur.description else None

    def fetchall(self) -> list:
        return self._cur.fetchall() if self._cur.description else []

    def __iter__(self) -> Iterator:
        return iter(self._cur) if self._cur.description else iter(())


#: PostgreSQL types of the columns :meth:`PgConnection.copy_rows` writes (binary COPY needs
#: them; they are the schema's, see ``store/schema.py``).
_COPY_TYPES = {"sample_blocks": {"run_id": "int8", "metric": "text", "first_seq": "int8",
                                 "n": "int8", "data": "bytea"}}


class PgConnection:
    """A psycopg connection presenting the ``sqlite3.Connection`` subset the store uses."""

    def __init__(self, raw: psycopg.Connection, readonly: bool):
        self.raw = raw
        self.readonly = readonly
        self.row_factory = None  # set by the store to sqlite3.Row; rows here always have names

    @property
    def in_transaction(self) -> bool:
        """True inside BEGIN ... COMMIT (also in a failed transaction awaiting ROLLBACK)."""
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def cursor(self) -> PgCursor:
        return PgCursor(self)

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        return PgCursor(self).execute(sql, params)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]):
        return PgCursor(self).executemany(sql, seq)

    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Append ``rows`` to ``table`` with ``COPY ... FROM STDIN`` (binary): one statement
        and one stream for all of them, where ``executemany`` sends a statement per row.
        Runs in the caller's transaction."""
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        try:
            with self.raw.cursor() as cur, cur.copy(sql) as copy:
                copy.set_types([_COPY_TYPES[table][c] for c in columns])
                for row in rows:
                    copy.write_row(row)
        except psycopg.Error as exc:
            raise _sqlite_error(exc) from None

    def close(self) -> None:
        self.raw.close()

    def special(self, sql: str) -> "_Rows | None":
        """Statements with no direct PostgreSQL equivalent (PRAGMA, BEGIN IMMEDIATE), or None."""
        word = sql.lstrip()[:16].upper()
        if word.startswith("BEGIN"):
            try:
                self.raw.execute("BEGIN")
                if not self.readonly:
                    self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            except psycopg.Error as exc:
                raise _sqlite_error(exc) from None
            return _Rows([])
        if not word.startswith("PRAGMA"):
            return None
        body = sql.strip()[len("PRAGMA"):].strip().lower()
        try:
            if body == "user_version":
                return _Rows([(self.schema_version(),)])
            if body.startswith("user_version"):
                version = int(body.split("=", 1)[1])
                self.raw.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} "
                                 f"(version INTEGER NOT NULL)")
                self.raw.execute(f"DELETE FROM {VERSION_TABLE}")
                self.raw.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (version,))
                return _Rows([])
        except psycopg.Error as exc:
            raise _sqlite_error(exc) from None
        if body.startswith(("quick_check", "integrity_check")):
            return _Rows([("ok",)])
        return _Rows([])

    def schema_version(self) -> int:
        """The schema version stored in the database (0 for an empty database)."""
        exists = self.raw.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()[0]
        if exists is None:
            return 0
        row = self.raw.execute(f"SELECT MAX(version) FROM {VERSION_TABLE}").fetchone()
        return int(row[0] or 0)


def connect(url: str, readonly: bool) -> PgConnection:
    """Connect to the PostgreSQL database at ``url`` (a URL or a libpq keyword string;
    autocommit: the store opens its own transactions). Raises a one-line UserError when the
    string is malformed or the server cannot be reached."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)  # libpq's parser: a malformed string is not a connection failure
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.ProgrammingError as exc:
        raise _not_usable(url, exc) from None
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"cannot connect to PostgreSQL database {redact(url)}: {reason}; check "
                        f"the server, user and database name in --db or BENCHLAB_DB") from None
    except Exception as exc:  # anything else libpq's parser raises
        raise _not_usable(url, exc) from None
    if readonly:
        raw.execute("SET default_transaction_read_only = on")
    return PgConnection(raw, readonly)


def _not_usable(url: str, exc: Exception) -> UserError:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return UserError(f"--db {redact(url)} is not a usable PostgreSQL URL or connection string "
                     f"({reason}); use postgresql://USER@HOST[:PORT]/DATABASE, 'host=HOST "
                     f"dbname=DATABASE user=USER', or ./NAME for an SQLite file")
