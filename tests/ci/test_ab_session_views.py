"""An ``ab`` session read back by ``show``, ``compare`` and ``report``: the gate's paired decisions
come first, as the job printed them, and the two sides' runs are not judged as independent
samples against one reference. A real ``ab`` job (a C program doing 30 % more work at the head)
makes the session; ``gate`` on stored sessions has an "n" column, ``ab`` a "pairs" one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchlab.ci.exits import EXIT_PASS
from benchlab.ci.gate import decide
from benchlab.ci.report_model import GateReport
from benchlab.report import ci_outputs
from benchlab.report.ab_session import HEADING, gate_report_of
from tests.ci.conftest import make_repo
from tests.conftest import BENCHLAB

FAST = ["--warmup", "1", "--min-pairs", "10", "--look-every", "5", "--max-time", "4"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180)


@pytest.fixture
def ab_session(tmp_path, cache_env) -> tuple[Path, dict]:
    """(repository, the job's JSON document) of one ``ab`` job on CPU time."""
    repo = make_repo(tmp_path / "repo", [0, 300])
    res = _cli("ab", "-q", "--base", "HEAD~1", "--build", "make", "--metric", "cpu",
               "--threshold", "5%", *FAST, "--json", "-", "{root}/work 300000", cwd=repo)
    assert res.returncode in (0, 1), res.stderr
    return repo, json.loads(res.stdout)


@pytest.mark.slow
def test_show_compare_and_report_open_with_the_gates_decisions(ab_session, tmp_path):
    repo, job = ab_session
    uid = job["session"]
    show = _cli("show", uid, cwd=repo)
    assert show.returncode == 0, show.stderr
    lines = show.stdout.splitlines()
    start = lines.index(HEADING)
    header = lines[start + 1].split()
    assert header[0] == "benchmark" and header[-1] == "pairs"  # the gate's own table
    assert start < next(i for i, t in enumerate(lines) if "@base" in t)  # before the runs
    assert job["summary"] in show.stdout  # the job's own verdict line, word for word
    assert "verdict (baseline" not in show.stdout  # no unpaired judgement of the sides
    [decision] = job["benchmarks"]
    assert f"{decision['ratio']:.4f}" in show.stdout
    shown = json.loads(_cli("show", "--json", uid, cwd=repo).stdout)
    assert shown["gate"]["summary"] == job["summary"] and shown["verdict"] is None
    compare = _cli("compare", uid, cwd=repo)
    assert compare.returncode == 0 and job["summary"] in compare.stdout
    report = _cli("report", uid, "--format", "markdown", "-o", str(tmp_path / "r.md"),
                  cwd=repo)
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "r.md").read_text()
    assert md.index(f"## Gate (ab session {uid})") < md.index("## work 300000@base")
    assert "Comparison against" not in md
    exported = _cli("export", uid, "--format", "markdown", cwd=repo).stdout  # show's lines too
    assert job["summary"] in exported and "verdict (baseline" not in exported
    # naming the two sides still compares them, unpaired, on request
    both = _cli("compare", "work 300000@head", "work 300000@base", cwd=repo)
    assert both.returncode == 0 and "vs baseline" in both.stdout


def test_the_gate_report_is_rebuilt_from_the_stored_session():
    d = decide([1.0] * 5, [1.1] * 5, benchmark="b", metric="instructions", threshold=0.01)
    session = {"uid": "u1", "command_line": ["benchlab", "ab", "--fail-undecided", "x"],
               "metadata": {"ab": {"decisions": [d.to_dict()], "pairs": {"b": 7},
                                   "seconds": {"b": 2.5}, "notes": ["n1"],
                                   "base": {"commit": "a" * 40, "build_log": "long"}}}}
    report = gate_report_of(session)
    assert report.decisions == [d] and report.exit_status == 1 and report.fail_undecided
    assert report.seconds == {"b": 2.5} and "build_log" not in report.revisions["base"]
    assert gate_report_of({"uid": "r", "metadata": {}}) is None  # a plain run session
    unfinished = {"uid": "i", "metadata": {"ab": {"base": {}, "head": {}}}}
    assert gate_report_of(unfinished) is None  # interrupted before any decision
    empty = GateReport("gate", "g", {}, [d], EXIT_PASS)
    assert ci_outputs.table_header(empty)[-1] == "n"  # unpaired: values per side
