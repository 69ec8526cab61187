"""Two benchlab processes sweep the same dead container parents at once.

Found under load in the full suite: one process's ``sweep_dead_parents`` listed a sub-cgroup
(``.../12754-w0/conmon``) that another process's sweep removed before it was scanned, and the
walk raised FileNotFoundError out of ``run --isolation podman``. Plain directories stand in for
the cgroup tree here: the race is in the walk, not in cgroupfs (rmdir behaves the same).
"""

from __future__ import annotations

import threading
from pathlib import Path

from benchlab.control.container_cgroups import _remove_tree


def test_concurrent_removals_of_one_tree_raise_nothing_and_remove_it(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    for round_ in range(30):
        root = tmp_path / f"parent{round_}"
        for worker in range(30):
            (root / f"{worker}-w0" / "conmon" / "payload").mkdir(parents=True)

        def sweep() -> None:
            try:
                _remove_tree(root)
            except BaseException as exc:  # noqa: BLE001 - any escape is the failure
                errors.append(exc)

        threads = [threading.Thread(target=sweep) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not root.exists()
    assert errors == []


def test_a_missing_tree_is_nothing_to_do(tmp_path: Path) -> None:
    _remove_tree(tmp_path / "gone")
    assert not (tmp_path / "gone").exists()


def test_a_shared_parent_removed_while_the_sweep_looks_is_nothing_to_do(tmp_path: Path,
                                                                        monkeypatch) -> None:
    """Another benchlab process removes the shared ``benchlab-containers`` parent once it is
    empty; a sweep that found it a moment before must list nothing, not raise (a full-suite run
    failed ``run --isolation podman`` with FileNotFoundError from ``Path.glob``'s scan, which
    checks the directory, then lists it). Here the parent vanishes as it is listed. Fails on
    the code before (``Path.glob``)."""
    import os

    from benchlab.control import container_cgroups

    root = tmp_path / "hierarchy"
    parent = root / container_cgroups.PARENT
    (parent / "999999-w0").mkdir(parents=True)  # a dead process's parent
    real_scandir = os.scandir

    def scandir_after_the_other_rmdir(path="."):
        if Path(path) == parent and parent.exists():
            (parent / "999999-w0").rmdir()
            parent.rmdir()  # the other process's rmdir, between the look and the listing
        return real_scandir(path)

    monkeypatch.setattr(container_cgroups, "_roots", lambda: [root])
    monkeypatch.setattr(os, "scandir", scandir_after_the_other_rmdir)
    assert container_cgroups.sweep_dead_parents() == []
    assert container_cgroups._worker_parents(root) == []
