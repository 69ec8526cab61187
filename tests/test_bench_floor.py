"""bench/floor_program.py, the floor benchlab's per-run cost is judged against, does what it claims: it
runs the target N times, stores each run as one committed row in a WAL store, and leaves Click
out only when told to."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

FLOOR = Path(__file__).resolve().parents[1] / "bench" / "floor_program.py"

def _rows(store: Path) -> list[tuple]:
    con = sqlite3.connect(store)
    try:
        return con.execute("SELECT wall_ns, user_us, sys_us, max_rss_kib, status FROM run").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("commit", [[], ["--batch"]], ids=["each-run", "batch"])
def test_the_floor_stores_each_run_of_the_target(tmp_path, commit):
    store = tmp_path / "floor.db"
    subprocess.run([sys.executable, str(FLOOR), "5", str(store), *commit], check=True, timeout=60)
    rows = _rows(store)
    assert len(rows) == 5
    assert all(wall > 0 and rss > 0 and status == 0 for wall, _, _, rss, status in rows)
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_the_floor_imports_click_unless_told_not_to(tmp_path):
    probe = ("import runpy, sys; argv = sys.argv[1:]; sys.argv = argv; "
             "import os; real_exit = os._exit\n"
             "def report(code):\n"
             "    sys.stderr.write('click' in sys.modules and 'CLICK\\n' or 'NOCLICK\\n')\n"
             "    sys.stderr.flush(); real_exit(code)\n"
             "os._exit = report\n"
             "runpy.run_path(argv[0], run_name='__main__')")
    for extra, expected in (([], "CLICK"), (["--no-click"], "NOCLICK")):
        proc = subprocess.run([sys.executable, "-c", probe, str(FLOOR), "2",
                               str(tmp_path / "f.db"), *extra],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == expected
