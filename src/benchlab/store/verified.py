"""Which store files were checked whole (``PRAGMA quick_check``) and have not changed since.

Opening a store checks it before anything writes (a damaged file is refused, never written
into); the check reads every page: 200-300 ms for a 50 MB store on a loaded 2-CPU machine, paid
by every ``run``, ``show``, ``compare`` and ``list``. A store checked once and unchanged since is
not checked again: its identity (device, inode, size, modification and change times in ns, of
the file and of its ``-wal`` file) is remembered in the user's cache, one small file per store.

A change made in the same clock tick as the last one can keep the file's times (kernels without
fine-grained timestamps stamp files with a coarse clock, a jiffy), so a check is remembered only
when it ran at least :data:`SETTLED_S` after the file's last change: any later change then has
later times. Anything unreadable in the cache means "check again".
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from benchlab.digests import sha256_hex
from benchlab.paths import user_cache_dir

#: A check is remembered only this long (s) after the file's last change (see the docstring).
SETTLED_S = 1.0


def _cache_file(db_path: str) -> Path:
    key = sha256_hex(os.path.realpath(db_path).encode())[:24]
    return user_cache_dir() / "checked-stores" / key


def identity(db_path: str) -> list[list[int] | None]:
    """(device, inode, size, mtime ns, ctime ns) of the store file and of its ``-wal`` file;
    None for a ``-wal`` file that is absent or empty (SQLite creates an empty one on reading)."""
    out: list[list[int] | None] = []
    for name in (db_path, f"{db_path}-wal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            out.append(None)
            continue
        if name != db_path and st.st_size == 0:
            out.append(None)
            continue
        out.append([st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return out


def unchanged_since_check(db_path: str) -> bool:
    """True when the store was checked whole and neither it nor its ``-wal`` file changed since."""
    try:
        remembered = json.loads(_cache_file(db_path).read_text())
    except (OSError, ValueError):
        return False
    return remembered == identity(db_path)


def remember_check(db_path: str, before: list[list[int] | None]) -> None:
    """Note that the store passed its check; ``before``: its :func:`identity` taken before the
    check. Nothing is noted when the files changed meanwhile or changed less than
    :data:`SETTLED_S` ago (nothing is lost: the next open checks again)."""
    if identity(db_path) != before:
        return
    newest_ns = max((max(f[3], f[4]) for f in before if f is not None), default=0)
    if time.time_ns() - newest_ns < SETTLED_S * 1e9:
        return
    target = _cache_file(db_path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(json.dumps(before))
        os.replace(tmp, target)  # atomic: a concurrent reader sees the old note or this one
    except OSError:
        pass  # no writable cache: every open checks, as before
