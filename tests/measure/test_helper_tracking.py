"""The exec helper's tracking cgroup, now joined by a thread while the session sets up
(``measure.spawn.start_helper``): the first target still starts inside the leaf, and the leaf is
gone once the process has exited. Real helper, real cgroup v1 hierarchy (root)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="tracking cgroups need root")

_FIRST_RUN = """
import os, sys
from benchlab.measure.spawn import SpawnRequest, spawn_measured, start_helper
start_helper()  # the helper's move into its leaf runs in a thread from here
out = sys.argv[1]
m = spawn_measured(SpawnRequest(["cat", "/proc/self/cgroup"], stdout_path=out))
assert m.status == "ok", m
print(os.getpid())
"""


def test_the_first_run_starts_inside_the_tracking_leaf_and_the_leaf_goes_at_exit(tmp_path):
    out = tmp_path / "cgroups.txt"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_FIRST_RUN), str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    pid = int(proc.stdout)
    lines = out.read_text().splitlines()
    tracked = [line for line in lines
               if line.split(":")[1] in ("freezer", "pids") and "/benchlab/track-" in line]
    assert tracked and f"/benchlab/track-{pid}-" in tracked[0], lines
    for hierarchy in ("freezer", "pids"):
        parent = Path("/sys/fs/cgroup") / hierarchy / "benchlab"
        assert not list(parent.glob(f"track-{pid}-*")) if parent.is_dir() else True
