"""Which store files were checked whole (``PRAGMA quick_check``) and have not changed since.

Opening a store checks it before anything writes (a damaged file is refused, never written
into); the check reads every page: 200-300 ms for a 50 MB store on a loaded 2-CPU machine, paid
by every ``run``, ``show``, ``compare`` and ``list``. A store checked once and unchanged since is
not checked again: its identity (device, inode, size, modification and change times in ns, of
the file and of its ``-wal`` file) is remembered in the user's cache, one small file per store.

A process that found the store sound at its open (checked it, found it remembered, or created
it) and then wrote it itself also remembers it at its close (:func:`remember_written`), when no
other connection committed meanwhile (SQLite's ``PRAGMA data_version``, the caller's part) and
none still has it open: the file is then what was checked plus what this process's SQLite
wrote. Without that, every ``run`` made the next command read the whole store again (32 M
instructions for a store of 2,000 runs, growing with it).

A change made in the same clock tick as the last one can keep the file's times: the kernel
stamps files from a coarse clock (``CLOCK_REALTIME_COARSE``, a jiffy: 4 ms here), truncated to
the file system's grain. So an identity is remembered only when it was read after the coarse
clock had passed the file's newest time by that grain (any later change then has later times):
the close waits for that (a few ms). A file system whose times are whole seconds cannot say its
grain; there the file's last change must be :data:`SETTLED_S` old. A file system with
multigrain times (Linux 6.13+: ext4, xfs, btrfs, tmpfs) needs no wait: a change made after a
``stat`` of the file is stamped from the precise clock whenever the coarse one would repeat the
times that ``stat`` saw, so the identity read at the close already differs from any later one
(:func:`restamps_after_stat`); the close then notes at once. A wall clock set back could give a
later change an earlier file's times; nothing here guards against that. Anything unreadable in
the cache means "check again".
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from benchlab.digests import sha256_hex
from benchlab.paths import user_cache_dir

#: On a file system whose times are whole seconds, a check is remembered only this long (s)
#: after the file's last change (see the docstring).
SETTLED_S = 1.0
#: The longest a close waits (s) for the file-time clock to pass the store's times; a longer
#: wait (whole-second file times) is not made, and the next open checks.
CLOSE_WAIT_S = 0.05
#: Linux's number of CLOCK_REALTIME_COARSE, the clock file times are stamped from (the time
#: module has no name for it).
_REALTIME_COARSE = 5
_NS = 1_000_000_000
#: Every note is this long (bytes; see :func:`_write_note`).
_NOTE_BYTES = 512


def _cache_file(db_path: str) -> Path:
    key = sha256_hex(os.path.realpath(db_path).encode())[:24]
    return user_cache_dir() / "checked-stores" / key


def file_clock_ns() -> int:
    """Now, in ns since the epoch, on the clock the kernel stamps file times from
    (``CLOCK_REALTIME_COARSE``; the precise wall clock where that is missing)."""
    try:
        return time.clock_gettime_ns(_REALTIME_COARSE)
    except OSError:
        return time.time_ns()


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


#: File systems that stamp multigrain times on Linux 6.13 and later (``FS_MGTIME``).
MULTIGRAIN_FILE_SYSTEMS = frozenset({"ext4", "xfs", "btrfs", "tmpfs"})
#: This process's answers of :func:`restamps_after_stat`, by device number.
_RESTAMPS: dict[int, bool] = {}


def multigrain(release: str, mountinfo: str, device: int) -> bool:
    """True when the kernel ``release`` (``os.uname().release``) stamps multigrain times (6.13
    and later) and the file system of ``device`` (a ``st_dev``), found in ``mountinfo`` (the
    text of ``/proc/self/mountinfo``), is one that uses them. False when either is unknown (a
    device not listed, as a btrfs subvolume's may be): the caller then waits, as before."""
    try:
        major, minor = (int(part.split("-")[0].split("+")[0]) for part in release.split(".")[:2])
    except ValueError:
        return False
    if (major, minor) < (6, 13):
        return False
    wanted = f"{os.major(device)}:{os.minor(device)}"
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) > 2 and fields[2] == wanted and " - " in line:
            return line.split(" - ", 1)[1].split(" ", 1)[0] in MULTIGRAIN_FILE_SYSTEMS
    return False


def restamps_after_stat(device: int) -> bool:
    """True when a change to a file on ``device`` (a ``st_dev``) made after a ``stat`` of it
    gets later times than that ``stat`` saw, however soon it comes (multigrain times:
    :func:`multigrain`), at a grain finer than a second (the caller checks the grain). Read
    once per device and process."""
    known = _RESTAMPS.get(device)
    if known is None:
        try:
            with open("/proc/self/mountinfo") as fh:
                known = multigrain(os.uname().release, fh.read(), device)
        except OSError:
            known = False
        _RESTAMPS[device] = known
    return known


def grain_ns(ident: list[list[int] | None]) -> int:
    """The coarsest grain (ns, a power of ten up to 1 s) that divides every time in ``ident``:
    a bound on the file system's grain (1 s: times in whole seconds)."""
    stamps = [stamp for f in ident if f is not None for stamp in (f[3], f[4])]
    margin = 1
    while margin < _NS and all(stamp % (margin * 10) == 0 for stamp in stamps):
        margin *= 10
    return margin


