"""Opening a store safely: path checks, pragmas, a quick integrity check, migrations.

Durability contract: each run is written in its own transaction, committed as soon as the run
ends. The database is in WAL mode with ``synchronous=NORMAL``: a committed transaction survives
a crash or ``kill -9`` of benchlab (it is in the WAL, which the OS holds); only a power loss or
kernel crash can lose the last few commits. That trade keeps fsync traffic off the machine while
benchmarks run.

What a session still syncs (four ``fdatasync``, none per run): the last connection's close
checkpoints the WAL into the store and deletes it (SQLite syncs the WAL, then the store: two);
so the next session's first commit starts a new WAL file, and SQLite syncs its header (a WAL
restarted without that can be replayed out of order after a power loss: a corrupt store,
SQLite's ticket ff5be73dee) and the directory holding the new file (two more). They are what
``synchronous=NORMAL`` needs to keep the store uncorrupted across a power loss; ``OFF`` would
drop them and that guarantee, and the commit of each run (``kill -9`` loses nothing) needs
none of them. Keeping the WAL between sessions (no checkpoint at close) would spare all four
until the WAL reaches its auto-checkpoint size, but Python 3.11's ``sqlite3`` cannot set
``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE``, and a WAL left behind would also mean "another
connection may still be writing" to the checked-store note (:mod:`benchlab.store.verified`).

Opening never writes into a file it has not checked: a file that is not SQLite, or fails
``PRAGMA quick_check``, is refused (one line) before WAL mode or a migration touches it.

Long because: opening, migrating and the transaction's rules (savepoints, rollback on every exit
path, a signal's exit included) are one concern, what may happen to the file.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
import weakref
from contextlib import suppress
from pathlib import Path
from typing import Any

from benchlab.digests import sha256_hex
from benchlab.errors import UserError
from benchlab.store import verified
from benchlab.store.paths import (  # noqa: F401  (refuse_output_path, store_files re-exported)
    is_postgres_target,
    refuse_output_path,
    store_files,
)
from benchlab.store.sample_blocks import insert_samples
from benchlab.store.schema import MIGRATIONS, SCHEMA_VERSION

DEFAULT_DB = "benchlab.db"
BUSY_TIMEOUT_MS = 5000
SQLITE_MAGIC = b"SQLite format 3\x00"


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


def _check_path(path: str, readonly: bool) -> tuple[Path, bool]:
    """Validate ``path`` before SQLite sees it; return (path, exists)."""
    try:
        return _check_path_unguarded(path, readonly)
    except PermissionError:
        raise UserError(f"cannot access database {path}: permission denied on it or a directory "
                        f"above it; fix the permissions or use --db PATH") from None
    except OSError as exc:
        raise UserError(f"cannot access database {path}: {exc.strerror or exc}; "
                        f"use --db PATH") from None


def _check_path_unguarded(path: str, readonly: bool) -> tuple[Path, bool]:
    if not path.strip():
        raise UserError("--db is empty; give a database file, e.g. --db results.db, "
                        "or leave --db out to use the default store")
    if path.strip() == ":memory:":
        # SQLite's in-memory name: here it would become a file called ':memory:' in the
        # current directory, and a store that vanishes on exit holds no result anyway.
        raise UserError("--db ':memory:' is not supported (benchlab keeps results in a file); "
                        "give a database file, e.g. --db results.db (./:memory: for that name)")
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{path} is a directory, not a database file; use --db DIR/benchlab.db")
    exists = p.exists()
    if exists:
        if not os.access(p, os.R_OK):
            raise UserError(f"database {path} is not readable (permission denied); "
                            f"make it readable (chmod u+r) or use --db PATH")
        try:
            with open(p, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise UserError(f"cannot read database {path}: {exc.strerror or exc}; "
                            f"check the file or use --db PATH") from None
        if head and head != SQLITE_MAGIC:
            raise UserError(f"{path} is not an SQLite database (it starts with {head[:8]!r}); "
                            f"nothing was written to it; use --db PATH to choose a database file")
    elif readonly:
        raise UserError(f"no database at {path}; run `benchlab run ...` first or pass --db PATH")
    return p, exists


def _read_only_fs(directory: Path) -> bool:
    """True when ``directory`` is on a file system mounted read-only (root included)."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class StoreConnection:
    """The connection half of :class:`~benchlab.store.db.Store`: open, migrate, transactions."""

    def __init__(self, conn: sqlite3.Connection, path: str, readonly: bool,
                 sound_at: int | None = None):
        """``sound_at``: the connection's ``PRAGMA data_version`` when the SQLite file at
        ``path`` was found sound (checked whole, remembered so, or created); the close then
        remembers it as checked (:func:`_close_remembering`). None: nothing is remembered."""
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self._savepoints = 0
        # closes the connection when the store is freed or at exit, whichever comes first
        if sound_at is None:
            self._closer = weakref.finalize(self, conn.close)
        else:
            # [data_version, the file's identity once opened (set by open)]
            self._soundness: list[Any] = [sound_at, None]
            self._closer = weakref.finalize(self, _close_remembering, conn, path,
                                            self._soundness, os.getpid())

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, readonly: bool = False):
        """Open (creating and migrating when writable) the database at ``path``.

        Raises :class:`UserError` with a one-line reason for an empty path, a missing directory,
        a file that is not SQLite or fails ``PRAGMA quick_check`` (never written into), a
        locked, unreadable or read-only file, or a directory where the WAL cannot be written.
        A readable store in a read-only directory opens read-only for reading commands.
        """
        path = os.fspath(path) if path is not None else default_db_path()
        if is_postgres_target(path):  # a URL or a libpq keyword string (host=... dbname=...)
            return cls._open_postgres(path, readonly)
        p, exists = _check_path(path, readonly)
        if readonly:
            uri = f"file:{p.resolve()}?mode=ro"
            parent = p.resolve().parent
            if not os.access(parent, os.W_OK) and not os.path.exists(f"{p.resolve()}-wal"):
                # A WAL store in a read-only directory cannot get the -shm file mode=ro needs;
                # with no -wal file there, nobody can be writing it: reading it as immutable
                # is exact.
                uri += "&immutable=1"
        else:
            parent = p.resolve().parent
            if not parent.is_dir():
                if os.path.abspath(path) == os.path.abspath(user_db_path()):
                    # the per-user default store: its directory is ours to create
                    try:
                        parent.mkdir(parents=True, exist_ok=True)
                    except OSError as exc:
                        raise UserError(f"cannot create {parent}: {exc.strerror or exc}; "
                                        f"use --db PATH in a writable directory") from None
                else:
                    raise UserError(f"directory {parent} does not exist; create it "
                                    f"(mkdir -p {parent}) or use --db PATH")
            if _read_only_fs(parent):
                raise UserError(
                    f"directory {parent} is not writable (a read-only file system); "
                    f"{'reading commands work, but writing needs the -wal file beside the store: copy it to a writable place and pass --db COPY' if exists else 'use --db PATH in a writable directory'}")
            if exists and not os.access(p, os.W_OK):
                raise UserError(
                    f"database {path} is read-only; make it writable (chmod u+w) or use --db PATH")
            # WAL needs to create -wal/-shm files beside the database.
            if not os.access(parent, os.W_OK | os.X_OK):
                what = ("the database is readable, but writing needs its -wal file beside it: "
                        "make the directory writable or copy the database elsewhere and pass "
                        "--db COPY" if exists else "use --db PATH in a writable directory")
                raise UserError(f"directory {parent} is not writable; {what}")
            uri = f"file:{p.resolve()}"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        except sqlite3.Error as exc:
            raise translate_error(exc, path) from None
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            sound_at = _found_sound(conn, path, exists)
            conn.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise UserError(f"database {path} cannot use WAL journaling (got {mode}); "
                                    f"use a local file system for --db")
                conn.execute("PRAGMA synchronous = NORMAL")
                if not exists:  # the switch of a new file to WAL counts as a change
                    sound_at = _data_version(conn)
            store = cls(conn, path, readonly, sound_at=sound_at)
            store._migrate()
            if sound_at is not None:  # this session's writes go to the WAL, not to this file
                store._soundness[1] = verified.identity(path)[0]
        except sqlite3.Error as exc:
            conn.close()
            raise translate_error(exc, path) from None
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def _open_postgres(cls, url: str, readonly: bool):
        """Open a team store on PostgreSQL (psycopg is imported here, never before)."""
        from benchlab.errors import require_extra

        require_extra("psycopg", "postgres", load=False)
        from benchlab.store.backends.postgres import connect, redact

        conn = connect(url, readonly)
        store = cls(conn, redact(url), readonly)  # type: ignore[arg-type]
        try:
            store._migrate()
        except sqlite3.Error as exc:
            conn.close()
            raise translate_error(exc, store.path) from None
        except BaseException:
            conn.close()
            raise
        return store

    @property
    def is_postgres(self) -> bool:
        """True for a team store on PostgreSQL, False for an SQLite file."""
        return not isinstance(self.conn, sqlite3.Connection)

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
        if self.is_postgres:
            return []
        return store_files(self.path)

    def refuse_output_path(self, path: str | os.PathLike, what: str) -> None:
        """Raise UserError when writing ``what`` (e.g. ``"--samples-csv"``) to ``path`` would
        overwrite this store or one of its -wal/-shm files (symlinks and hard links resolved)."""
        if not self.is_postgres:
            refuse_output_path(path, self.path, what)


