"""``benchlab ab --baseline``: head built in its worktree and gated against a stored baseline
(the workflow of ``benchlab gate``), on instruction counts (exact, whatever the load)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from tests.ci.conftest import git, make_repo
from tests.ci.test_gate import validate_gate_json
from tests.cli.forked import run_cli
from tests.conftest import require_tool
from tests.core.scripted import ScriptedRunner

# two counted runs each: a deterministic program's count does not vary, and two equal values a
# side are what decide() takes as exact (one value a side shows no spread, so it never
# decides); the outcomes checked here do not depend on more (each is a cachegrind run)
COMMON = ["-q", "--build", "make", "--metric", "instructions", "-r", "2", "-w", "0",
          "-n", "work", "{root}/work 20000"]


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=repo, timeout=120)


@pytest.mark.slow
def test_ab_against_a_recorded_baseline_fails_a_regression_and_passes_a_a(tmp_path, cache_env):
    require_tool("valgrind")
    repo = make_repo(tmp_path / "repo", [0, 300])
    git(repo, "checkout", "-q", "HEAD~1")
    subprocess.run(["make", "-s"], cwd=repo, check=True, capture_output=True)
    rec = _run(repo, "gate", "-q", "--record", "main", "-r", "2", "-w", "0", "--metric",
               "instructions", "-n", "work", "./work 20000")
    assert rec.returncode == 0, rec.stderr
    git(repo, "checkout", "-q", "main")
    slow = _run(repo, "ab", "--baseline", "branch:main", "--head", "HEAD", *COMMON,
                "--json", "-")
    assert slow.returncode == 1, slow.stderr + slow.stdout
    doc = json.loads(slow.stdout)
    validate_gate_json(doc)
    assert doc["kind"] == "ab" and doc["benchmarks"][0]["outcome"] == "slower"
    assert doc["revisions"]["head"]["subject"] == "extra=300"
    assert doc["revisions"]["baseline"]["session"]
    same = _run(repo, "ab", "--baseline", "branch:main", "--head", "HEAD~1", *COMMON,
                "--json", "-")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["benchmarks"][0]["outcome"] == "equivalent"
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_baseline_options_misused_are_one_line(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    for args, words in ((["--base", "HEAD", "--baseline", "branch:main"], "not both"),
                        (["-r", "3"], "--baseline"),
                        (["--baseline", "branch:main"], "no baseline of branch")):
        res = _run(repo, "ab", "-q", *args, "{root}/work 1")
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert words in res.stderr


def test_a_failing_head_build_against_a_baseline_exits_3_and_leaves_no_tree(tmp_path,
                                                                            cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    plan = RunPlan(benchmarks=[BenchmarkSpec("work", "true")], runs=5, warmup=0, min_runs=1,
                   cwd="/tmp", seed=1)
    with Store.open(cache_env["BENCHLAB_DB"]) as store:
        uid = execute(plan, store, Here(ScriptedRunner())).session.uid
    res = _run(repo, "ab", "-q", "--baseline", uid, "--build", "echo nope >&2; exit 4",
               "-n", "work", "{root}/work 1")
    assert res.returncode == 3, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "failed with exit code 4" in lines[0] and "nope" in lines[0]
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert not list(Path(cache_env["XDG_CACHE_HOME"]).glob("benchlab/builds/*/worktree-p*"))
