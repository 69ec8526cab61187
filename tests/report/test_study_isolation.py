"""The study's isolation levels for real (bare, bwrap, podman on benchlab's local busybox
image) and the study report's comparisons per isolation against bare."""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from benchlab.core.suite import isolation_suite, load_suite
from benchlab.errors import UserError
from benchlab.report.study import Group
from benchlab.report.study_isolation import baseline_level
from tests.cli.forked import run_cli
from tests.conftest import needs_tool

HAVE_PODMAN = os.geteuid() == 0 and bool(shutil.which("podman") and shutil.which("busybox"))


def needs_levels(f):
    """The container and sandbox levels: podman, busybox-static and bubblewrap (setup installs
    them: a test skipped here without them fails in CI), run as root."""
    for tool in ("podman", "busybox", "bwrap"):
        f = needs_tool(tool)(f)
    return pytest.mark.skipif(os.geteuid() != 0, reason="the container levels need root")(f)


def test_the_builtin_isolation_suite_has_the_platforms_levels_here():
    suite = load_suite("builtin:isolation")
    levels = suite.levels["isolation"]
    assert levels[:2] == ["bare", "cgroup"] and suite.levels["workers"] == [1, 2]
    assert ("bwrap" in levels) == bool(shutil.which("bwrap"))
    assert any(lv.startswith("podman:") for lv in levels) == HAVE_PODMAN
    assert any(lv.startswith("podman-exec:") for lv in levels) == HAVE_PODMAN
    assert ("isolate" in levels) == bool(shutil.which("isolate"))
    assert {w.name for w in suite.workloads} == {"exp_float", "thp_walk"}
    with pytest.raises(UserError, match="builtin:isolation"):
        load_suite("builtin:nothing")


def test_baseline_is_bare_or_the_first_level():
    assert baseline_level(["bwrap", "bare"]) == "bare"
    assert baseline_level(["cgroup", "bwrap"]) == "cgroup"


@needs_levels
def test_a_study_with_bwrap_and_podman_levels_reports_them_against_bare(tmp_path):
    text = isolation_suite(runs=4, exp_count=20000, walk_mib=8, walk_steps=20000,
                           levels=["bare", "bwrap", "podman:localhost/benchlab-busybox:1"])
    text = text.replace("workers = [1, 2]", "workers = [1]")
    suite_file = tmp_path / "iso.toml"
    suite_file.write_text(text)
    db = tmp_path / "s.db"
    run_cli("study", str(suite_file), db=db, check=True, timeout=600)
    from benchlab.store import Store

    study = [s for s in Store.open(db).sessions() if s["kind"] == "study"][0]
    out = tmp_path / "rep"
    run_cli("study", "report", study["uid"], "-o", str(out), "--no-plots", "--resamples", "200",
            db=db, check=True, timeout=600)
    rows = list(csv.DictReader(open(out / "isolation.csv")))
    manager = subprocess.run(["podman", "info", "--format", "{{.Host.CgroupManager}}"],
                             capture_output=True, text=True).stdout.strip()
    assert {(r["isolation"], r["workload"]) for r in rows} == {
        (lv, w) for lv in ("bwrap", "podman:localhost/benchlab-busybox:1")
        for w in ("exp_float", "thp_walk")}
    for r in rows:
        assert r["mean_wall"] in ("higher", "lower", "same", "overlap")
        assert float(r["startup_ns"]) > 0
        assert not math.isnan(float(r["err_sd_wall_ns"]))  # the program's own view inside too
        if r["isolation"].startswith("podman") and manager == "cgroupfs":
            # the engine's own view of CPU time (its cgroup's) is compared with the program's
            assert not math.isnan(float(r["err_sd_container_cpu_ns"]))
        if r["isolation"].startswith("podman"):
            # a fresh container per run: the engine's start-up is added to every run's wall
            assert float(r["wall_offset_ns"]) > 0.3 * float(r["startup_ns"])
            # ... so its mean wall time is higher than bare's (the family reads "podman vs bare")
            assert r["mean_wall"] == "higher"
    md = (out / "report.md").read_text()
    assert "## Isolation vs bare" in md and "podman:localhost/benchlab-busybox:1" in md
    assert Path(out / "groups.csv").exists()


@pytest.mark.skipif(not HAVE_PODMAN, reason="podman or busybox-static missing")
def test_a_study_with_a_missing_image_is_one_line_before_the_study_exists(tmp_path):
    from benchlab.store import Store
    from tests.conftest import assert_one_line_error

    suite_file = tmp_path / "bad.toml"
    suite_file.write_text('[[workload]]\nname = "t"\ncommand = "true"\n[matrix]\n'
                          'isolation = ["bare", "podman:localhost/benchlab-no-such-image:0"]\n')
    db = tmp_path / "s.db"
    proc = run_cli("study", str(suite_file), db=db)
    assert_one_line_error(proc, "does not exist")
    assert not db.exists() or not Store.open(db).sessions()


def _group(level: str, values: dict) -> Group:
    cell = {"isolation": level, "workers": 1, "affinity": "none", "load": "none",
            "cpu_quota_us": 0}
    return Group(cell=cell, label=f"iso={level}", workload="w", session_uid="u",
                 values={k: np.array(v, dtype=float) for k, v in values.items()}, runs=[])


def test_the_isolators_own_view_is_compared_with_the_programs():
    """isolate is not installed here: the groups are written by hand with the values a run
    under isolate stores (its meta file's time-wall and time as ``isolate:*`` measurements, in
    ns; one run without a meta file gives NaN), to check the arithmetic of the error rows."""
    from benchlab.report.study import measurement_errors
    from benchlab.report.study_isolation import isolation_comparisons

    ms = 1e6
    bare = _group("bare", {"wall": [12 * ms, 13 * ms, 12 * ms], "cpu": [10 * ms] * 3,
                           "self_wall": [10 * ms] * 3, "self_cpu": [9 * ms] * 3})
    iso = _group("isolate", {
        "wall": [70 * ms, 64 * ms, 66 * ms], "cpu": [12 * ms, 11 * ms, 12 * ms],
        "self_wall": [10 * ms, 10 * ms, 11 * ms], "self_cpu": [9 * ms] * 3,
        "isolate:time-wall": [14 * ms, 16 * ms, math.nan], "isolate:time": [9.5 * ms] * 3,
        "isolation:startup_wall": [50 * ms] * 3})
    errors = measurement_errors([bare, iso])
    by = {(e["isolation"], e["time"]): e for e in errors}
    assert ("bare", "isolate_wall") not in by
    wall = by[("isolate", "isolate_wall")]
    assert wall["n"] == 2 and wall["mean_error_ns"] == pytest.approx(5 * ms)
    assert wall["sd_error_ns"] == pytest.approx(np.std([4 * ms, 6 * ms], ddof=1))
    assert by[("isolate", "isolate_cpu")]["sd_error_ns"] == pytest.approx(0)
    (row,) = isolation_comparisons([bare, iso], [], errors, [], ["bare", "isolate"])
    assert row["wall_offset_ns"] == pytest.approx((200 - 37) / 3 * ms)
    assert row["startup_ns"] == 50 * ms and row["mean_wall"] == "-"
    assert row["err_sd_isolate_wall_ns"] == pytest.approx(wall["sd_error_ns"])
    assert row["err_sd_wall_ns"] == pytest.approx(by[("isolate", "wall")]["sd_error_ns"])