def _found_sound(conn: sqlite3.Connection, path: str, exists: bool) -> int | None:
    """Refuse a damaged file (UserError) before anything writes (WAL switch, migration). The
    check reads every page, so a store checked once and unchanged since is not read again.
    Returns the connection's ``PRAGMA data_version`` from before the check (other connections'
    commits count from there), None when it cannot say."""
    sound_at = _data_version(conn)
    if exists and not verified.unchanged_since_check(path):
        clock_ns = verified.file_clock_ns()
        before = verified.identity(path)
        verdict = verified.quick_check(conn)
        if verdict != "ok":
            raise UserError(f"database {path} is corrupt (quick_check: {verdict}); nothing "
                            f"was written to it; restore a backup or use --db PATH")
        verified.remember_check(path, before, clock_ns)
    return sound_at


def _data_version(conn: sqlite3.Connection) -> int | None:
    """The connection's ``PRAGMA data_version`` (it changes when another connection commits);
    None when the file cannot say (a damaged one: the check that follows reports it)."""
    try:
        return int(conn.execute("PRAGMA data_version").fetchone()[0])
    except sqlite3.DatabaseError:
        return None


def _close_remembering(conn: sqlite3.Connection, path: str, soundness: list[Any],
                       pid: int) -> None:
    """Close ``conn``; then remember the store as checked
    (:func:`benchlab.store.verified.remember_written`) when it is still what was found sound
    at the open plus what this connection wrote: ``soundness`` is [the ``data_version`` it was
    found sound at, the file's identity at the end of the open].

    Remembered only when no other connection has committed since (``data_version``), the
    store file itself is untouched since the open (this connection's commits went to the
    WAL, whose frames SQLite checksums; a checkpoint in a long session, or any other program's
    write, changes the file's times: not remembered), no transaction is left open and this is
    the process that opened it (a forked child's copy remembers nothing). remember_written
    also wants no ``-wal`` file left after the close (no other connection had it open).
    """
    sound_at, opened = soundness
    try:
        alone = (os.getpid() == pid and opened is not None and not conn.in_transaction
                 and conn.execute("PRAGMA data_version").fetchone()[0] == sound_at
                 and verified.identity(path)[0] == opened)
    except sqlite3.Error:
        alone = False
    conn.close()
    if alone:
        verified.remember_written(path)


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
