"""Fake cgroup filesystems in a tmp dir, for layouts this machine does not have.

This machine's cgroup2 mount (/sys/fs/cgroup/unified) has no cpu/memory/cpuset controllers, and
its v1 controllers are each mounted separately. The fakes model what benchlab relies on:

* mkdir of a cgroup creates its interface files: on v2 for the controllers the parent enabled in
  ``cgroup.subtree_control`` (so a controller that was not enabled has no files, as on a real
  kernel); on v1 for the controllers of the hierarchy;
* rmdir removes a cgroup with its interface files, and refuses (EBUSY) while child cgroups or
  tasks exist.

Each fake mount root holds a ``.fake-cgroupfs`` marker: ``v2``, or ``v1 <controllers>``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchlab.control.cgroups import fs as cgroups  # where make_dir and remove_dir live

ROOT_CONTROLLERS = "cpuset cpu io memory hugetlb pids rdma misc"
MARKER = ".fake-cgroupfs"

V2_FILES = {
    "": ["cgroup.procs", "cgroup.controllers", "cgroup.subtree_control", "cgroup.events", "cpu.stat"],
    "cpu": ["cpu.max", "cpu.weight"],
    "cpuset": ["cpuset.cpus", "cpuset.mems", "cpuset.cpus.effective", "cpuset.mems.effective"],
    "memory": ["memory.max", "memory.current", "memory.events"],
}
V1_FILES = {
    "": ["cgroup.procs", "tasks", "notify_on_release"],
    "cpu": ["cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.shares", "cpu.stat"],
    "cpuacct": ["cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"],
    "cpuset": ["cpuset.cpus", "cpuset.mems"],
    "memory": ["memory.limit_in_bytes", "memory.max_usage_in_bytes", "memory.use_hierarchy", "memory.oom_control"],
}


def make_fake_cgroup2(root: Path, controllers: str = ROOT_CONTROLLERS) -> Path:
    """Write the root of a fake cgroup2 mount under ``root`` and return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("v2")
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("")
    (root / "cgroup.procs").write_text("1\n")
    return root


def make_fake_cgroup1(root: Path, controllers: str) -> Path:
    """Write the root of a fake v1 hierarchy with ``controllers`` (e.g. "cpu,cpuacct")."""
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text(f"v1 {controllers}")
    for controller in [""] + controllers.split(","):
        for name in V1_FILES.get(controller, []):
            (root / name).touch()
    return root


def _marker(path: Path) -> str:
    for ancestor in path.parents:
        if (ancestor / MARKER).exists():
            return (ancestor / MARKER).read_text()
    raise AssertionError(f"{path} is not inside a fake cgroupfs")


def fake_cgroupfs_mkdir(path: Path) -> None:
    """mkdir with cgroupfs semantics: the new cgroup gets its interface files."""
    path = Path(path)
    kind = _marker(path)
    os.mkdir(path)
    if kind == "v2":
        enabled = [c.lstrip("+") for c in (path.parent / "cgroup.subtree_control").read_text().split()]
        for controller in [""] + enabled:
            for name in V2_FILES.get(controller, []):
                (path / name).touch()
        (path / "cgroup.controllers").write_text(" ".join(enabled) + "\n")
    else:
        for controller in [""] + kind.split()[1].split(","):
            for name in V1_FILES.get(controller, []):
                (path / name).touch()


def fake_cgroupfs_rmdir(path: Path) -> None:
    """rmdir with cgroupfs semantics: interface files vanish with the directory; EBUSY while in use."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if any(entry.is_dir() for entry in path.iterdir()):
        raise OSError(16, "Device or resource busy", str(path))
    procs = path / "cgroup.procs"
    if procs.exists() and procs.read_text().split():
        raise OSError(16, "Device or resource busy", str(path))
    for entry in path.iterdir():
        entry.unlink()
    os.rmdir(path)


@pytest.fixture
def fake_cgroupfs(monkeypatch):
    """Make benchlab's cgroup mkdir/rmdir behave like cgroupfs inside fake trees."""
    monkeypatch.setattr(cgroups, "make_dir", fake_cgroupfs_mkdir)
    monkeypatch.setattr(cgroups, "remove_dir", fake_cgroupfs_rmdir)


@pytest.fixture
def fake_v2(tmp_path, fake_cgroupfs):
    """A fake cgroup2 root with cpu, cpuset and memory available."""
    return make_fake_cgroup2(tmp_path / "cgroup2")
