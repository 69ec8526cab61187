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
