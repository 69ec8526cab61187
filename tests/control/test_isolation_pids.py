"""The pids limit of ``--isolation cgroup`` (real cgroup v1 pids controller, as root): a bounded
fork bomb stops at ``--pids-max``; without the option the cgroup level has a default limit."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from benchlab.control.cgroups import CgroupLimits, detect_layout
from benchlab.errors import UserError
from benchlab.measure import build
from benchlab.measure.isolation import CGROUP_PIDS_MAX
from benchlab.store import Store
from tests.conftest import run_cli

# Forks up to N children that sleep until the parent ends; prints how many forks succeeded.
FORKER = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]), ok = 0;
    pid_t kids[4096];
    for (int i = 0; i < n && i < 4096; i++) {
        pid_t p = fork();
        if (p == 0) { pause(); _exit(0); }
        if (p < 0) break;
        kids[ok++] = p;
    }
    for (int i = 0; i < ok; i++) kill(kids[i], SIGKILL);
    printf("forked=%d\n", ok);
    return 0;
}
"""

needs_pids = pytest.mark.skipif(
    os.geteuid() != 0 or detect_layout().mount_for("pids") is None,
    reason="needs root and a pids cgroup controller")


def _forked(db: Path, *options: str) -> tuple[list[float], dict]:
    exe = build.build_source_text("forker", FORKER)
    run_cli("run", "--runs", "2", "-w", "0", "-N", *options, "--metric", r"forked=forked=(\d+)",
            f"{exe} 60", db=db, check=True)
    store = Store.open(db)
    sess = store.sessions()[0]
    runs = store.runs(session_id=sess["id"], include_warmup=False)
    with sqlite3.connect(db) as conn:
        (setup,) = [json.loads(r[0]) for r in conn.execute("SELECT data FROM setups")]
    return [v for r in runs for v in store.samples_of_run(r["id"])["forked"]], setup


@needs_pids
def test_a_bounded_fork_bomb_stops_at_the_pids_limit(tmp_path):
    limited, setup = _forked(tmp_path / "a.db", "--isolation", "cgroup", "--pids-max", "20")
    # 20 tasks in the cgroup: the forker itself, its children, and at most a task or two the
    # spawn path still had there when the forker started
    assert all(16 <= n <= 19 for n in limited), limited
    assert setup["cgroup"]["pids_max"] == 20
    free, _ = _forked(tmp_path / "b.db", "--isolation", "bare")
    assert free == [60.0, 60.0]


@needs_pids
def test_the_cgroup_level_has_a_default_pids_limit(tmp_path):
    counts, setup = _forked(tmp_path / "c.db", "--isolation", "cgroup")
    assert counts == [60.0, 60.0] and setup["cgroup"]["pids_max"] == CGROUP_PIDS_MAX


def test_a_bad_pids_limit_is_refused(tmp_path):
    proc = run_cli("run", "--runs", "2", "--pids-max", "0", "true", db=tmp_path / "d.db")
    assert proc.returncode == 2 and "--pids-max" in proc.stderr
    with pytest.raises(UserError, match="pids"):
        CgroupLimits(pids_max=0)
