"""The exec helper is born in its tracking cgroup: the spawning thread joins
the leaf itself (``0`` into ``tasks``: no RCU grace-period wait, unlike moving a process in
through ``cgroup.procs``, 7-15 ms), starts the helper, and goes back. No tracker thread, no wait
before the first run. Real helper, real cgroup v1 hierarchy (root)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from benchlab.control.cgroups.layout import CgroupLayout
from benchlab.control.cgroups.tracking import own_cgroup, tracked_spawns
from benchlab.measure.spawn import helper_client

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="tracking cgroups need root")


def _own_lines() -> list[str]:
    with open("/proc/thread-self/cgroup") as fh:
        return fh.read().splitlines()


def test_a_process_started_inside_is_born_in_the_leaf_and_the_thread_goes_back():
    before = _own_lines()
    with tracked_spawns() as group:
        if group is None:
            pytest.skip("no freezer or pids cgroup v1 hierarchy to track processes in")
        inside = _own_lines()
        child = subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True, text=True,
                               check=True).stdout.splitlines()
    try:
        leaf = f"/{group.path.parent.name}/{group.path.name}"
        assert any(line.endswith(leaf) for line in inside), inside
        assert any(line.endswith(leaf) for line in child), child
        assert _own_lines() == before, "the thread did not go back to its own cgroup"
        assert group.pids() == []  # the child has exited; nothing of ours is left inside
    finally:
        path = Path(group.path)
        group.remove()
    assert not path.exists()


def test_the_helper_is_tracked_when_its_constructor_returns_without_a_thread():
    """Fails on the code that moved the helper in afterwards: the tracker thread was still
    running (and the helper outside its leaf) when the constructor returned."""
    def trackers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "benchlab-helper-tracking"}

    before = trackers()  # another test's, still finishing: not this helper's
    server = helper_client._HelperServer(helper_client.helper_path())
    try:
        done = server._tracking_done.is_set()
        threads = trackers() - before
        with open(f"/proc/{server.pid}/cgroup") as fh:
            lines = fh.read().splitlines()
        if server.tracking is None and not threads:
            pytest.skip("no freezer or pids cgroup v1 hierarchy to track processes in")
        assert done and not threads, "the helper was left to a tracker thread"
        assert any(f"/benchlab/track-{os.getpid()}-" in line for line in lines), lines
    finally:
        leaf = server.tracking.path if server.tracking is not None else None
        server.close()
    assert leaf is None or not Path(leaf).exists()


def test_the_threads_own_cgroup_allows_for_a_mounted_sub_tree(tmp_path):
    """A container's hierarchy mounted from a sub-tree (mountinfo's root field): the thread's
    path is taken relative to it; a path outside it, a missing controller or a directory that
    does not exist means None (the fallback: moving the helper in afterwards)."""
    mount = tmp_path / "freezer"
    (mount / "job" / "x").mkdir(parents=True)
    (mount / "job" / "x" / "tasks").write_text("")
    mountinfo = (f"40 30 0:30 /docker/abc {mount} rw,nosuid - cgroup cgroup rw,freezer\n"
                 f"41 30 0:31 / /other rw - cgroup cgroup rw,pids\n")
    cgroup = "7:freezer:/docker/abc/job/x\n6:pids:/\n"
    assert own_cgroup(mount, "freezer", cgroup, mountinfo) == mount / "job" / "x"
    assert own_cgroup(mount, "freezer", "7:freezer:/elsewhere/job\n", mountinfo) is None
    assert own_cgroup(mount, "freezer", "6:pids:/\n", mountinfo) is None
    assert own_cgroup(mount, "freezer", "7:freezer:/docker/abc/gone\n", mountinfo) is None
    assert own_cgroup(mount, "freezer", cgroup, "") is None


def test_without_a_tracking_hierarchy_nothing_is_made():
    with tracked_spawns(CgroupLayout(version="none")) as group:
        assert group is None
