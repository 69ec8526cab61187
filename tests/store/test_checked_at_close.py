"""A store its own writer found sound is remembered as checked at the writer's close:
the next command does not read every page again (``PRAGMA quick_check``, 32 M
instructions for a store of 2,000 runs), yet a byte changed after the close is still caught,
and another connection's commit between the open and the close means nothing is remembered.
Real SQLite files, the real ``benchlab`` console script, a real cache directory."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store import verified
from benchlab.store.db import Store
from tests.conftest import BENCHLAB

#: The console script's ``main`` with every quick_check counted (printed to stderr at exit).
_COUNTED = r"""
import atexit, sys
from benchlab.store import verified
checks = []
inner = verified.quick_check
def counted(conn):
    checks.append(1)
    return inner(conn)
verified.quick_check = counted
atexit.register(lambda: sys.stderr.write(f"quick_checks={len(checks)}\n"))
from benchlab.cli.main import main
sys.argv = ["benchlab", *sys.argv[1:]]
main()
"""


def _counted(args: list[str], env: dict[str, str]) -> tuple[int, int, str]:
    """(exit status, quick_checks run, stderr) of one benchlab command in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _COUNTED, *args], env=env, capture_output=True,
                          text=True, timeout=120)
    line = [s for s in proc.stderr.splitlines() if s.startswith("quick_checks=")]
    assert line, proc.stderr
    return proc.returncode, int(line[-1].split("=")[1]), proc.stderr


