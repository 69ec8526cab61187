"""The metric the user measures: ``--verdict-metric`` on run, show, compare
and report; with ``--metric`` run and compare judge the same series by default; with ``--count
instructions`` the exact count difference is printed beside the wall-time verdict; run's
``--min-effect`` is the verdict's equivalence margin.
"""

from __future__ import annotations

import json

from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def _verdict(db, *args):
    return json.loads(run_cli(*args, "--json", db=db, check=True).stdout)


def test_with_metric_run_show_and_compare_judge_the_program_metric(db_path):
    """The program prints a latency that differs 2x while wall time barely does: every command
    judges the program's metric by default, and says so."""
    doc = _verdict(db_path, "run", "-N", "-r", "6", "--metric", "lat:ns=lat (\\d+)",
                   "-n", "a", "-n", "b", "echo lat 1000", "echo lat 2000")
    assert doc["verdict"]["metric"] == "lat"
    shown = _verdict(db_path, "show")
    assert shown["verdict"]["metric"] == "lat"
    compared = _verdict(db_path, "compare", doc["session"])
    assert compared["verdict"]["metric"] == "lat"
    assert compared["verdict"]["baseline"] == doc["verdict"]["baseline"] == "a"
    text = run_cli("show", db=db_path, check=True).stdout
    assert "on lat" in text or "lat" in text.split("verdict", 1)[1]


def test_verdict_metric_chooses_the_series_everywhere(db_path):
    doc = _verdict(db_path, "run", "-N", "-r", "5", "--verdict-metric", "user", "true",
                   "sleep 0.01")
    assert doc["verdict"]["metric"] == "user"
    assert _verdict(db_path, "show")["verdict"]["metric"] == "user"  # stored with the session
    assert _verdict(db_path, "show", "--verdict-metric", "wall")["verdict"]["metric"] == "wall"
    assert _verdict(db_path, "compare", doc["session"], "--verdict-metric",
                    "sys")["verdict"]["metric"] == "sys"
    assert_one_line_error(run_cli("run", "-r", "2", "--verdict-metric", "instructions", "true",
                                  db=db_path), "--verdict-metric", "--count instructions")


def test_count_instructions_prints_the_exact_difference_beside_wall_time(db_path):
    proc = run_cli("run", "-N", "-r", "3", "--count", "instructions", "seq 1000", "seq 2000",
                   db=db_path, check=True, timeout=300)
    out = proc.stdout
    head = next(line for line in out.splitlines() if line.startswith("verdict"))
    assert " on " not in head  # wall time is judged
    counts = [line for line in out.splitlines() if line.startswith("instructions (exact")]
    assert len(counts) == 1, out
    diff = next(line for line in out.splitlines() if line.strip().startswith("seq 2000:")
                or line.strip().startswith("seq 1000:"))
    assert "%" in diff and "," in diff  # '452,624, +84,634 (+23.00 %) against seq 1000'
    # compare by name and compare SESSION default to the same: wall, with the counts beside
    by_name = _verdict(db_path, "compare", "seq 2000", "seq 1000")
    assert by_name["verdict"]["metric"] == "wall" and by_name["baseline"]["metric"] == "wall"
    assert by_name["instructions"][1].startswith("  seq 2000: ") and "+" in by_name[
        "instructions"][1]
    text = run_cli("compare", "seq 2000", "seq 1000", db=db_path, check=True).stdout
    assert "instructions (exact counts under valgrind, baseline seq 1000" in text
    session = _verdict(db_path, "compare", by_name["baseline"]["session"])
    assert session["verdict"]["metric"] == "wall"
    # asked for, the counts are judged
    assert _verdict(db_path, "compare", "seq 2000", "seq 1000", "--metric",
                    "instructions")["verdict"]["metric"] == "instructions"


def test_run_min_effect_is_the_equivalence_margin(db_path):
    doc = _verdict(db_path, "run", "-N", "-r", "3", "--min-effect", "5%", "-n", "a", "-n", "b", "true",
                   "true")
    assert abs(doc["verdict"]["equivalence_margin"] - 0.05) < 1e-12
    assert_one_line_error(run_cli("run", "-r", "2", "--min-effect", "1ms", "true",
                                  db=db_path), "percentage", "compare")
