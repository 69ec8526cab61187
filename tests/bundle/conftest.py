"""Sessions of the JayBeams order book (array vs map, bundled in benchlab.workloads), measured for
real with short runs (100,000 updates: a few ms each), shared by the tests of this directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.forked import run_cli

#: Updates per run: a few ms of CPU, so a session of 2 x 10 runs takes about a second.
OPS = 100_000


def order_book_session(db: Path, *extra: str, runs: int = 10) -> str:
    """Measure array vs map (interleaved) into ``db``; returns the new session's uid."""
    from benchlab.workloads import build_workload

    exe = str(build_workload("order_book"))
    run_cli("run", "-N", "-r", str(runs), "-w", "1", *extra, "-n", "array",
            f"{exe} array {OPS}", "-n", "map", f"{exe} map {OPS}", db=db, check=True)
    listed = json.loads(run_cli("list", "--json", db=db, check=True).stdout)
    return [s["uid"] for s in listed if s["kind"] == "run"][0]


@pytest.fixture(scope="package")
def measured(tmp_path_factory) -> tuple[Path, str]:
    """(database, uid) of one real order-book session, measured once for the package (and
    per worker): its tests only read it, and each bundle or report made from it costs seconds
    (the HTML report's figures)."""
    db = tmp_path_factory.mktemp("bundle") / "bench.db"
    return db, order_book_session(db)


@pytest.fixture(scope="package")
def bundled(measured, tmp_path_factory) -> Path:
    """The bundle of :func:`measured`'s session, made once with the real CLI; tests that
    alter it alter a copy (``repack``)."""
    db, uid = measured
    out = tmp_path_factory.mktemp("bundled") / "orders.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(out), db=db, check=True)
    return out
