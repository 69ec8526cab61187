"""Output that reads in a pipe: not a terminal, ``benchlab run`` prints one
plain table as wide as its widest cell (no number cut at 80 columns, no wrapped ``mean ± sd``),
``--style`` means what it means in hyperfine, a warning every command shares is said once, and a
10-value ``-P`` scan prints no more lines than hyperfine's own output plus the verdict.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess

import pytest
from rich.console import Console

from benchlab.report.run_summary import BenchmarkSummary, SeriesSummary, render_summary_table
from tests.conftest import BENCHLAB, needs_tool

HYPERFINE = shutil.which("hyperfine")
ANSI = re.compile(r"\x1b\[")


def run_cli(*args: str, db, check: bool = True) -> subprocess.CompletedProcess:
    """The real console script writing into a pipe, with no COLUMNS (what a CI log or
    ``| cat`` gets: rich would assume 80 columns)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    proc = subprocess.run([BENCHLAB, *args, "--db", str(db)], capture_output=True, text=True,
                          timeout=180, env=env)
    assert not check or proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def _verdict_block(lines: list[str]) -> list[str]:
    start = next((i for i, line in enumerate(lines) if line.startswith("verdict")), len(lines))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("stored as")),
               len(lines))
    return lines[start:end]


def test_a_pipe_gets_every_digit_of_a_long_row(db_path):
    """A long metric name with 12-digit values (the '|instruc… │ 241264…|' case): every row is
    one line with all its cells, and the values are printed whole."""
    prog = "echo 'value 123456789012'"
    proc = run_cli("run", "-N", "-r", "3", "-n", "a-benchmark-with-a-rather-long-name",
                   "--metric", "a_rather_long_metric_name:count=value (\\d+)", prog,
                   db=db_path)
    out = proc.stdout
    assert "…" not in out and "━" not in out and "│" not in out
    row = next(line for line in out.splitlines() if "a_rather_long_metric_name [count]" in line)
    assert row.count("123456789012") >= 5, row  # median, mean, min, max, p95...
    assert len(row) > 80  # wider than the terminal benchlab does not have, not cut to it
    wall = next(line for line in out.splitlines() if "wall [" in line)
    assert re.search(r"\d ± \d", wall), wall  # mean ± sd on one line


def test_show_header_grid_prints_full_width_in_a_pipe(db_path):
    """`show`'s header (uid ... command line) and environment grids: in a pipe the command
    line is one line, whole (rich folded it at 80 columns), and no line has trailing padding."""
    tail = "x" * 120
    run = run_cli("run", "-r", "2", f"sleep 0.001; : {tail}", "sleep 0.002", db=db_path)
    uid = re.search(r"stored as session (\w+)", run.stdout).group(1)
    out = run_cli("show", uid, db=db_path).stdout
    line = next(line for line in out.splitlines() if line.startswith("command line"))
    assert line.endswith(f"'sleep 0.001; : {tail}' 'sleep 0.002' --db {db_path}"), line
    assert len(line) > 160
    grid = out.split("\n\n")[0].splitlines()
    assert grid[0].startswith("uid ") and all(not g.endswith(" ") for g in grid), grid


def test_compare_check_lines_are_one_line_each_in_a_pipe(db_path):
    """compare A B in a pipe: every check and the verdict are one line each (rich folded them
    at 80 columns: 'reject \\nthe hypothesis')."""
    run_cli("run", "-N", "-r", "5", "sleep 0.001", "sleep 0.02", db=db_path)
    out = run_cli("compare", "sleep 0.001", "sleep 0.02", db=db_path).stdout
    lines = out.splitlines()
    verdict = next(line for line in lines if line.startswith("  verdict: "))
    assert verdict.rstrip().endswith(")"), verdict  # '... (p = 0.0079)' on the same line
    indented = [line for line in lines if line and not line.startswith(("  ", "verdict ("))
                and " vs baseline " not in line]  # the header and each comparison's title
    assert not indented, indented  # no continuation line of a folded sentence
    assert max(map(len, lines)) > 80


@pytest.mark.parametrize("style", ["basic", "nocolor", "color", "full", "none"])
def test_style_is_honoured_in_a_pipe(db_path, style):
    proc = run_cli("run", "-N", "-r", "2", "--style", style, "true", "sleep 0.001",
                   db=db_path)
    out = proc.stdout
    if style == "none":
        assert out == "" and proc.stderr == ""
        return
    coloured = bool(ANSI.search(out))
    assert coloured == (style in ("color", "full")), (style, out[:300])
    boxed = "━" in out
    assert boxed == (style == "full"), (style, out[:300])


def test_shared_warning_is_said_once():
    """The load warning (the machine, not a command) is said once for 3 benchmarks; a
    warning of one benchmark stays with it."""
    load = "load average was 9.00 at start (4.50 per core): other work competed for the CPU"

    def bench(name, extra=()):
        wall = SeriesSummary("wall", "ns", 3, 1e7, 1e5, 1e7, 1e5, 9.9e6, 1.01e7, 1e7, 1e7)
        return BenchmarkSummary(name, name, {"ok": 3}, wall, None, None, None,
                                warnings=[*extra, load])

    summaries = [bench("a"), bench("b", ["high relative spread"]), bench("c")]
    for plain in (True, False):
        buf = io.StringIO()
        render_summary_table(summaries, Console(file=buf, width=200), plain=plain)
        text = buf.getvalue()
        assert text.count("load average was 9.00") == 1, text
        assert text.count("high relative spread") == 1


@needs_tool("hyperfine")
def test_a_ten_value_scan_prints_no_more_lines_than_hyperfine_plus_the_verdict(db_path,
                                                                                tmp_path):
    args = ["-N", "-r", "2", "-P", "n", "1", "10", "sleep 0.00{n}"]
    theirs = subprocess.run([HYPERFINE, *args], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert theirs.returncode == 0, theirs.stderr
    hyperfine_lines = (theirs.stdout + theirs.stderr).splitlines()
    proc = run_cli("run", *args, db=db_path)
    ours = (proc.stdout + proc.stderr).splitlines()
    verdict = _verdict_block(ours)
    assert verdict, proc.stdout
    assert len(ours) - len(verdict) <= len(hyperfine_lines), (len(ours), len(verdict),
                                                               len(hyperfine_lines))
    assert sum("load average" in line for line in ours) <= 1
