"""Commands of ab, gate and bisect run as ``run`` runs them: through ``sh`` by default (its
start-up time subtracted), with ``-N`` split into words, and then a command that needs a shell
is refused in one line before anything is built."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from benchlab.store.db import Store
from tests.ci.conftest import make_repo
from tests.conftest import BENCHLAB

pytestmark = pytest.mark.slow


def test_ab_runs_commands_through_a_shell_by_default(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    res = subprocess.run([BENCHLAB, "ab", "-q", "--base", "HEAD", "--head", "HEAD", "--build",
                          "make", "--warmup", "0", "--min-pairs", "5", "--max-time", "3",
                          "--json", "-", "{root}/work 1000 && test -x {root}/work"],
                         cwd=repo, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    uid = json.loads(res.stdout)["session"]
    with Store.open(cache_env["BENCHLAB_DB"], readonly=True) as store:
        sess = store.get_session(uid)
        assert sess["protocol"]["shell"] == "sh"
        runs = store.runs(session_id=sess["id"])
        assert runs and all(r["shell_overhead_ns"] for r in runs if not r["warmup"])


def test_a_command_that_needs_a_shell_is_refused_under_n_before_building(tmp_path,
                                                                         cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    start = time.monotonic()
    for argv in (["ab", "--build", "sleep 60"], ["bisect", "--good", "HEAD", "--bad", "HEAD",
                                                  "--build", "sleep 60", "--"],
                 ["gate", "--record", "main"]):
        res = subprocess.run([BENCHLAB, *argv[:1], "-q", "-N", *argv[1:],
                              "{root}/work 1 > out.txt"], cwd=repo, capture_output=True,
                             text=True, timeout=60)
        assert res.returncode == 2, res.stderr
        [line] = res.stderr.strip().splitlines()
        assert "redirection" in line or "shell" in line, line
    assert time.monotonic() - start < 40  # nothing was built
    assert not (repo / "out.txt").exists()
