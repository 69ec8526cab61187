"""Opening a store and its transactions, on any backend.

:meth:`StoreConnection.open` hands a ``--db`` value to the backend that claims it
(:mod:`benchlab.store.backends`: an SQLite file, or a PostgreSQL database); the backend connects
and :meth:`StoreConnection.adopt` migrates the schema. Transactions (savepoints, rollback on
every exit path, a signal's exit included) and the translation of database errors into one-line
UserErrors are the same on every backend.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from benchlab.digests import sha256_hex
from benchlab.errors import UserError
from benchlab.store.paths import (  # noqa: F401  (refuse_output_path, store_files re-exported)
    refuse_output_path,
    store_files,
)
from benchlab.store.sample_blocks import insert_samples
from benchlab.store.schema import MIGRATIONS, SCHEMA_VERSION

DEFAULT_DB = "benchlab.db"
BUSY_TIMEOUT_MS = 5000


def utc_now() -> str:
    """Current UTC time as ISO 8601 with a ``Z`` suffix and microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal data give equal text (and digests)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value).encode())


def user_db_path() -> str:
    """The per-user store: ``$XDG_DATA_HOME/benchlab/benchlab.db`` (default
    ``~/.local/share/benchlab/benchlab.db``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "benchlab", DEFAULT_DB)


def default_db_path() -> str:
    """The store to use when ``--db`` is not given.

    ``$BENCHLAB_DB`` if set; else ``./benchlab.db`` when it exists (a project-local store takes
    precedence); else the per-user store :func:`user_db_path`, so results are found from any
    directory. The per-user directory is created by :meth:`StoreConnection.open` when writing.
    """
    env = os.environ.get("BENCHLAB_DB")
    if env:
        return env
    if os.path.exists(DEFAULT_DB):
        return DEFAULT_DB
    return user_db_path()


def translate_error(exc: sqlite3.Error, path: str) -> UserError:
    """A one-line UserError for an SQLite error on the store at ``path``."""
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
    if "not a database" in msg or "malformed" in msg or "corrupt" in msg:
        return UserError(
            f"{path} is not a valid benchlab database ({exc}); use --db PATH to choose another file")
    if "permission denied" in msg:  # a team store's role without the grants it needs
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "permission denied"
        return UserError(f"database {path}: {first}; your PostgreSQL role lacks the grants of "
                         f"a benchlab writer or reader: ask the store's admin to grant them "
                         f"(docs/team-store.md)")
    if "disk i/o" in msg or "disk is full" in msg:
        return UserError(f"cannot write database {path}: {exc}; free space or use --db PATH")
    return UserError(f"database {path}: {exc}")


class StoreConnection:
    """The connection half of :class:`~benchlab.store.db.Store`: open, migrate, transactions."""

    def __init__(self, conn: Any, path: str, readonly: bool, backend: Any,
                 close: Callable[[Any], None] | None = None):
        """``conn``: the backend's open connection (an ``sqlite3.Connection``, or one that
        behaves as one); ``backend``: its :class:`~benchlab.store.backends.StoreBackend`;
        ``close(conn)``: what closes it (default ``conn.close()``). Stores are made by
        :meth:`open`."""
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self.backend = backend
        self._savepoints = 0
        # closes the connection when the store is freed or at exit, whichever comes first
        self._closer = weakref.finalize(self, close or type(conn).close, conn)

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, readonly: bool = False):
        """Open (creating and migrating when writable) the store at ``path`` (default:
        :func:`default_db_path`) with the backend that claims it
        (:func:`benchlab.store.backends.backend_for`: a PostgreSQL URL or libpq keyword string,
        else an SQLite file). Raises :class:`UserError` with a one-line reason when it cannot
        be opened (see each backend's ``open``)."""
        from benchlab.store.backends import backend_for

        path = os.fspath(path) if path is not None else default_db_path()
        return backend_for(path).open(cls, path, readonly)

    @classmethod
    def adopt(cls, conn: Any, path: str, readonly: bool, backend: Any,
              close: Callable[[Any], None] | None = None):
        """The store over ``conn``, an open connection of ``backend`` (``path``: its name in
        messages), migrated to this benchlab's schema; ``conn`` is closed on any error.
        ``close(conn)`` closes it when the store is closed, freed or left open at exit
        (default: ``conn.close()``)."""
        store = cls(conn, path, readonly, backend, close)
        try:
            store._migrate()
        except sqlite3.Error as exc:
            conn.close()
            raise translate_error(exc, path) from None
        except BaseException:
            conn.close()
            raise
        return store

    def insert_samples(self, run_id: int, metric: str, values: Any) -> None:
        """Write one run's samples of ``metric`` (seq 0, 1, ...; values in the metric's unit).

        The one bulk path of every writer: the values go in as blocks of little-endian doubles
        (:mod:`benchlab.store.sample_blocks`), a few rows for a million samples, on SQLite and
        PostgreSQL alike. Raises ValueError for NaN.
        """
        insert_samples(self.conn, run_id, metric, values)

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
                            f"run any writing command on it once (e.g. `benchlab run --db "
                            f"{self.path} -r 1 true`) or make it writable")
        for target in range(version, SCHEMA_VERSION):
            with self.transaction():
                if self.schema_version() > target:
                    continue  # another process (a team store's other client) migrated meanwhile
                step = MIGRATIONS[target]
                if callable(step):
                    step(self.conn)
                else:
                    for statement in _split_sql(step):
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {target + 1}")

    def close(self) -> None:
        """Close the connection (the WAL is checkpointed by SQLite when the last one closes).

        A store dropped without it is closed as it is freed, and one still open at exit by the
        atexit handlers (``weakref.finalize``): its connection is in a reference cycle with its
        statement cache, so it would otherwise wait for the cyclic garbage collector (or the
        interpreter's teardown, which the command line's fast exit skips).
        """
        self._closer()  # the connection's close, once

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _undo_savepoint(self, name: str) -> None:
        # The outer transaction may be gone already: a signal's exit rolled it back, or the
        # connection closed before an abandoned thread's generator was finalised. Then the
        # savepoint went with it, and there is nothing left to undo; the original exception
        # (SystemExit, GeneratorExit, ...) must not turn into "no such savepoint".
        try:
            if not self.conn.in_transaction:
                return
            self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
        except sqlite3.ProgrammingError:  # closed connection
            return
        except sqlite3.OperationalError as exc:
            if "no such savepoint" not in str(exc):
                raise

    def _rollback_if_open(self) -> None:
        # A connection closed under the transaction (a signal's exit path) has nothing to roll
        # back; the exception that is on its way out must stay the one the caller sees.
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.ProgrammingError:
            pass

    def transaction(self) -> "_Transaction":
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error); errors become UserError.

        Nested use runs inside the outer transaction as a SAVEPOINT, so a whole import (many
        writer calls) commits once or not at all. Use it as ``with store.transaction() as conn``.
        """
        return _Transaction(self)

    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def integrity_ok(self) -> bool:
        """True when ``PRAGMA integrity_check`` answers ``ok``."""
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def env_key(self) -> bytes | None:
        """The key of environment-variable digests: this user's key file, never the store
        (:mod:`benchlab.store.user_key`); None when no key file can be made (names only).

        An old store's ``store_meta`` key is adopted as the user's key when the user has none,
        and removed from the store (a reader of the store must not get it).
        """
        from benchlab.store.user_key import user_env_key

        row = self.conn.execute("SELECT value FROM store_meta WHERE key = 'env_key'").fetchone()
        legacy = bytes(row[0]) if row is not None else None
        key = user_env_key(adopt=legacy)
        if legacy is not None and not self.readonly:
            with suppress(UserError):  # a role without DELETE: the admin removes it
                with self.transaction() as c:
                    c.execute("DELETE FROM store_meta WHERE key = 'env_key'")
        return key

    def store_files(self) -> list[str]:
        """Absolute paths of the database and its ``-wal``, ``-shm`` and ``-journal`` files."""
        return self.backend.files(self.path)

    def refuse_output_path(self, path: str | os.PathLike, what: str) -> None:
        """Raise UserError when writing ``what`` (e.g. ``"--samples-csv"``) to ``path`` would
        overwrite this store or one of its -wal/-shm files (symlinks and hard links resolved)."""
        if self.backend.files(self.path):
            refuse_output_path(path, self.path, what)


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class _Transaction:
    """The context manager :meth:`StoreConnection.transaction` returns.

    A class, not a generator: a Ctrl-C/SIGTERM raised as ``BEGIN IMMEDIATE`` returns (a signal
    that came while it waited for the write lock) must not leave the transaction open. In a
    generator it could be raised after the generator had begun the transaction but before the
    ``with`` body started, so nothing ever ended it: every later write (the session's
    "interrupted") became a savepoint inside it, rolled back at exit, and an interrupted study
    read "crashed". Here ``__enter__`` ends what it began on any exception, and once it has
    returned, ``with`` guarantees ``__exit__``.
    """

    def __init__(self, owner: StoreConnection):
        self.owner = owner
        self.savepoint: str | None = None

    def __enter__(self) -> sqlite3.Connection:
        owner, conn = self.owner, self.owner.conn
        if conn.in_transaction:
            owner._savepoints += 1
            self.savepoint = f"sp{owner._savepoints}"
            try:
                conn.execute(f"SAVEPOINT {self.savepoint}")
            except BaseException:
                owner._savepoints -= 1
                raise
            return conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate_error(exc, owner.path) from None
        except BaseException:
            owner._rollback_if_open()  # the signal came as BEGIN returned: the lock is ours
            raise
        return conn

    def __exit__(self, exc_type, exc, tb) -> None:
        owner = self.owner
        if self.savepoint is not None:
            try:
                if exc_type is None:
                    owner.conn.execute(f"RELEASE {self.savepoint}")
                else:
                    owner._undo_savepoint(self.savepoint)
            finally:
                owner._savepoints -= 1
            return
        if exc_type is None:
            try:
                owner.conn.execute("COMMIT")
            except sqlite3.Error as error:
                owner._rollback_if_open()
                raise translate_error(error, owner.path) from None
            return
        owner._rollback_if_open()
        if issubclass(exc_type, sqlite3.Error) and "permission denied" in str(exc).lower():
            # a team store role's missing grant
            raise translate_error(exc, owner.path) from None
