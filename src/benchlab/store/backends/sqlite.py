"""The SQLite backend: a store in one SQLite file on this machine (any ``--db`` value no other
backend claims).

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
"""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path
from typing import Any

from benchlab.errors import UserError
from benchlab.store import verified
from benchlab.store.connection import BUSY_TIMEOUT_MS, translate_error, user_db_path
from benchlab.store.paths import SQLITE_HEADER, store_files


class SqliteBackend:
    """A store in an SQLite file (see the module docstring)."""

    name = "sqlite"

    def claims(self, target: str) -> bool:
        """Every value: a file path (the backends before this one took theirs)."""
        return True

    def open(self, store_class: Any, target: str, readonly: bool) -> Any:
        """Open (creating and migrating when writable) the SQLite file ``target``.

        Raises :class:`UserError` with a one-line reason for an empty path, a missing directory,
        a file that is not SQLite or fails ``PRAGMA quick_check`` (never written into), a
        locked, unreadable or read-only file, or a directory where the WAL cannot be written.
        A readable store in a read-only directory opens read-only for reading commands.
        """
        p, exists = _check_path(target, readonly)
        uri = _read_uri(p) if readonly else _write_uri(target, p, exists)
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        except sqlite3.Error as exc:
            raise translate_error(exc, target) from None
        try:
            sound_at = _configure(conn, target, exists, readonly)
        except sqlite3.Error as exc:
            conn.close()
            raise translate_error(exc, target) from None
        except BaseException:
            conn.close()
            raise
        # [data_version found sound at, the file's identity once opened (set below)]
        soundness: list[Any] = [sound_at, None]
        close = (functools.partial(_close_remembering, path=target, soundness=soundness,
                                   pid=os.getpid()) if sound_at is not None else None)
        store = store_class.adopt(conn, target, readonly, self, close)
        if sound_at is not None:  # this session's writes go to the WAL, not to this file
            soundness[1] = verified.identity(target)[0]
        return store

    def files(self, target: str) -> list[str]:
        """The database file and its ``-wal``, ``-shm`` and ``-journal`` files."""
        return store_files(target)

    def vacuum(self, store: Any) -> tuple[int | None, int | None]:
        """``VACUUM`` (it rewrites the file), the WAL checkpointed before and after; the
        file's and its WAL's size in bytes before and after."""
        path = store.path

        def size() -> int:
            return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))

        before = size()
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("VACUUM")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before, size()


BACKEND = SqliteBackend()


def _read_uri(p: Path) -> str:
    uri = f"file:{p.resolve()}?mode=ro"
    if not os.access(p.resolve().parent, os.W_OK) and not os.path.exists(f"{p.resolve()}-wal"):
        # A WAL store in a read-only directory cannot get the -shm file mode=ro needs; with no
        # -wal file there, nobody can be writing it: reading it as immutable is exact.
        uri += "&immutable=1"
    return uri


def _write_uri(path: str, p: Path, exists: bool) -> str:
    """The URI of a store opened for writing, after refusing (one line) a directory that is
    missing or not writable and a read-only file."""
    parent = p.resolve().parent
    if not parent.is_dir():
        _make_user_directory(path, parent)
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
    return f"file:{p.resolve()}"


def _make_user_directory(path: str, parent: Path) -> None:
    """Create the per-user default store's directory (ours to create); any other missing
    directory is the user's mistake (UserError)."""
    if os.path.abspath(path) != os.path.abspath(user_db_path()):
        raise UserError(f"directory {parent} does not exist; create it "
                        f"(mkdir -p {parent}) or use --db PATH")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {parent}: {exc.strerror or exc}; "
                        f"use --db PATH in a writable directory") from None


def _configure(conn: sqlite3.Connection, path: str, exists: bool, readonly: bool) -> int | None:
    """Set the connection's pragmas after refusing a damaged file; return the
    ``data_version`` the file was found sound at (see :func:`_found_sound`)."""
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
    return sound_at


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
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise UserError(f"cannot read database {path}: {exc.strerror or exc}; "
                            f"check the file or use --db PATH") from None
        if head and head != SQLITE_HEADER:
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


def _close_remembering(conn: sqlite3.Connection, *, path: str, soundness: list[Any],
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
