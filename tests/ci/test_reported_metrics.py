"""Gating a value the program prints (``--metric NAME[:UNIT]=REGEX``), as ``run`` reads it.

The program of these tests prints its throughput in MB/s, twice per run, with 1 % random noise
of its own: head prints 5 % less. The noise is the program's, not the machine's, so the verdicts
do not depend on the load while the suite runs; everything else (the build per revision, the
interleaved pairs, the regex, the median per run, the direction from the unit, the exit
status, the outputs) is the real ``ab``.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchlab.ci.gate import HIGHER, LOWER, decide_oriented
from benchlab.ci.reported import direction_of, parse_metrics
from benchlab.errors import UserError
from tests.ci.conftest import git, make_repo
from tests.ci.test_gate import validate_gate_json
from tests.conftest import BENCHLAB

SPEED_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifndef EXTRA
#define EXTRA 0
#endif
int main(void) {
    srand((unsigned)time(NULL) ^ (unsigned)getpid() << 8);
    double base = 400.0 * (1000 - EXTRA) / 1000.0;  /* EXTRA per mille slower */
    for (int i = 0; i < 2; i++) {
        double noise = 1.0 + 0.01 * ((double)rand() / RAND_MAX - 0.5) * 2.0;
        printf("pass %d: %.3f MB/s\n", i, base * noise);
    }
    return 0;
}
"""
SPEED = "speed:MB/s=([0-9.]+) MB/s"
FAST = ["--warmup", "1", "--min-pairs", "10", "--look-every", "5", "--max-time", "20"]


def _speed_repo(tmp_path: Path, extras: list[int]) -> Path:
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "work.c").write_text(SPEED_C)
    (repo / "extra").write_text(f"{extras[0]}\n")
    git(repo, "commit", "-qam", "speed program")
    for extra in extras[1:]:
        (repo / "extra").write_text(f"{extra}\n")
        git(repo, "commit", "-qam", f"extra={extra}")
    return repo


def _ab(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, "ab", "-q", "--build", "make", *FAST, *args], cwd=repo,
                          capture_output=True, text=True, timeout=300)


def test_direction_comes_from_the_unit_and_can_be_overridden():
    for unit in ("MB/s", "ops/s", "MiB / s", "it/sec", "GHz", "ops/ms"):
        assert direction_of(unit) == HIGHER, unit
    for unit in ("ns", "ms", "s", "B/op", "allocs/op", "", "count", "ns/op"):
        assert direction_of(unit) == LOWER, unit
    names, [m] = parse_metrics(["wall", SPEED])
    assert names == ["wall", "speed"] and (m.unit, m.direction) == ("MB/s", HIGHER)
    _, [m] = parse_metrics(["lat:ms=took (\\d+) ms"], {"lat": HIGHER})
    assert m.direction == HIGHER
    for bad in (["cspeed"], ["wall=(\\d+)"], ["x=no group"], ["a=(\\d)", "a=(\\d)"]):
        with pytest.raises(UserError):
            parse_metrics(bad)
    with pytest.raises(UserError, match="no such --metric"):
        parse_metrics(["wall"], {"speed": HIGHER})


def test_a_higher_is_better_metric_is_a_regression_when_it_drops():
    base = [100.0, 101.0, 99.0, 100.5, 99.5] * 4
    head = [v * 0.95 for v in base]
    d = decide_oriented(base, head, direction=HIGHER, unit="MB/s", benchmark="b",
                        metric="speed", threshold=0.02, paired=True)
    assert d.regression and d.ratio == pytest.approx(0.95) and d.high < 1 / 1.02
    assert d.base_median == pytest.approx(100.0) and not d.no_regression
    early = decide_oriented(base[:10], head[:10], direction=HIGHER, benchmark="b", metric="s",
                            threshold=0.02, paired=True, critical=4.6)  # no bound yet: open
    assert early.outcome == "undecided" and early.low >= 0.0
    up = decide_oriented(base, [v * 1.05 for v in base], direction=HIGHER, unit="MB/s",
                         benchmark="b", metric="speed", threshold=0.02, paired=True)
    assert up.improvement and up.no_regression