def _flip_a_page_type(db: str) -> None:
    """Flip every bit of the type byte of the last table leaf page (quick_check reports it;
    the file keeps its size)."""
    page = 4096
    data = Path(db).read_bytes()
    last = max(i for i in range(1, len(data) // page) if data[i * page] == 0x0D)
    with open(db, "r+b") as fh:
        fh.seek(last * page)
        fh.write(bytes([data[last * page] ^ 0xFF]))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache directory (``BENCHLAB_CACHE``) for this test and its processes."""
    path = tmp_path / "cache"
    monkeypatch.setenv("BENCHLAB_CACHE", str(path))
    return path


def test_a_store_run_wrote_is_not_checked_again_by_show(tmp_path, cache):
    """``run`` creates and writes the store, and remembers it at its close: ``show`` then runs
    no quick_check. Without the note (removed), ``show`` checks it once (the count works)."""
    db = str(tmp_path / "s.db")
    env = dict(os.environ)
    subprocess.run([BENCHLAB, "run", "-q", "-N", "-r", "3", "/bin/true", "--db", db], env=env,
                   check=True, capture_output=True, timeout=120)
    status, checks, err = _counted(["run", "-q", "-N", "-r", "2", "/bin/true", "--db", db], env)
    assert (status, checks) == (0, 0), err  # a run after a run: no check either
    status, checks, err = _counted(["show", "--db", db], env)
    assert (status, checks) == (0, 0), err
    for note in (cache / "checked-stores").iterdir():
        note.unlink()
    status, checks, err = _counted(["show", "--db", db], env)
    assert (status, checks) == (0, 1), err


def test_a_byte_flipped_right_after_the_close_is_caught_by_the_next_open(tmp_path, cache):
    """The close waits for the file clock to pass the store's times before it remembers them,
    so a change at once after it (same size) has later times: the next open checks the store
    and refuses it. A note taken without that wait would keep the flip's times, unchecked."""
    db = str(tmp_path / "s.db")
    with Store.open(db) as store:
        with store.transaction() as conn:
            conn.execute("INSERT INTO store_meta (key, value) VALUES ('k', 'v')")
    assert verified.unchanged_since_check(db)
    _flip_a_page_type(db)
    assert not verified.unchanged_since_check(db)
    with pytest.raises(UserError, match="corrupt .quick_check"):
        Store.open(db, readonly=True)


def test_the_close_notes_the_store_once_the_file_clock_has_passed_its_times(
        tmp_path, cache, monkeypatch):
    """Called at once after a write, remember_written returns (True) only when the file
    clock has passed the file's times: a change after that cannot keep them. (A kernel with
    multigrain times, 6.13+, stamps a change after a stat later anyway and is not made to wait:
    here it is taken for an older one, which needs this wait.) Without it, the clock would
    still be in the write's tick."""
    monkeypatch.setattr(verified, "restamps_after_stat", lambda device: False)
    db = tmp_path / "s.db"
    db.write_bytes(b"x" * 4096)
    os.stat(db)  # queried: a multigrain kernel stamps the next change from the precise clock
    with open(db, "r+b") as fh:
        fh.write(b"y")
    assert verified.remember_written(str(db))
    clock_ns = verified.file_clock_ns()
    (note,) = (cache / "checked-stores").iterdir()
    noted = json.loads(note.read_text())[0]
    assert noted == verified.identity(str(db))
    assert verified.unsettled_ns(noted, clock_ns) == 0
    Path(f"{db}-wal").write_bytes(b"w")  # another connection's WAL left: nothing noted
    assert not verified.remember_written(str(db))


def test_on_multigrain_times_the_close_notes_at_once_and_a_change_right_after_is_seen(
        tmp_path, cache, monkeypatch):
    """On a file system with multigrain times (this machine's ext4 on Linux 6.13+; skipped
    elsewhere) the close notes the store without sleeping, and a same-size write straight
    after the note, in the same clock tick, still changes the file's identity: the next open
    checks. 30 rounds, so some writes land in the note's own tick. Fails on code that waits
    for the tick (the sleep raises here)."""
    db = tmp_path / "s.db"
    db.write_bytes(b"x" * 4096)
    if not verified.restamps_after_stat(os.stat(db).st_dev):
        pytest.skip("the file system of tmp_path has no multigrain times (Linux < 6.13?)")

    def no_sleep(seconds):
        raise AssertionError(f"the close slept {seconds} s")

    monkeypatch.setattr(verified.time, "sleep", no_sleep)
    for round_ in range(30):
        with open(db, "r+b") as fh:
            fh.write(bytes([round_]))
        assert verified.remember_written(str(db))
        assert verified.unchanged_since_check(str(db))
        with open(db, "r+b") as fh:
            fh.write(bytes([round_ + 100]))
        assert not verified.unchanged_since_check(str(db)), round_


def test_multigrain_times_need_linux_6_13_and_a_file_system_that_stamps_them():
    """The kernel release and the store's file system (its device in mountinfo) decide;
    anything unknown means wait, as before."""
    mountinfo = ("29 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
                 "30 29 0:27 / /mnt/n rw - nfs4 srv:/x rw\n"
                 "31 29 0:28 / /tmp rw - tmpfs tmpfs rw\n")
    ext4, nfs, tmpfs = os.makedev(254, 0), os.makedev(0, 27), os.makedev(0, 28)
    assert verified.multigrain("6.13.0", mountinfo, ext4)
    assert verified.multigrain("6.18.44-fc-v669", mountinfo, tmpfs)
    assert verified.multigrain("7.0.0-rc1", mountinfo, ext4)
    assert not verified.multigrain("6.12.9-arch1", mountinfo, ext4)
    assert not verified.multigrain("5.15.0-91-generic", mountinfo, tmpfs)
    assert not verified.multigrain("6.14.0", mountinfo, nfs)
    assert not verified.multigrain("6.14.0", mountinfo, os.makedev(8, 1))  # not listed
    assert not verified.multigrain("weird", mountinfo, ext4)


def test_a_note_is_overwritten_in_place_and_a_torn_one_means_check_again(tmp_path, cache):
    """The note is rewritten in place (same inode, same length: a rename or a truncation
    makes ext4 flush it, ms at every close); a note whose digest does not match what it holds
    (read half-written) counts as no note."""
    db = tmp_path / "s.db"
    db.write_bytes(b"x" * 4096)
    assert verified.remember_written(str(db))
    (note,) = (cache / "checked-stores").iterdir()
    inode, size = note.stat().st_ino, note.stat().st_size
    with open(db, "r+b") as fh:
        fh.write(b"y")
    assert not verified.unchanged_since_check(str(db))
    assert verified.remember_written(str(db)) and verified.unchanged_since_check(str(db))
    assert (note.stat().st_ino, note.stat().st_size) == (inode, size)
    ident, digest = json.loads(note.read_text())
    note.write_text(json.dumps([ident, "0" * len(digest)]))
    assert not verified.unchanged_since_check(str(db))
    note.write_text(json.dumps(ident))  # a note of the earlier format: checked again
    assert not verified.unchanged_since_check(str(db))


def test_a_run_found_remembered_is_remembered_again_and_a_flip_is_caught(tmp_path, cache):
    """``run`` on a remembered store (no check at its open) notes it again at its close; a
    byte flipped then is caught by the next command's check (exit 2, one line)."""
    db = str(tmp_path / "s.db")
    env = dict(os.environ)
    for runs in ("2", "1"):
        status, checks, err = _counted(["run", "-q", "-N", "-r", runs, "/bin/true", "--db", db],
                                       env)
        assert (status, checks) == (0, 0), err
    _flip_a_page_type(db)
    status, checks, err = _counted(["list", "--db", db], env)
    assert (status, checks) == (2, 1) and "is corrupt (quick_check" in err, err


@pytest.mark.parametrize("other", ["none", "commits", "stays open", "writes the file",
                                   "checkpoint"])
def test_another_connection_between_open_and_close_means_nothing_is_remembered(
        tmp_path, cache, other):
    """A commit by another connection after the open (PRAGMA data_version), one still open at
    the close (its -wal file left), or another program's write to the store file (its times
    change; the bytes written here are the ones it held) and the close notes nothing; nor
    after a checkpoint of this session's own (a long session's: the file changed, so it
    cannot tell), which only costs the next open a check. Alone, it notes."""
    db = str(tmp_path / "s.db")
    with Store.open(db):
        pass
    theirs = sqlite3.connect(db)  # a plain second connection, as another process's
    try:
        theirs.execute("SELECT count(*) FROM store_meta").fetchone()  # it has the WAL open
        store = Store.open(db)
        with store.transaction() as conn:
            conn.execute("INSERT INTO store_meta (key, value) VALUES ('mine', 'v')")
        if other == "commits":
            theirs.execute("INSERT INTO store_meta (key, value) VALUES ('theirs', 'v')")
            theirs.commit()
        if other == "writes the file":
            with open(db, "r+b") as fh:
                fh.seek(100)
                held = fh.read(1)
                fh.seek(100)
                fh.write(held)
        if other == "checkpoint":
            store.conn.execute("PRAGMA wal_checkpoint").fetchone()
        if other != "stays open":
            theirs.close()
        store.close()
        assert verified.unchanged_since_check(db) == (other == "none")
    finally:
        theirs.close()


def test_file_times_settle_after_their_grain_or_a_second():
    """Times with sub-second parts settle one grain (the largest power of ten dividing them)
    after the newest; whole seconds settle SETTLED_S after it."""
    newest = 1_700_000_000_123_456_789
    fine = [[1, 2, 3, newest - 5, newest], None]
    assert verified.unsettled_ns(fine, newest) == 1
    assert verified.unsettled_ns(fine, newest + 1) == 0
    ntfs = [[1, 2, 3, 1_700_000_000_123_456_700, 1_700_000_000_000_000_000], None]
    assert verified.unsettled_ns(ntfs, 1_700_000_000_123_456_700) == 100
    whole = [[1, 2, 3, 1_700_000_000_000_000_000, 1_700_000_001_000_000_000], None]
    assert verified.unsettled_ns(whole, 1_700_000_001_000_000_000) == int(
        verified.SETTLED_S * 1e9)
    assert verified.unsettled_ns([None, None], 0) == 0
