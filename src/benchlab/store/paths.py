"""Where a store's files are, and the one guard every output path of benchlab goes through.

Every option that names a file or directory benchlab writes (``-o``, ``--export-*``,
``--report``, ``--plots``, ``--samples-csv``, ``--output FILE``, ``--state-file`` ...) is checked
by :func:`refuse_output_path` before any work starts: writing there must not destroy the store.
The CLI reaches it through one Click parameter type (``benchlab.cli.output_path.OutputPath``),
and ``tests/badinput/test_output_guard.py`` walks every command's options so a new output
option cannot skip it.

Refused, for the SQLite store at ``db_path``:

- the database file itself and its ``-wal``, ``-shm`` and ``-journal`` files, named as given
  and with symbolic links resolved (SQLite names its side files after the resolved path);
- any existing path that is the same file as one of them (``st_dev`` and ``st_ino``): a hard
  link, or a symbolic link through another directory;
- any existing file that begins with SQLite's header: another benchlab store (or any SQLite
  database) is never a report, an export or a plot;
- another store's side files: a path ending in ``-wal``, ``-shm`` or ``-journal`` whose base
  (the path without that ending) begins with SQLite's header, and any existing file that
  begins with a write-ahead log's magic (``0x377f0682``/``0x377f0683``) or a rollback
  journal's. A store's committed transactions may still be only in its ``-wal``: overwriting it
  loses them, and the database file alone does not show it.
"""

from __future__ import annotations

import os
import re

from benchlab.errors import UserError

#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"
SIDE_SUFFIXES = ("", "-wal", "-shm", "-journal")
#: The first bytes of an SQLite write-ahead log (big-endian 0x377f0682 or 0x377f0683, by the
#: byte order of its checksums) and of a rollback journal.
SIDE_FILE_MAGICS = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83",
                    b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7")
#: A placeholder an output path may hold (``--samples-csv 'out{worker}.csv'``): any number.
WORKER_FIELD = "{worker}"


def store_files(db_path: str | os.PathLike) -> list[str]:
    """Absolute paths of the SQLite database at ``db_path`` and its ``-wal``, ``-shm`` and
    ``-journal`` files (symlinks resolved)."""
    base = os.path.realpath(os.fspath(db_path))
    return [base + suffix for suffix in SIDE_SUFFIXES]


def _guarded_names(db_path: str) -> list[str]:
    """The files on this machine that hold the store ``db_path`` (its backend's
    ``files``: none for a server's database), resolved and as given (absolute), without
    repeats."""
    from benchlab.store.backends import backend_for

    files = backend_for(db_path).files(db_path)
    given, real = os.path.abspath(db_path), os.path.realpath(db_path)
    as_given = [given + f[len(real):] for f in files if f.startswith(real)]
    return list(dict.fromkeys(as_given + files))


def _same_file(target: str, names: list[str]) -> bool:
    try:
        st = os.stat(target)
    except OSError:
        return False
    for name in names:
        try:
            other = os.stat(name)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino):
            return True
    return False


def _head(path: str) -> bytes:
    """The first 16 bytes of a regular file (b"" for anything else or an unreadable one: a
    FIFO is never opened, it would block)."""
    if not os.path.isfile(path):
        return b""
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_HEADER))
    except OSError:
        return b""


def _is_sqlite_file(path: str) -> bool:
    return _head(path) == SQLITE_HEADER


def _store_side_file(path: str) -> str | None:
    """Why ``path`` is some SQLite database's side file (None when it is not): a ``-wal``,
    ``-shm`` or ``-journal`` name beside a database, or a write-ahead log or journal by its
    first bytes."""
    for suffix in SIDE_SUFFIXES[1:]:
        if path.endswith(suffix) and _is_sqlite_file(path[:-len(suffix)]):
            return f"is the {suffix} file of the SQLite database {path[:-len(suffix)]}"
    if _head(path).startswith(SIDE_FILE_MAGICS):
        return "is an SQLite write-ahead log or journal (a store's committed changes)"
    return None


def _template_hits(template: str, names: list[str]) -> bool:
    """Whether ``template`` with ``{worker}`` replaced by some number names one of ``names``."""
    full = os.path.abspath(template)
    candidates = [full]
    directory, base = os.path.split(full)
    if WORKER_FIELD not in directory:  # the directory may be a symbolic link
        candidates.append(os.path.join(os.path.realpath(directory), base))
    for candidate in candidates:
        pattern = re.compile(r"\d+".join(map(re.escape, candidate.split(WORKER_FIELD))))
        if any(pattern.fullmatch(n) for n in names):
            return True
    return False


def output_conflict(path: str | os.PathLike, db_path: str | os.PathLike | None) -> str | None:
    """Why writing to ``path`` would destroy a store, or None when it would not.

    ``db_path`` is the store the command uses (None or a database a server holds: no file of
    its own to protect, but an existing SQLite file at ``path`` is still refused). ``path`` may
    hold ``{worker}`` (any number). Reads only file metadata and, for an existing regular
    file, its first 16 bytes.
    """
    text = os.fspath(path)
    names = []
    if db_path is not None and os.fspath(db_path):
        names = _guarded_names(os.fspath(db_path))
    if WORKER_FIELD in text:
        if _template_hits(text, names):
            return f"is (for some worker number) the store {os.fspath(db_path)} or its " \
                   f"-wal/-shm/-journal file"
        return None
    target = os.path.abspath(text)
    resolved = os.path.realpath(text)
    if target in names or resolved in names or _same_file(target, names):
        return f"is the store {os.fspath(db_path)} (or its -wal/-shm/-journal file, or a " \
               f"link to one)"
    if _is_sqlite_file(resolved):
        return "is an SQLite database (a store)"
    # as given and resolved: a link named x.db-wal, or a link to another store's -wal
    return _store_side_file(target) or _store_side_file(resolved)


def refuse_output_path(path: str | os.PathLike, db_path: str | os.PathLike | None,
                       what: str) -> None:
    """Raise UserError when writing ``what`` (e.g. ``"-o"``) to ``path`` would overwrite the
    SQLite store at ``db_path``, one of its -wal/-shm/-journal files, a link to one of them,
    or any existing SQLite database. Usable before the store is opened, so a command refuses
    before it works."""
    why = output_conflict(path, db_path)
    if why is not None:
        raise UserError(f"{what} {os.fspath(path)} {why}; writing there would destroy it: "
                        f"choose another path")
