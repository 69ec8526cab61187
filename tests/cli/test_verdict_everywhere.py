"""One verdict, right everywhere: the same stored session gives the
same verdict words and the same structured JSON in run, show, compare SESSION and the JSON
export; small -r says the attainable minimum and 5 runs decide.

Real processes (sleep), a real SQLite store; ratios and words are asserted, never timings.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.forked import run_cli


def _verdict_block(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("verdict"))
    out = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


@pytest.mark.serial
def test_run_show_compare_and_export_give_one_verdict(tmp_path):
    db = tmp_path / "b.db"
    run = run_cli("run", "-N", "-r", "6", "--reference", "sleep 0.03", "sleep 0.001",
                  "sleep 0.01", "--db", str(db), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    block = _verdict_block(run.stdout)
    assert "baseline: sleep 0.03, the reference" in block[0] and "Holm over 2" in block[0]
    uid = re.search(r"stored as session (\w+)", run.stdout).group(1)
    show = run_cli("show", uid, "--db", str(db), check=True)
    assert _verdict_block(show.stdout) == block  # the stored baseline rule, not the fastest
    compare = run_cli("compare", uid, "--db", str(db), check=True)
    assert _verdict_block(compare.stdout) == block
    md = tmp_path / "r.md"
    run_cli("report", uid, "--format", "markdown", "-o", str(md), "--db", str(db), check=True)
    text = md.read_text()
    assert "## Comparison against sleep 0.03" in text
    for line in block[1:]:  # each candidate's sentence, word for word (Markdown escapes dots)
        assert line.strip().replace(".", "").replace("\\", "") in \
            text.replace("\\", "").replace(".", ""), (line, text)
    # the report's table gives each interval with its level, as the verdict writes it (the
    # numbers themselves everywhere: tests/cli/test_one_set_of_numbers.py)
    v = json.loads(run_cli("show", uid, "--json", "--db", str(db), check=True).stdout)["verdict"]
    plain = text.replace("\\", "")
    for c in v["candidates"]:
        assert f"| {100 * c['interval_level']:.3g}% CI [" in plain, (c, plain)
    as_json = json.loads(run_cli("run", "-N", "-r", "6", "--reference", "sleep 0.03",
                                 "sleep 0.001", "sleep 0.01", "--json", "--db", str(db),
                                 check=True, cwd=tmp_path).stdout)
    uid2 = as_json["session"]
    shown = json.loads(run_cli("show", uid2, "--json", "--db", str(db), check=True).stdout)
    compared = json.loads(run_cli("compare", uid2, "--json", "--db", str(db),
                                  check=True).stdout)
    assert as_json["verdict"] == shown["verdict"] == compared["verdict"]
    assert as_json["verdict"]["baseline_rule"] == "reference"
    exported = json.loads(run_cli("export", uid2, "--format", "json", "--db", str(db),
                                  check=True).stdout)
    stored = exported["sessions"][0]["metadata"]["verdict"]  # stored with the session
    assert stored["result"] == as_json["verdict"] and stored["reference"] == "sleep 0.03"


@pytest.mark.serial
def test_r3_states_the_attainable_minimum_and_r5_decides(tmp_path):
    """`-r 3 'sleep 0.01' 'sleep 0.1'` (10x): 3 vs 3 cannot reach p < 0.05 whatever happens,
    so the verdict says so and names -r 4; with 5 runs each the exact test decides."""
    db = str(tmp_path / "b.db")
    three = run_cli("run", "-N", "-r", "3", "sleep 0.01", "sleep 0.1", "--db", db, check=True,
                    cwd=tmp_path)
    text = " ".join(_verdict_block(three.stdout))
    assert "with 3 runs each no result can reach p < 0.05; use -r 4 or more" in text, text
    assert re.search(r"ratio [\d.]+, \d+% CI \[", text), text  # an interval all the same
    five = run_cli("run", "-N", "-r", "5", "sleep 0.01", "sleep 0.1", "--db", db, check=True,
                   cwd=tmp_path)
    text = " ".join(_verdict_block(five.stdout))
    assert re.search(r"sleep 0\.01 ran [\d.]+× faster than sleep 0\.1, 95% CI \[[\d.]+, "
                     r"[\d.]+\] \(p = 0\.0079\)", text), text


@pytest.mark.serial
def test_until_decided_reports_the_sequential_decision_not_a_fixed_sample_one(tmp_path):
    """After --until-decided the design's own decision, its repeated interval
    and the look it stopped at; out of budget, 'stopped undecided at N runs (max-...)'; show
    says the same."""
    db = str(tmp_path / "b.db")
    decided = run_cli("run", "--until-decided", "--max-runs", "300", "--look-every", "5",
                      "-n", "quick", "-n", "slow", "sleep 0.002", "sleep 0.02", "--db", db,
                      check=True, cwd=tmp_path)
    line = next(l for l in decided.stdout.splitlines() if l.startswith("until decided"))
    assert re.search(r"quick is faster than slow: shift quick - slow -[\d.]+ ms, .+ "
                     r"repeated CI \[-[\d.]+, -[\d.]+\] ms.*stopped at look \d+, \d+ runs each",
                     line), line
    assert "Mann-Whitney test" not in decided.stdout  # no fixed-sample verdict after stopping
    uid = re.search(r"stored as session (\w+)", decided.stdout).group(1)
    shown = run_cli("show", uid, "--db", db, check=True).stdout
    assert line in shown
    timed = run_cli("run", "--until-decided", "--max-runs", "10000", "--max-time", "1",
                    "--equivalence-margin", "0", "-n", "a", "-n", "b", "sleep 0.01",
                    "sleep 0.01", "--db", db, check=True, cwd=tmp_path)
    line = next(l for l in timed.stdout.splitlines() if l.startswith("until decided"))
    assert re.search(r"stopped (undecided at \d+ runs each \(max-time|before the first look)",
                     line), line
