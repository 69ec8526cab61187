"""Re-measuring starts from the bundle's own C source: the workload is rebuilt into this
machine's binary cache (an empty one here, as on a colleague's machine), the commands point at
the new binary, and a binary that differs from the bundled digest gives a warning. Sessions run
through a shell (benchlab run's default) are recognised by the command's first word."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchlab.core.reproduce import prepared_plans, read_reproduction
from benchlab.store.bundle import read_bundle
from tests.bundle.test_archive import members_of
from tests.cli.forked import run_cli


def test_workload_is_rebuilt_from_the_bundled_source(tmp_path, monkeypatch):
    from benchlab.workloads import build_workload

    exe = str(build_workload("order_book"))
    db = tmp_path / "shell.db"
    run_cli("run", "-r", "3", "-n", "array", f"{exe} array 1000", db=db, check=True)
    uid = json.loads(run_cli("list", "--json", db=db, check=True).stdout)[0]["uid"]
    bundle = tmp_path / "shell.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(bundle), db=db, check=True)
    (entry,) = json.loads(members_of(bundle)["provenance/executables.json"])
    assert entry["through_shell"] and entry["program"] == exe
    assert entry["workload"] == "order_book"

    cache = tmp_path / "colleague-cache"
    monkeypatch.setenv("BENCHLAB_CACHE", str(cache))
    warnings: list[str] = []
    work = tmp_path / "work"
    ((doc, plan),) = prepared_plans(read_reproduction(read_bundle(bundle)), str(work), warnings)
    (rebuilt,) = list((cache / "bin").glob("order_book-*"))
    assert plan.benchmarks[0].command == f"{rebuilt} array 1000"
    same = hashlib.sha256(rebuilt.read_bytes()).hexdigest() == entry["sha256"]
    assert same == (not any("SHA-256 differs" in w for w in warnings))

    rebuilt.write_bytes(rebuilt.read_bytes() + b"\0")  # another build of the same source
    warnings.clear()
    prepared_plans(read_reproduction(read_bundle(bundle)), str(work), warnings)
    assert any("array: the executable's SHA-256 differs" in w for w in warnings), warnings
    assert Path(exe).is_file()
