"""The study report cannot mislead: correlations within each cell (never pooled across levels),
each cell's load with comparisons of differently loaded cells flagged, the affinity column
kept, tick labels never cut, resampling-sensitive verdicts marked, and two studies side by
side (``benchlab study report A B``)."""

from __future__ import annotations

import csv
import json
import sqlite3

import numpy as np
import pytest

from benchlab.report.figures import short_label
from benchlab.report.study import Group, family_comparisons, group_intervals
from benchlab.report.study_cells import (
    cell_correlations,
    compact_level,
    level_replacements,
    loads_differ,
    tick_names,
)
from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error

SUITE = """
[study]
name = "side"
runs = 5
warmup = 0
seed = 11

[[workload]]
name = "exp_float"
builtin = "exp_float"
args = ["100000"]

[matrix]
isolation = ["bare", "cgroup"]
affinity = ["none", "cores:0"]
"""


def _group(level: str, cpu, minflt, **cell) -> Group:
    full = {"isolation": level, "workers": 1, "affinity": "none", "load": "none",
            "cpu_quota_us": 0, **cell}
    return Group(cell=full, label=f"iso={level} aff={full['affinity']}", workload="w",
                 session_uid="u", runs=[],
                 values={"cpu": np.asarray(cpu, float), "minflt": np.asarray(minflt, float)})


def test_correlations_are_within_each_cell_never_pooled():
    """Within bare and within podman page faults do not follow CPU time; pooled, they do
    (r ~ 1), because the container's numbers are the engine client's: a pooled row would
    say the opposite of each cell's."""
    rng = np.random.default_rng(3)
    bare = _group("bare", 10 + rng.normal(0, 0.1, 40), 100 + rng.integers(0, 5, 40))
    podman = _group("podman:localhost/img:1", 300 + rng.normal(0, 0.1, 40),
                    9000 + rng.integers(0, 5, 40))
    pooled = np.corrcoef(np.r_[bare.values["cpu"], podman.values["cpu"]],
                         np.r_[bare.values["minflt"], podman.values["minflt"]])[0, 1]
    assert pooled > 0.99
    rows = cell_correlations([bare, podman])
    assert {(r["isolation"], r["metric"], r["n"]) for r in rows} == {
        ("bare", "minflt", 40), ("podman:localhost/img:1", "minflt", 40)}
    for r in rows:
        x = (bare if r["isolation"] == "bare" else podman).values
        assert r["pearson_r"] == pytest.approx(np.corrcoef(x["cpu"], x["minflt"])[0, 1])
        assert abs(r["pearson_r"]) < 0.5


def test_constant_or_short_metrics_give_no_correlation_row():
    assert cell_correlations([_group("bare", [1, 2, 3, 4], [5, 5, 5, 5])]) == []
    assert cell_correlations([_group("bare", [1, 2, 3], [5, 6, 7])]) == []


def test_a_verdict_that_another_resampling_changes_is_marked_unstable():
    """n = 6, the second sample shifted to where its interval meets the first's: the
    verdict depends on the resampling there; each comparison's ``stable`` says whether the
    independent resampling agrees, and the family counts the unstable ones."""
    from benchlab.core.suite import Suite

    rng = np.random.default_rng(8)
    x = rng.normal(10, 1, 6)
    suite = Suite.from_dict({"name": "s", "runs": 6, "warmup": 0, "seed": 1, "workloads": [],
                             "levels": {"isolation": ["bare", "cgroup"], "workers": [1],
                                        "affinity": ["none"], "load": ["none"],
                                        "cpu_quota_us": [0]}})
    unstable = 0
    for shift in np.linspace(0.5, 3.0, 26):
        groups = [_group("bare", x, x), _group("cgroup", x + shift, x)]
        intervals = group_intervals(groups, 400, seed=1)
        detail, families = family_comparisons(intervals, suite)
        for d in detail:
            assert d["stable"] in ("yes", "no")
        unstable += sum(d["stable"] == "no" for d in detail)
        assert sum(f["unstable"] for f in families) == sum(d["stable"] == "no" for d in detail)
    assert unstable > 0  # near the boundary some verdicts are the resampling's


def test_loads_differ_by_more_than_half_a_task_per_core():
    assert loads_differ({"load_per_core": 0.2}, {"load_per_core": 0.9})
    assert not loads_differ({"load_per_core": 0.2}, {"load_per_core": 0.6})
    assert not loads_differ(None, {"load_per_core": 9.0})
    assert not loads_differ({"load_per_core": float("nan")}, {"load_per_core": 9.0})


