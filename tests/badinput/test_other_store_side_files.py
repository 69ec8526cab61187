"""Another SQLite database's side files are never an output: its committed transactions may
still be only in its ``-wal`` (a writer that has not checkpointed), and overwriting that file
loses them while the database file looks intact. Refused by name (``-wal``/``-shm``/``-journal``
beside an SQLite file) and by content (a write-ahead log's or a journal's first bytes), in one
line before any work; ``$GITHUB_STEP_SUMMARY``, which ``ab``/``gate``/``bisect`` append to, is
checked the same way. Real console script, a real SQLite writer holding its WAL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, run_cli


@pytest.fixture
def pending(tmp_path):
    """x.db in WAL mode whose committed rows are only in x.db-wal: the connection stays open
    with automatic checkpoints off, as a long-running writer's would."""
    x = tmp_path / "x.db"
    conn = sqlite3.connect(x)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES ('committed')")
    conn.commit()
    wal = Path(str(x) + "-wal")
    assert wal.stat().st_size > 0
    yield x, wal
    conn.close()


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT v FROM t").fetchall()


@pytest.fixture
def mine(tmp_path) -> Path:
    """The store the commands use: one session, so export and report have something."""
    db = tmp_path / "mine.db"
    run_cli("run", "-q", "-r", "2", "true", db=db, check=True)
    return db


COMMANDS = [
    ("export", "-o", "{wal}"),
    ("run", "-q", "-r", "2", "true", "--export-json", "{wal}"),
    ("report", "-o", "{wal}"),
    ("run", "-q", "-r", "2", "true", "--output", "{wal}"),
    ("gate", "-q", "-r", "3", "-w", "0", "--baseline", "nosuch", "true", "--junit", "{wal}"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c[:1] + c[-2:-1]) for c in COMMANDS])
def test_another_stores_wal_is_refused_and_its_transactions_kept(pending, mine, argv):
    x, wal = pending
    before = wal.read_bytes()
    args = [a.replace("{wal}", str(wal)) for a in argv]
    assert_one_line_error(run_cli(*args, db=mine), str(wal), "-wal file of the SQLite database")
    assert wal.read_bytes() == before
    assert _rows(x) == [("committed",)]


@pytest.mark.parametrize("suffix", ["-shm", "-journal"])
def test_another_stores_shm_and_journal_names_are_refused(pending, mine, suffix):
    x, _ = pending
    target = Path(str(x) + suffix)
    assert_one_line_error(run_cli("export", "-o", str(target), db=mine), f"{suffix} file")


def test_a_write_ahead_log_under_any_name_is_refused(pending, mine, tmp_path):
    _, wal = pending
    copy = tmp_path / "saved.log"
    shutil.copyfile(wal, copy)
    assert copy.read_bytes()[:4] in (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
    before = copy.read_bytes()
    assert_one_line_error(run_cli("export", "-o", str(copy), db=mine), "write-ahead log")
    assert copy.read_bytes() == before


def test_an_ordinary_file_named_like_a_side_file_is_still_written(mine, tmp_path):
    """Only a side file of an SQLite database is refused: notes.txt-wal beside a text file is
    an ordinary output."""
    (tmp_path / "notes.txt").write_text("text\n")
    out = tmp_path / "notes.txt-wal"
    run_cli("export", "-o", str(out), db=mine, check=True)
    assert out.read_text().startswith("{") or out.read_text().startswith("[")


@pytest.mark.parametrize("which", ["db", "wal"])
def test_github_step_summary_naming_a_store_is_refused_before_measuring(pending, mine, which):
    x, wal = pending
    target = x if which == "db" else wal
    before = target.read_bytes()
    proc = run_cli("gate", "-q", "-r", "3", "-w", "0", "--baseline", "nosuch", "true", db=mine,
                   env={"GITHUB_STEP_SUMMARY": str(target)})
    assert_one_line_error(proc, "$GITHUB_STEP_SUMMARY")
    assert target.read_bytes() == before
    assert _rows(x) == [("committed",)]
