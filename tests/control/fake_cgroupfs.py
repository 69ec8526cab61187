"""A fake cgroup v2 filesystem in a tmp dir.

This machine's cgroup2 mount (/sys/fs/cgroup/unified) has no cpu/memory/cpuset controllers, so
the v2 code paths can only be exercised against a directory tree that looks like one. The fake
models what the code relies on: ``cgroup.controllers`` at the root, ``cgroup.subtree_control``
files, and rmdir removing a cgroup together with its interface files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchlab.control import cgroups

ROOT_CONTROLLERS = "cpuset cpu io memory hugetlb pids rdma misc"


def make_fake_cgroup2(root: Path, controllers: str = ROOT_CONTROLLERS) -> Path:
    """Write the root files of a cgroup2 mount under ``root`` and return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("")
    (root / "cgroup.procs").write_text("1\n")
    return root


def fake_cgroupfs_rmdir(path: Path) -> None:
    """rmdir with cgroupfs semantics: interface files vanish with the directory.

    Like the kernel, refuses (EBUSY) while child cgroups or tasks exist.
    """
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
def fake_v2(tmp_path, monkeypatch):
    """A fake cgroup2 root; cgroup removal in benchlab uses cgroupfs rmdir semantics."""
    monkeypatch.setattr(cgroups, "_remove_dir", fake_cgroupfs_rmdir)
    return make_fake_cgroup2(tmp_path / "cgroup2")