def test_tick_labels_are_never_cut():
    level = "podman:localhost/audit-image-with-a-long-name:1"
    assert compact_level(level) == "podman:audit-image-with-a-long-name"
    assert compact_level("bwrap") == "bwrap"
    assert level_replacements(["podman:a/x:1", "podman:b/x:1"]) == {}  # would look alike
    labels = [f"iso={level} w=1 aff=none load=none", "iso=bare w=1 aff=none load=none"]
    ticks, key = tick_names(labels, level_replacements([level, "bare"]))
    assert all(short_label(t) == t for t in ticks) and len(set(ticks)) == 2
    assert key and all(label in key for label in labels)
    ticks, key = tick_names(["bare", "bwrap"])
    assert ticks == ["bare", "bwrap"] and key == ""
    # words every cell shares say nothing: dropped before anything is numbered
    ticks, key = tick_names(["iso=bare w=1 aff=none load=none",
                             "iso=cgroup w=1 aff=none load=none"])
    assert ticks == ["iso=bare", "iso=cgroup"] and key == ""


def test_comparison_figures_of_long_levels_keep_distinct_files():
    """Two families alike in their first 60 characters (the slug's cut) get two files."""
    from benchlab.report.study_figures import comparison_summary

    long = "podman-exec:registry.example.org/team/very-long-image-name"
    families = [{"family": f"isolation: {long}:{tag} vs bare", "metric": "wall",
                 "statistic": "mean", "higher": 1, "lower": 0, "same": 0, "overlap": 0}
                for tag in ("1", "2")]
    figures = comparison_summary(families)
    assert len({f.key for f in figures}) == 2
    assert all(short_label(t) == t for f in figures for t in f.y_ticks.values())


def _study(db, suite) -> str:
    return run_cli("study", str(suite), db=db, check=True, timeout=300).stdout.split()[1]


def _raise_load(db, study: str, load: float) -> None:
    """This machine's load cannot be set on demand: B's cells are stored as if they had run
    at ``load`` (the 1-minute average their sessions record at start and end)."""
    with Store.open(db) as store:
        cells = [c["session"] for c in store.get_session(study)["metadata"]["cells"].values()]
    con = sqlite3.connect(db)
    with con:
        for uid in cells:
            con.execute("UPDATE sessions SET load_before = ?, load_after = ? WHERE uid = ?",
                        (json.dumps([load, load, load]), json.dumps([load, load, load]), uid))
    con.close()


@pytest.mark.slow
def test_two_studies_side_by_side_with_load_and_affinity(db_path, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    a, b = _study(db_path, suite), _study(db_path, suite)
    _raise_load(db_path, b, 40.0)
    out = tmp_path / "two"
    run_cli("study", "report", a, b, "-o", str(out), "--resamples", "200", db=db_path,
            check=True, timeout=300)
    report = (out / "report.md").read_text()
    assert f"{b} vs {a}" in report and "Load while each cell ran" in report
    loads = list(csv.DictReader(open(out / "loads.csv")))
    assert {(r["study"], r["cell"]) for r in loads} == {
        (s, f"iso={i} w=1 aff={f} load=none") for s in (a, b) for i in ("bare", "cgroup")
        for f in ("none", "cores:0")}
    assert all(float(r["load_mean"]) == 40.0 for r in loads if r["study"] == b)
    versus = list(csv.DictReader(open(out / "versus_detail.csv")))
    # every group both have: 4 cells x 1 workload x 4 metrics x (mean, sd), all flagged
    assert len(versus) == 4 * 4 * 2 and all(r["load_differs"] == "yes" for r in versus)
    assert all(r["result"] in ("higher", "lower", "same", "overlap") for r in versus)
    iso = list(csv.DictReader(open(out / "isolation.csv")))
    # the affinity column tells the two cgroup rows apart
    keys = [(r["study"], r["isolation"], r["affinity"], r["workload"]) for r in iso]
    assert len(keys) == len(set(keys)) == 4
    assert "| study | isolation | workers | affinity | load | workload |" in report
    corr = list(csv.DictReader(open(out / "correlations.csv")))
    assert corr and all(r["isolation"] and r["affinity"] for r in corr)
    families = list(csv.DictReader(open(out / "families.csv")))
    assert {"unstable", "load_differs"} <= set(families[0])


def test_more_than_two_studies_or_the_same_twice_is_one_line(db_path, tmp_path):
    run_cli("run", "--runs", "2", "true", db=db_path, check=True)
    proc = run_cli("study", "report", "a", "b", "c", db=db_path)
    assert_one_line_error(proc, "one study or two")


def test_cell_ticks_name_the_level_not_a_number():
    from benchlab.report.study_figures import worker_scatter

    groups = [_group(level, [1, 2, 3, 4], [1, 2, 3, 4], workers=w)
              for level in ("bare", "podman-exec:localhost/benchlab-busybox:1") for w in (1, 2)]
    for g in groups:
        g.label = (f"iso={g.cell['isolation']} w={g.cell['workers']} aff=none load=none")
    ticks = list(worker_scatter("w", groups).x_ticks.values())
    assert ticks == ["bare w=1", "bare w=2", "podman-exec:benchlab-busybox w=1",
                     "podman-exec:benchlab-busybox w=2"]
