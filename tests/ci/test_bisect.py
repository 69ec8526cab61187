"""``benchlab bisect`` in a throwaway repository whose program does 30 % more work from one
commit on, with a commit that does not build before it (skipped, as git bisect skip). Steps
are judged on instruction counts (exact under valgrind), so the answer does not depend on the
machine's load."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.ci.conftest import git, make_repo
from tests.ci.test_gate import validate_gate_json
from tests.conftest import BENCHLAB, require_tool

pytestmark = pytest.mark.slow

FAST = ["--metric", "instructions", "--warmup", "0", "--min-pairs", "5", "--max-time", "3"]


def test_bisect_names_the_commit_that_regressed_and_skips_what_does_not_build(tmp_path,
                                                                             cache_env):
    require_tool("valgrind")
    repo = make_repo(tmp_path / "repo", [0, 0])
    good_work = (repo / "work.c").read_text()
    (repo / "work.c").write_text("not C at all\n")
    git(repo, "commit", "-qam", "broken build")
    (repo / "work.c").write_text(good_work)
    git(repo, "commit", "-qam", "fixed build")
    for extra, subject in ((300, "the regression"), (300, "after it")):
        (repo / "extra").write_text(f"{extra}\n")
        (repo / "touched").write_text(subject)
        git(repo, "add", "extra", "touched")
        git(repo, "commit", "-qm", subject)
    expected = git(repo, "rev-parse", "HEAD~1")
    res = subprocess.run([BENCHLAB, "bisect", "-q", "--good", "HEAD~5", "--bad", "HEAD",
                          "--build", "make", *FAST, "--json", "-", "--", "{root}/work 20000"],
                         cwd=repo, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    validate_gate_json(doc)
    assert doc["revisions"]["first_bad"]["commit"] == expected
    assert doc["revisions"]["first_bad"]["subject"] == "the regression"
    [d] = doc["benchmarks"]
    assert d["outcome"] == "slower" and d["low"] > 1.1
    assert f"first bad commit: {expected} the regression" in doc["summary"]
    assert any("skipped" in note for note in doc["notes"])  # the broken build, at a middle
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_bisect_bad_input_is_one_line(tmp_path, cache_env):
    """(Nothing to bisect when bad is not slower: test_bisect_scripted.py, no measuring.)"""
    repo = make_repo(tmp_path / "repo", [0, 0])
    for args, words in ((["--good", "HEAD", "--bad", "HEAD"], "same commit"),
                        (["--good", "HEAD", "--bad", "HEAD~1"], "is an ancestor of --good"),
                        (["--good", "nope", "--bad", "HEAD"], "unknown revision")):
        res = subprocess.run([BENCHLAB, "bisect", *args, "--", "{root}/work 1"], cwd=repo,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and words in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_bisect_names_a_commit_of_a_merged_branch_and_its_merge(tmp_path, cache_env):
    from tests.ci.test_bisect_scripted import _merged_repo

    require_tool("valgrind")
    repo = _merged_repo(tmp_path)
    res = subprocess.run([BENCHLAB, "bisect", "-q", "--good", "v1", "--bad", "v2",
                          "--build", "make", *FAST, "--json", "-", "--", "{root}/work 20000"],
                         cwd=repo, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    validate_gate_json(doc)
    first = doc["revisions"]["first_bad"]
    assert first["subject"] == "the regression"
    assert first["merged_by"] == git(repo, "rev-parse", "v2")
    assert first["merged_by_subject"] == "Merge development into release"
    assert "brought in by merge" in doc["summary"]
