"""``benchlab run --report FILE``: the session's report is written when the run ends (after the
exports), opens in headless Chromium with every figure drawn; a bad --report fails before any
measurement, in one line, storing nothing."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from benchlab.store.db import Store
from benchlab.units import format_value
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error
from tests.report.browser import needs_chromium, open_report


@needs_chromium
@pytest.mark.slow
def test_run_report_opens_in_chromium(tmp_path):
    db, out, exported = tmp_path / "run.db", tmp_path / "run.html", tmp_path / "run.json"
    # -N and 20 ms: through sh, `true` and a 3 ms sleep both lose the shell's cost measured
    # before the runs, which on a loaded machine exceeds its cost in the runs by ms; `true`
    # then sits at or below 0 and the report's comparison need not decide "faster"
    proc = run_cli("run", "-N", "--runs", "10", "-n", "quick", "-n", "slower", "true",
                   "sleep 0.02", "--export-json", str(exported), "--report", str(out), db=db,
                   check=True, timeout=300)
    assert f"wrote {out}" in proc.stderr
    assert json.loads(exported.read_text())["results"]  # the exports are still written
    with Store.open(db, readonly=True) as store:
        session = store.sessions(limit=1)[0]
        quick = store.resolve_series(f"{session['uid']}:quick").values
    shots = os.environ.get("BENCHLAB_SCREENSHOTS")  # for a person to look at (test_browser)
    page = open_report(out, tmp_path, shot=Path(shots) / "run-report.png" if shots else None,
                       height=3000)
    assert page.errors == [], page.errors
    # 4 figures per benchmark (distribution, sequence, correlogram, CDF) + 3 comparing them
    assert len(page.figures) == 2 * 4 + 3, page.figures
    for fig in page.figures:
        assert fig["width"] > 200 and fig["height"] > 100 and fig["canvases"] >= 1, fig
    assert session["uid"] in page.dom
    # the session's own verdict (baseline: the fastest, quick), as show gives it: on a loaded
    # machine 10 drifting runs can read "cannot tell yet", and the page must say the same
    shown = json.loads(run_cli("show", session["uid"], "--json", db=db, check=True).stdout)
    (candidate,) = shown["verdict"]["candidates"]
    assert "slower vs quick" in page.dom and shown["verdict"]["baseline"] == "quick"
    assert f'data-outcome="{candidate["outcome"]}"' in page.dom, candidate
    assert format_value(float(np.median(quick)), "ns", 5) in page.dom


@pytest.mark.parametrize("where", ["missing-dir", "directory", "the-store"])
def test_bad_report_path_fails_before_measuring(tmp_path, where):
    db = tmp_path / "run.db"
    with Store.open(db):
        pass  # an existing, empty store: nothing may be added to it
    target = {"missing-dir": tmp_path / "nowhere" / "r.html", "directory": tmp_path,
              "the-store": db}[where]
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", "--runs", "3", "true", "--report", str(target), db=db)
    assert_one_line_error(proc, "--report")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
