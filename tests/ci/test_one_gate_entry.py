"""``ab``, ``gate`` and every ``bisect`` step are one job entry
(:func:`benchlab.ci.gate_job.run_gate`): a benchmark that fails is the same failure report,
exit 3 with its outputs written, whichever command measured it. Real builds and processes; the
program fails at once, so nothing here depends on timing."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

from benchlab.store.db import Store
from tests.ci.conftest import git, make_repo
from tests.ci.test_gate import validate_gate_json
from tests.conftest import BENCHLAB

SRC = Path(__file__).resolve().parents[2] / "src" / "benchlab"
#: What measures a gate's candidate: paired runs, paired harness runs, a fresh session.
MEASURING = {"run_ab", "run_ab_harness", "run_fresh"}
QUICK = ["--warmup", "1", "--min-pairs", "3", "--max-time", "5"]


def _repo_whose_program_fails_at_head(tmp_path):
    repo = make_repo(tmp_path / "repo", [0, 0])
    work = (repo / "work.c").read_text()
    (repo / "work.c").write_text(work.replace("return (int)(x & 0);", "return 3;"))
    git(repo, "commit", "-qam", "exits with status 3")
    return repo


def _gate(repo, *argv):
    res = subprocess.run([BENCHLAB, argv[0], "-q", "--json", "-", "--build", "make", *QUICK,
                          *argv[1:]],
                         cwd=repo, capture_output=True, text=True, timeout=180)
    doc = json.loads(res.stdout)
    validate_gate_json(doc)
    return res, doc


def test_a_bisect_step_that_fails_is_the_failure_report_of_ab(tmp_path, cache_env):
    repo = _repo_whose_program_fails_at_head(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    ab, ab_doc = _gate(repo, "ab", "--base", "HEAD~1", "--head", "HEAD", "{root}/work 1000")
    bisect, doc = _gate(repo, "bisect", "--good", "HEAD~1", "--bad", "HEAD", "--",
                        "{root}/work 1000")
    assert ab.returncode == 3 and bisect.returncode == 3, bisect.stderr
    assert ab_doc["verdict"] == doc["verdict"] == "failed"
    assert ab_doc["failure"].startswith("benchmark work 1000@head exited with code 3")
    # the step's report is ab's, named by the commit it measured
    assert doc["kind"] == "bisect"
    assert doc["failure"] == f"the benchmark failed on {head[:12]}: {ab_doc['failure']}"
    assert bisect.stderr.strip().splitlines() == [f"benchlab: error: {doc['failure']}"]
    with Store.open(tmp_path / "ab.db", readonly=True) as store:
        names = {s["name"]: s["status"] for s in store.sessions()}
    assert names[f"bisect {head[:12]}"] == "failed"
    assert len(git(repo, "worktree", "list").splitlines()) == 1



def test_only_the_one_entry_measures_a_gate():
    """No command module or bisect step measures a gate's candidate on its own: every call of
    what measures one is in ci/gate_job.py (the benchmark scripts of bench/ call the engine
    directly, outside the package)."""
    callers = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in MEASURING:
                    callers.add(path.relative_to(SRC).as_posix())
    assert callers == {"ci/gate_job.py"}