def unsettled_ns(ident: list[list[int] | None], clock_ns: int) -> int:
    """How long (ns) after ``clock_ns`` (the file clock, read before ``ident`` was) the file's
    times settle: a change after then gets later times. 0 when settled at ``clock_ns``.

    A file system's grain is a power of ten ns (Linux's rule: 1 ns on ext4, xfs, btrfs or
    tmpfs, 100 ns on NTFS, 1 s on ext4 with small inodes) and divides every time it stamps, so
    the largest power of ten dividing all of them bounds it; times in whole seconds settle
    :data:`SETTLED_S` after the newest.
    """
    stamps = [stamp for f in ident if f is not None for stamp in (f[3], f[4])]
    if not stamps:
        return 0
    margin = grain_ns(ident)
    if margin == _NS:
        margin = int(SETTLED_S * _NS)
    return max(0, max(stamps) + margin - clock_ns)


def quick_check(conn: Any) -> str:
    """``PRAGMA quick_check(1)`` on the open SQLite connection ``conn``: ``"ok"``, or the
    first problem found. Reads every page of the store (the cost this module saves)."""
    return conn.execute("PRAGMA quick_check(1)").fetchone()[0]


def unchanged_since_check(db_path: str) -> bool:
    """True when the store was checked whole and neither it nor its ``-wal`` file changed since."""
    remembered = _noted(db_path)
    return remembered is not None and remembered == identity(db_path)


def _noted(db_path: str) -> Any:
    """The identity remembered for the store; None when there is none, or it is unreadable,
    or its digest does not match (a note read while it was being overwritten)."""
    try:
        ident, digest = json.loads(_cache_file(db_path).read_bytes())
    except (OSError, ValueError, TypeError):
        return None
    return ident if digest == _digest(ident) else None


def _digest(ident: Any) -> str:
    return sha256_hex(json.dumps(ident).encode())[:32]


def remember_check(db_path: str, before: list[list[int] | None],
                   clock_ns: int | None = None) -> None:
    """Note that the store passed its check; ``before``: its :func:`identity` taken before the
    check, ``clock_ns``: :func:`file_clock_ns` read before ``before`` (None: unknown, and then
    the last change must be :data:`SETTLED_S` old). Nothing is noted when the files changed
    meanwhile or their times had not settled (nothing is lost: the next open checks again)."""
    if identity(db_path) != before:
        return
    if clock_ns is None:
        newest_ns = max((max(f[3], f[4]) for f in before if f is not None), default=0)
        if time.time_ns() - newest_ns < SETTLED_S * _NS:
            return
    elif unsettled_ns(before, clock_ns):
        return
    _write_note(db_path, before)


def remember_written(db_path: str, max_wait_s: float = CLOSE_WAIT_S) -> bool:
    """At the close of a connection that found the store sound at its open and then wrote it,
    with no other connection's commit since (the caller checked ``PRAGMA data_version``):
    remember the store as checked. Waits (at most ``max_wait_s``, s) until the file clock has
    passed the file's times, except on a file system with multigrain times
    (:func:`restamps_after_stat`), where the ``stat`` that reads the identity already makes any
    later change stamp later times. True when noted; False when a ``-wal`` file is left (another
    connection has the store open, and may write it still), the wait would be longer (times in
    whole seconds), or the files kept changing."""
    deadline_ns = file_clock_ns() + int(max_wait_s * _NS)
    while True:
        clock_ns = file_clock_ns()
        now = identity(db_path)
        if now[0] is None or now[1] is not None:
            return False
        if grain_ns(now) < _NS and restamps_after_stat(now[0][0]):
            wait_ns = 0
        else:
            wait_ns = unsettled_ns(now, clock_ns)
        if wait_ns == 0:
            return _noted(db_path) == now or _write_note(db_path, now)
        if clock_ns + wait_ns > deadline_ns:
            return False
        # the coarse clock moves in ticks: a time stamped from the precise clock (a
        # multigrain file system's, Linux 6.13+) is passed at the tick after it
        time.sleep(max(wait_ns, 200_000) / _NS)


def _write_note(db_path: str, ident: list[list[int] | None]) -> bool:
    """Write the note: [identity, digest of it], padded with spaces to :data:`_NOTE_BYTES` and
    written over the old note in place. A rename over the old note, or a truncation, makes ext4
    push the file to disk at once (its auto_da_alloc: 0.2-4 ms of every run's close); one
    in-place write of a page does not. A reader that meets a half-written note finds its
    digest wrong and checks the store again; a note too long for the pad is not written."""
    text = json.dumps([ident, _digest(ident)]).encode()
    if len(text) > _NOTE_BYTES:
        return False
    target = _cache_file(db_path)
    try:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.pwrite(fd, text.ljust(_NOTE_BYTES), 0)
        finally:
            os.close(fd)
    except OSError:
        return False  # no writable cache: every open checks, as before
    return True