@pytest.mark.slow
def test_ab_fails_a_5_percent_lower_throughput_and_passes_an_a_a(tmp_path, cache_env):
    repo = _speed_repo(tmp_path, [0, 50])
    res = _ab(repo, "--base", "HEAD~1", "--head", "HEAD", "--metric", SPEED,
              "--json", "-", "--junit", str(tmp_path / "j.xml"), "-n", "decompress",
              "{root}/work")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    validate_gate_json(doc)
    [d] = doc["benchmarks"]
    assert (d["metric"], d["unit"], d["direction"]) == ("speed", "MB/s", "higher")
    assert d["regression"] and d["ratio"] == pytest.approx(0.95, abs=0.01)
    assert "decompress (speed)" in doc["summary"] and "< 0.9804" in doc["summary"]
    assert any("median of its matches" in n for n in doc["notes"])  # two lines a run
    [case] = ET.parse(tmp_path / "j.xml").findall(".//testcase")
    assert case.get("classname") == "benchlab.speed" and case.find("failure") is not None
    same = _ab(repo, "--base", "HEAD", "--head", "HEAD", "--metric", SPEED, "--json", "-",
               "{root}/work")
    assert same.returncode == 0, same.stderr
    assert not json.loads(same.stdout)["benchmarks"][0]["regression"]


@pytest.mark.slow
def test_a_metric_that_never_appears_fails_the_benchmark_naming_it(tmp_path, cache_env):
    repo = _speed_repo(tmp_path, [0])
    res = _ab(repo, "--base", "HEAD", "--head", "HEAD", "--metric",
              "speed:GB/s=([0-9.]+) GB/s", "{root}/work")
    assert res.returncode == 3, res.stderr
    assert "metric speed never appeared" in res.stderr and "Traceback" not in res.stderr
    bad = _ab(repo, "--metric", "cspeed", "{root}/work")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "NAME[:UNIT]=REGEX" in bad.stderr


def _import(tmp_path: Path, db: Path, where: str, factor: float) -> str:
    """Import 12 saved outputs of benchmark 'decompress' (speed x ``factor``); the uid."""
    out = tmp_path / where
    out.mkdir()
    for i in range(12):
        value = 400.0 * factor * (1.0 + 0.002 * ((i * 7) % 5 - 2))
        (out / f"run{i}.txt").write_text(f"pass 0: {value:.3f} MB/s\n")
    res = subprocess.run([BENCHLAB, "import", "--db", str(db), str(out), "--format", "metric",
                          "--metric", SPEED, "--name", "decompress", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["uid"]


def test_gates_on_imported_sessions_are_never_silent(tmp_path):
    db = tmp_path / "g.db"
    a = _import(tmp_path, db, "A", 1.0)
    b = _import(tmp_path, db, "B", 0.95)
    gate = [BENCHLAB, "gate", "--db", str(db), "--baseline", a, "--candidate", b,
            "--force", "--json", "-"]
    res = subprocess.run(gate, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr  # no wall time on either side
    assert len(res.stderr.strip().splitlines()) == 1 and "no wall values" in res.stderr
    assert "speed" in res.stderr  # what the sessions do have
    res = subprocess.run([*gate, "--metric", "speed"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    [d] = doc["benchmarks"]
    assert d["direction"] == "higher" and d["regression"]
    assert any("imported" in n and "unpaired" in n for n in doc["notes"])


def test_a_suite_file_takes_reported_metrics_and_their_direction(tmp_path):
    from benchlab.ci.ab_suite import load_ab_suite

    suite = tmp_path / "s.toml"
    suite.write_text('[gate]\nthreshold = "3%"\n[[benchmark]]\nname = "d"\ncommand = "x"\n'
                     'metrics = ["wall", "speed:MB/s=([0-9.]+) MB/s", "lat:ms=took (\\\\d+)"]\n'
                     'better = { lat = "higher" }\n')
    [b] = load_ab_suite(suite)
    assert b.metrics == ["wall", "speed", "lat"]
    assert [(m.name, m.direction) for m in b.reported] == [("speed", HIGHER), ("lat", HIGHER)]
    assert b.threshold("speed") == pytest.approx(0.03)
    suite.write_text('[[benchmark]]\nname = "d"\ncommand = "x"\nmetrics = ["cspeed"]\n')
    with pytest.raises(UserError, match="NAME\\[:UNIT\\]=REGEX"):
        load_ab_suite(suite)
