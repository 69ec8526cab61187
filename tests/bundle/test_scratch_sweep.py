"""Scratch directories of every kind left by a benchlab killed with SIGKILL are swept by the next
session (or bundle analysis): a reproduction's, a bundle analysis's, cachegrind's and a container root's (before,
``benchlab-reproduce-*`` and ``benchlab-counts-*`` carried no pid and stayed forever).

A real process makes them with the real helpers (``core.scratch.make_scratch``, and
``measure.counts``' and ``control.containers``' own prefixes) and is killed with SIGKILL; the
next ``benchlab run`` (same ``TMPDIR``) removes them, and keeps those of a live process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.forked import run_cli

MAKE_AND_DIE = """
import os, signal, tempfile
from benchlab.core.scratch import make_scratch
make_scratch("reproduce")
make_scratch("analysis")
tempfile.mkdtemp(prefix=f"benchlab-counts-p{os.getpid()}-")   # as measure.counts names it
tempfile.mkdtemp(prefix=f"benchlab-rootfs-p{os.getpid()}-")   # as control.containers names it
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_next_session_sweeps_every_kind_left_by_kill_9(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    proc = subprocess.run([sys.executable, "-c", MAKE_AND_DIE], env=env, timeout=60)
    assert proc.returncode == -9
    left = sorted(p.name.split("-p")[0] for p in scratch.iterdir())
    assert left == ["benchlab-analysis", "benchlab-counts", "benchlab-reproduce",
                    "benchlab-rootfs"]
    alive = scratch / f"benchlab-reproduce-p{os.getpid()}-mine"
    alive.mkdir()
    run_cli("run", "-N", "--runs", "1", "true", "-q", db=tmp_path / "x.db", check=True,
            env={"TMPDIR": str(scratch)})
    assert [p for p in scratch.iterdir()] == [alive]


def test_an_analysis_sweeps_too(tmp_path, bundled):
    """``reproduce --analysis-only`` (no session) sweeps before making its own scratch."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    assert subprocess.run([sys.executable, "-c", MAKE_AND_DIE], env=env,
                          timeout=60).returncode == -9
    assert len(list(scratch.iterdir())) == 4
    run_cli("reproduce", str(bundled), "--analysis-only", env={"TMPDIR": str(scratch)})
    assert list(scratch.iterdir()) == []


def test_counts_and_rootfs_name_their_pid():
    """The two kinds made below the core spell the swept name themselves."""
    src = Path(__file__).resolve().parents[2] / "src" / "benchlab"
    assert 'prefix=f"benchlab-counts-p{os.getpid()}-"' in (src / "measure/counts.py").read_text()
    assert 'prefix=f"benchlab-rootfs-p{os.getpid()}-"' in \
        (src / "control/containers.py").read_text()
