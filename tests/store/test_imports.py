"""Imports are atomic (one transaction, even under kill -9) and idempotent (same content is
refused unless asked), on real files, a real SQLite store and real processes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store import Store
from benchlab.store.formats import import_formats, import_path, register_import_format
from tests.conftest import assert_one_line_error, run_cli


def _big_csv(path: Path, rows: int) -> Path:
    rng = random.Random(1)
    with open(path, "w") as fh:
        fh.write("# generated for the kill test\n")
        for i in range(rows):
            fh.write(f"bench{i % 4},{1000 + rng.random() * 100:.3f}\n")
    return path


def test_reimport_of_same_content_is_refused_unless_allowed(db_path, tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("a,1\na,2\nb,3\n")
    copy = tmp_path / "copy.csv"
    copy.write_text(f.read_text())
    with Store.open(db_path) as store:
        [first] = import_path(store, f, "csv")
        with pytest.raises(UserError, match=f"already imported as session {first.uid}"):
            import_path(store, copy, "csv", name="other name")  # same bytes, other path and name
        assert len(store.sessions()) == 1
        # other parse options make other data: not a duplicate
        import_path(store, f, "csv", unit="ns")
        import_path(store, f, "csv", allow_duplicate=True)
        assert len(store.sessions()) == 3
    proc = run_cli("import", str(f), "--format", "csv", db=db_path)
    assert_one_line_error(proc, "already imported", "--allow-duplicate")
    proc = run_cli("import", str(f), "--format", "csv", "--allow-duplicate", db=db_path)
    assert proc.returncode == 0, proc.stderr
    with Store.open(db_path, readonly=True) as store:
        assert len(store.sessions()) == 4


def test_directory_digest_covers_every_file(db_path, tmp_path):
    d = tmp_path / "outs"
    d.mkdir()
    (d / "1.txt").write_text("took 5\n")
    (d / "2.txt").write_text("took 6\n")
    spec = [r"t:ns=took (\d+)"]
    with Store.open(db_path) as store:
        import_path(store, d, "metric", metrics=spec)
        with pytest.raises(UserError, match="already imported"):
            import_path(store, d, "metric", metrics=spec)
        (d / "2.txt").write_text("took 7\n")
        import_path(store, d, "metric", metrics=spec)
        assert len(store.sessions()) == 2


def test_formats_register_from_above_and_the_store_never_imports_them():
    fresh = subprocess.run(
        [sys.executable, "-c", "import sys, benchlab.store.formats as f; "
         "print(sorted(m for m in sys.modules if m.startswith('benchlab.machines')), "
         "'varsys16' in f.import_formats())"], capture_output=True, text=True, check=True)
    assert fresh.stdout.strip() == "[] False"
    import benchlab.machines.varsys16  # noqa: F401

    assert "varsys16" in import_formats()
    calls = []
    register_import_format("unit-test-fmt", lambda store, path, **kw: calls.append(path) or [])
    try:
        assert import_path(None, "x", "unit-test-fmt") == [] and calls == ["x"]
    finally:
        from benchlab.store import formats

        formats._REGISTERED.pop("unit-test-fmt")


@pytest.mark.slow
def test_kill_9_mid_import_leaves_nothing(db_path, tmp_path):
    """A real import process, killed with SIGKILL while its transaction is being written: the
    child pauses right after its first sample blocks are written (the session, benchmarks and
    runs before them), so the kill lands inside the open transaction every time."""
    big = _big_csv(tmp_path / "big.csv", 600_000)
    with Store.open(db_path) as store:
        import_path(store, _big_csv(tmp_path / "small.csv", 10), "csv", name="before")
    code = ("import sys, time\nfrom benchlab.store import Store\n"
            "import benchlab.store.connection as connection\n"
            "from benchlab.store.formats import import_path\n"
            "write = connection.insert_samples\n"
            "def write_then_wait(*args, **kwargs):\n"
            "    write(*args, **kwargs)\n"
            "    print('written', flush=True)\n"
            "    time.sleep(600)\n"
            "connection.insert_samples = write_then_wait\n"
            "with Store.open(sys.argv[1]) as s:\n    import_path(s, sys.argv[2], 'csv')\n"
            "print('finished', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(db_path), str(big)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line == "written\n", f"import ended before it could be killed: {proc.communicate()}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with Store.open(db_path) as store:
        assert [s["name"] for s in store.sessions()] == ["before"]
        assert store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0] == 10
        assert store.integrity_ok()
        # and the file imports fine afterwards (the killed import recorded nothing)
        [ref] = import_path(store, big, "csv")
        n = store.conn.execute("SELECT SUM(b.n) FROM sample_blocks b JOIN runs r"
                               " ON r.id = b.run_id WHERE r.session_id = ?", (ref.id,)).fetchone()[0]
        assert n == 600_000


@pytest.mark.slow
def test_import_memory_stays_within_three_times_the_file_plus_150_mb(tmp_path):
    """Peak RSS of a real import process (VmHWM) of a generated 12 MB label,value CSV.

    VmHWM is the high-water mark of the process's own address space, which exec replaces;
    ru_maxrss is not: Linux carries the parent's high-water mark across fork and exec, so under
    a pytest-xdist worker that once held 500 MB it reported 485 MB for a 60 MB import."""
    big = _big_csv(tmp_path / "m.csv", 700_000)
    size_mb = big.stat().st_size / 2**20
    code = ("import resource, sys\nfrom benchlab.store import Store\n"
            "from benchlab.store.formats import import_path\n"
            "with Store.open(sys.argv[1]) as s:\n    import_path(s, sys.argv[2], 'csv')\n"
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.db"), str(big)],
                         capture_output=True, text=True, check=True, timeout=600)
    peak_mb = int(out.stdout.strip()) / 1024
    assert size_mb > 10
    assert peak_mb <= 3 * size_mb + 150, (peak_mb, size_mb)
    with Store.open(tmp_path / "m.db", readonly=True) as store:
        assert store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0] == 700_000
