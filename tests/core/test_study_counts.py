"""Studies (the stability study: stable grading) with instruction counts: `[study] count = "instructions"`.

Every cell gets counted runs beside its timed ones, and the study report grades the cells by
the counts exactly (a deterministic count's interval is the count). The study's runs come from
a scripted runner (tests/core/scripted.py: the counts are what the point is, not valgrind,
whose counting has its own tests in tests/measure/test_counts.py and, through the core, in
tests/cluster/test_every_option.py); the suite file, the store and the report are real.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from benchlab.core.execute import Here
from benchlab.core.study import run_study
from benchlab.core.suite import load_suite
from benchlab.store import Store
from tests.conftest import assert_one_line_error, needs_tool, run_cli
from tests.core.scripted import ScriptedRunner

SUITE = """
[study]
name = "counts"
runs = 3
warmup = 0
seed = 3
count = "instructions"

[[workload]]
name = "short"
command = "seq 1000"

[[workload]]
name = "long"
command = "seq 3000"

[matrix]
isolation = ["bare", "cgroup"]
"""


@needs_tool("valgrind")  # the plan's validation asks for it, as a real study's does
def test_a_study_grades_cells_by_instruction_counts(db_path, tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    # seq 3000 prints three times the lines of seq 1000: three times the instructions
    runner = ScriptedRunner(counts=lambda index: 150_000.0 * (1 + 2 * index),
                            wall_ns=lambda b, i: 1_000_000 * (1 + b) + 7_000 * (i % 3))
    with Store.open(db_path) as store:
        uid = run_study(store, load_suite(str(suite)), here=Here(runner)).uid
    with Store.open(db_path) as store:
        cells = store.get_session(uid)["metadata"]["cells"]
        assert len(cells) == 2
        for info in cells.values():
            sess = store.get_session(info["session"])
            runs = store.runs(session_id=sess["id"], include_warmup=False)
            counted = [r for r in runs if r["spawn_method"] == "cachegrind"]
            assert len(counted) == 2 * 3 and len(runs) == 2 * 3 * 2
            assert all(store.samples_of_run(r["id"])["instructions"][0] > 100_000
                       for r in counted)
    out = tmp_path / "report"
    run_cli("study", "report", uid, "-o", str(out), "--resamples", "300", db=db_path,
            check=True)
    groups = [g for g in csv.DictReader(open(out / "groups.csv"))
              if g["metric"] == "instructions"]
    assert len(groups) == 2 * 2  # cells x workloads
    by_workload: dict[str, set[float]] = {}
    for g in groups:
        # deterministic: the interval is the count itself, with no spread
        assert float(g["mean_lo"]) == float(g["mean_ns"]) == float(g["mean_hi"])
        assert float(g["sd_lo"]) == float(g["sd_hi"]) == 0.0
        by_workload.setdefault(g["workload"], set()).add(float(g["mean_ns"]))
    # seq 3000 prints three times the lines: clearly more instructions, in both cells alike
    assert min(by_workload["long"]) > 1.3 * max(by_workload["short"])
    families = [f for f in csv.DictReader(open(out / "families.csv"))
                if f["metric"] == "instructions"]
    assert {f["statistic"] for f in families} == {"mean", "sd"}
    for f in families:  # a cgroup does not change what the program executes
        assert (int(f["same"]), int(f["higher"]), int(f["lower"]), int(f["overlap"])) == \
            (2, 0, 0, 0)
    # the timed groups are unchanged by the counted runs (no valgrind time among them)
    walls = [g for g in csv.DictReader(open(out / "groups.csv")) if g["metric"] == "wall"]
    assert len(walls) == 4 and all(float(g["mean_ns"]) < 1e9 for g in walls)


@pytest.mark.parametrize("line, needle", [('count = "cycles"', "count = \"instructions\""),
                                          ("count = 3", "count")])
def test_a_bad_count_is_one_line_and_creates_no_session(db_path, tmp_path, line, needle):
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.replace('count = "instructions"', line))
    assert_one_line_error(run_cli("study", str(suite), db=db_path), needle)
    if Path(db_path).exists():
        with Store.open(db_path) as store:
            assert store.sessions() == []
