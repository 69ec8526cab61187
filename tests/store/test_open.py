"""Opening a store safely: every bad path gives one line and exit 2, and nothing is written into
a file benchlab did not check. Real files, a real read-only bind mount, a real unprivileged user."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store import SessionWriter, Store
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _store_with_one_session(path: Path) -> str:
    with Store.open(path) as store:
        w = SessionWriter.create(store, "run", name="kept", environment=None)
        w.add_run(w.add_benchmark("b"), iteration=0, fields={"status": "ok", "wall_ns": 5})
        w.finish("done")
        uid = w.ref.uid
    # fold the WAL into the main file so the tests below see one self-contained file
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    return uid


def test_empty_db_path_is_refused(tmp_path):
    proc = run_cli("list", "--db", "", cwd=tmp_path)
    assert_one_line_error(proc, "--db is empty")
    with pytest.raises(UserError, match="empty"):
        Store.open("")
    assert os.listdir(tmp_path) == []


def test_missing_directory_is_named_and_not_created(tmp_path):
    target = tmp_path / "no" / "such" / "x.db"
    proc = run_cli("import", str(tmp_path), "--format", "metric", "--metric", r"a=(\d+)",
                   db=target)
    assert_one_line_error(proc, "does not exist", "mkdir -p")
    assert not (tmp_path / "no").exists()
    assert_one_line_error(run_cli("list", db=target), "no database")


def test_not_sqlite_file_is_refused_and_left_untouched(tmp_path):
    f = tmp_path / "notes.db"
    f.write_text("these are my notes, not a database\n" * 100)
    before = _digest(f)
    for args in (["list"], ["show"], ["export"]):
        assert_one_line_error(run_cli(*args, db=f), "not an sqlite database")
    csv = tmp_path / "r.csv"
    csv.write_text("a,1\n")
    assert_one_line_error(run_cli("import", str(csv), db=f), "not an sqlite database")
    assert _digest(f) == before
    assert sorted(os.listdir(tmp_path)) == ["notes.db", "r.csv"]


def test_corrupt_database_is_detected_at_open_and_never_written(tmp_path):
    f = tmp_path / "bad.db"
    _store_with_one_session(f)
    size = f.stat().st_size
    assert size >= 4 * 4096
    with open(f, "r+b") as fh:  # wreck a b-tree page after the header page
        fh.seek(2 * 4096)
        fh.write(b"\xff" * 4096)
    before = _digest(f)
    for args in (["list"], ["import", str(tmp_path / "x.csv")]):
        (tmp_path / "x.csv").write_text("a,1\n")
        proc = run_cli(*args, db=f)
        assert_one_line_error(proc)
        assert "corrupt" in proc.stderr or "not a valid" in proc.stderr, proc.stderr
    assert _digest(f) == before
    assert not Path(f"{f}-wal").exists()


def test_export_refuses_to_overwrite_the_store_or_its_wal(tmp_path):
    db = tmp_path / "x.db"
    _store_with_one_session(db)
    with Store.open(db):  # re-create the -wal / -shm files beside it
        pass
    before = _digest(db)
    for target in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), tmp_path / "." / "x.db"):
        proc = run_cli("export", "--format", "csv", "-o", str(target), db=db)
        assert_one_line_error(proc, "would destroy it")
    link = tmp_path / "link.csv"
    link.symlink_to(db)
    assert_one_line_error(run_cli("export", "-o", str(link), db=db), "would destroy it")
    hard = tmp_path / "hard.db"
    os.link(db, hard)
    assert_one_line_error(run_cli("export", "-o", str(hard), db=db), "would destroy it")
    assert _digest(db) == before
    with Store.open(db, readonly=True) as store:
        assert [s["name"] for s in store.sessions()] == ["kept"]
    ok = run_cli("export", "--format", "csv", "-o", str(tmp_path / "out.csv"), db=db)
    assert ok.returncode == 0, ok.stderr


@pytest.fixture
def readonly_dir(tmp_path):
    """A directory made read-only by a read-only bind mount (root ignores mode bits)."""
    d = tmp_path / "ro"
    d.mkdir()
    yield d
    subprocess.run(["umount", str(d)], capture_output=True)


def _make_readonly(d: Path) -> None:
    for cmd in (["mount", "--bind", str(d), str(d)],
                ["mount", "-o", "remount,ro,bind", str(d)]):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            pytest.skip("cannot bind-mount read-only here (needs root and mount)")


def test_readable_store_in_readonly_directory(readonly_dir):
    db = readonly_dir / "x.db"
    uid = _store_with_one_session(db)
    _make_readonly(readonly_dir)
    # reading commands work
    proc = run_cli("list", "--json", db=db)
    assert proc.returncode == 0 and uid in proc.stdout, proc.stderr
    proc = run_cli("export", "--format", "csv", db=db)
    assert proc.returncode == 0 and "kept" in proc.stdout, proc.stderr
    # writing commands say what is wrong and what to do (not "chmod the file")
    csv = readonly_dir.parent / "r.csv"
    csv.write_text("a,1\n")
    proc = run_cli("import", str(csv), db=db)
    assert_one_line_error(proc, "directory", "not writable", "--db")
    assert "chmod u+w" not in proc.stderr


def test_unreadable_database_for_an_unprivileged_user(tmp_path):
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to act as an unprivileged user")
    import tempfile

    open_dir = Path(tempfile.mkdtemp(prefix="benchlab-test-"))  # traversable by everyone
    try:
        os.chmod(open_dir, 0o755)
        db = open_dir / "x.db"
        _store_with_one_session(db)
        os.chmod(db, 0o600)
        before = _digest(db)
        as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", BENCHLAB]
        env = {**os.environ, "HOME": "/nonexistent"}
        proc = subprocess.run([*as_nobody, "list", "--db", str(db)],
                              capture_output=True, text=True, timeout=60, env=env)
        assert_one_line_error(proc, "not readable")
        # a database behind a directory the user cannot enter
        proc = subprocess.run([*as_nobody, "list", "--db", str(tmp_path / "x.db")],
                              capture_output=True, text=True, timeout=60, env=env)
        assert_one_line_error(proc, "permission denied")
        assert _digest(db) == before
    finally:
        shutil.rmtree(open_dir)
