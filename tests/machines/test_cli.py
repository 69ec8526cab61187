"""The profile/variability/calibrate/predict commands through the real console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import BENCHLAB, assert_one_line_error, needs_tool, run_cli

needs_stress_ng = needs_tool("stress-ng")


@needs_stress_ng
def test_profile_command_writes_store_and_json(tmp_path, db_path):
    out = tmp_path / "p.json"
    proc = run_cli("profile", "--methods", "int64,fft", "--duration", "1", "--repeat", "2",
                   "-o", str(out), "--name", "mybox", db=db_path, check=True)
    assert "int64" in proc.stdout and "CV" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["name"] == "mybox" and [m["name"] for m in doc["methods"]] == ["int64", "fft"]
    assert all(len(m["values"]) == 2 for m in doc["methods"])
    # the profile compares with itself from the store and from the file
    proc = run_cli("variability", "mybox", str(out), "--json", db=db_path, check=True)
    var = json.loads(proc.stdout)
    assert var["summary"]["n"] == 2
    assert var["summary"]["min"] == pytest.approx(1.0) and var["summary"]["max"] == pytest.approx(1.0)


@needs_stress_ng
@pytest.mark.parametrize("args,needle", [
    (["profile", "--methods", "nosuch", "--repeat", "1"], "unknown stress-ng method"),
    (["profile", "--cpu-period", "10000"], "--cpu-period needs --cpu-quota"),
    (["calibrate", "--base", "absent-profile"], "absent-profile"),
])
def test_bad_input_exits_2_with_one_line(args, needle, db_path):
    assert_one_line_error(run_cli(*args, db=db_path), needle)


def test_variability_and_predict_bad_input(tmp_path, db_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert_one_line_error(run_cli("variability", str(bad), str(bad), db=db_path), "not valid JSON")
    assert_one_line_error(run_cli("variability", "ghost", "ghost2", db=db_path), "ghost")
    assert_one_line_error(run_cli("predict", "--profile-ratio", str(bad), "3"), "not valid JSON")
    assert_one_line_error(run_cli("variability", "a", "b", "--kinds", "cpu", db=db_path), "unknown method kind")


def test_predict_bounds_flags_and_exit_status(tmp_path):
    var = tmp_path / "v.json"
    var.write_text(json.dumps({"format": "benchlab-variability", "target": "t", "base": "b",
                               "ratios": {"a": 0.6, "b": 2.54}}))
    proc = run_cli("predict", "--profile-ratio", str(var), "52.85", "--lower-is-better", "--target", "40")
    assert proc.returncode == 0, proc.stderr
    assert "inside" in proc.stdout and "[20.81, 88.08]" in proc.stdout
    apps = tmp_path / "apps.csv"
    apps.write_text("name,base,target,lower_is_better\nstream,2000,30000,false\ncrafty,52.85,40,true\n")
    proc = run_cli("predict", "--profile-ratio", str(var), str(apps), "--json")
    assert proc.returncode == 1  # a result outside the range
    assert json.loads(proc.stdout)["outside"] == ["stream"]
    assert_one_line_error(run_cli("predict", "--profile-ratio", str(var), "nofile.csv"), "neither a number")


def test_missing_stress_ng_says_how_to_install(tmp_path, db_path):
    """PATH without stress-ng (the binary stays installed; only the lookup is cut)."""
    env = {"PATH": str(Path(BENCHLAB).parent)}
    proc = subprocess.run([BENCHLAB, "profile", "--methods", "int64", "--db", str(db_path)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert_one_line_error(proc, "apt-get install stress-ng")


@needs_stress_ng
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to drop to an unprivileged user with setpriv")
def test_quota_without_cgroup_permission_is_a_user_error():
    """An unprivileged user (nobody, via setpriv) cannot create cgroups: the quota cannot be applied."""
    workdir = Path(tempfile.mkdtemp(prefix="benchlab-nobody-"))
    try:
        workdir.chmod(0o777)  # nobody must create the database and its -wal file here
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BENCHLAB,
                               "profile", "--methods", "int64", "--repeat", "1", "--cpu-quota", "20000",
                               "--db", str(workdir / "u.db")],
                              capture_output=True, text=True, timeout=120, cwd=str(workdir),
                              env={**os.environ, "HOME": str(workdir)})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert_one_line_error(proc, "cannot apply the CPU quota", "run benchlab as root")
