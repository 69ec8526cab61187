"""Where a store's files are, and refusing to write over them.

A command that writes a file (``export -o``, ``--samples-csv``, ``profile -o``, ``calibrate
-o``) checks the path against the store's database and its ``-wal``/``-shm``/``-journal``
files first: writing there would destroy every result.
"""

from __future__ import annotations

import os

from benchlab.errors import UserError


def store_files(db_path: str | os.PathLike) -> list[str]:
    """Absolute paths of the SQLite database at ``db_path`` and its ``-wal``, ``-shm`` and
    ``-journal`` files (symlinks resolved)."""
    base = os.path.realpath(os.fspath(db_path))
    return [base, base + "-wal", base + "-shm", base + "-journal"]


def refuse_output_path(path: str | os.PathLike, db_path: str | os.PathLike, what: str) -> None:
    """Raise UserError when writing ``what`` (e.g. ``"-o"``) to ``path`` would overwrite the
    SQLite store at ``db_path`` or one of its -wal/-shm files (symlinks and hard links
    resolved). Usable before the store is opened, so a command refuses before it works."""
    if "://" in os.fspath(db_path):
        return  # a server store (postgresql://) has no file to overwrite
    files = store_files(db_path)
    target = os.path.realpath(os.fspath(path))
    same = target in files
    if not same and os.path.exists(target):
        try:
            same = any(os.path.exists(f) and os.path.samefile(target, f) for f in files)
        except OSError:
            same = False
    if same:
        raise UserError(f"{what} {os.fspath(path)} is the database {os.fspath(db_path)} (or its "
                        f"-wal/-shm file); writing there would destroy it: choose another path")
