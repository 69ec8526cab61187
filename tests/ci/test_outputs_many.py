"""The gate's outputs for suites of many benchmarks: one terminal screen for 200 (regressions
first, then undecided, then a count of the rest), a JUnit case per benchmark and metric, and
Markdown that fits a pull request's comment (GitHub: 65,536 characters)."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET

from benchlab.ci.exits import EXIT_REGRESSION
from benchlab.ci.gate import EQUIVALENT, SLOWER, UNDECIDED, GateDecision
from benchlab.ci.report_model import GateReport
from benchlab.report import ci_outputs
from tests.conftest import BENCHLAB


def _decision(i: int, outcome: str, ratio: float, low: float, high: float) -> GateDecision:
    return GateDecision(benchmark=f"BenchmarkDecompressLongName/size={i}/level=9", metric="wall",
                        threshold=0.02, ratio=ratio, low=low, high=high, confidence=0.99,
                        outcome=outcome, n_base=40, n_head=40, base_median=1e6,
                        head_median=1e6 * ratio, reason="test")


def _suite(fail_undecided: bool = False) -> GateReport:
    decisions = [_decision(i, EQUIVALENT, 1.0, 0.99, 1.01) for i in range(200)]
    decisions[57] = _decision(57, SLOWER, 1.05, 1.03, 1.07)
    decisions[120] = _decision(120, SLOWER, 1.08, 1.04, 1.12)
    for i in (3, 99, 150, 180):
        decisions[i] = _decision(i, UNDECIDED, 1.01, 0.97, 1.05)
    return GateReport("ab", "u1", {}, decisions, EXIT_REGRESSION, pairs={}, seconds={},
                      notes=[f"note {i}" for i in range(300)], fail_undecided=fail_undecided)


def test_two_hundred_benchmarks_fit_one_screen_regressions_first():
    report = _suite()
    lines = ci_outputs.terminal_table(report).splitlines()
    assert len(lines) <= 32
    rows = lines[2:2 + ci_outputs.SCREEN_ROWS]
    assert "size=57/" in rows[0] and "size=120/" in rows[1]  # the regressions first
    assert all("undecided" in r for r in rows[2:6])
    assert any(line.startswith("... 180 more: 180 equivalent") for line in lines)
    assert lines[-1].startswith("REGRESSION: ")


def test_junit_has_a_case_per_benchmark_and_markdown_fits_a_comment():
    report = _suite()
    report.decisions += [_decision(1000 + i, EQUIVALENT, 1.0, 0.99, 1.01) for i in range(800)]
    cases = ET.fromstring(ci_outputs.junit(report).split("\n", 1)[1]).findall(".//testcase")
    assert len(cases) == 1000 and sum(c.find("failure") is not None for c in cases) == 2
    md = ci_outputs.markdown(report)
    assert len(md) < 65_536
    assert "size=57/" in md and "size=120/" in md and "not listed" in md


def test_fail_undecided_does_not_read_as_passed():
    decisions = [_decision(1, UNDECIDED, 1.01, 0.97, 1.05)]
    report = GateReport("ab", "u", {}, decisions, EXIT_REGRESSION, fail_undecided=True)
    line = ci_outputs.summary_line(report)
    assert line.startswith("FAILED under --fail-undecided") and line.endswith("[exit 1]")


def test_gate_junit_time_is_the_measuring_time(tmp_path):
    db = ["--db", str(tmp_path / "g.db")]
    for args in (["--record", "main"], ["--baseline", "branch:main", "--junit",
                                         str(tmp_path / "j.xml")]):
        res = subprocess.run([BENCHLAB, "gate", "-q", *db, "-r", "5", *args, "sleep 0.02"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert res.returncode in (0, 1), res.stderr
    [case] = ET.parse(tmp_path / "j.xml").findall(".//testcase")
    assert float(case.get("time")) >= 5 * 0.02
