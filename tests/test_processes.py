"""``benchlab.processes.process_stats``: every process's /proc stat fields, read one way by the
sweeps that look for a parent or a process group (ab's orphan builds, the scratch sweep's
children, the cluster tests' descendants)."""

from __future__ import annotations

import os
import shutil
import subprocess

from benchlab.processes import process_stats
from benchlab.store.owner import process_start


def test_a_child_with_parentheses_and_spaces_in_its_name_is_read_right(tmp_path):
    """The command name ``a) b (c`` would shift every field of a naive split; the fields start
    after its last ')': state, parent, process group and start time are this child's."""
    odd = tmp_path / "a) b (c"
    shutil.copy("/bin/sleep", odd)
    child = subprocess.Popen([str(odd), "30"], start_new_session=True)
    try:
        found = {pid: fields for pid, fields in process_stats()}
        fields = found[child.pid]
        assert fields[0] in "RSD"
        assert int(fields[1]) == os.getpid()
        assert int(fields[2]) == child.pid  # its own session, so its own process group
        assert process_start(child.pid).endswith(f":{fields[19]}")
        assert os.getpid() in found and int(found[os.getpid()][1]) == os.getppid()
    finally:
        child.kill()
        child.wait()
    assert child.pid not in dict(process_stats())  # reaped: gone from /proc
