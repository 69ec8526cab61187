"""Every gating command that measures, interrupted while it measures: Ctrl-C exits 130 and
SIGTERM 143 (never 1, the status of a regression, so a cancelled CI job does not read as one),
with one line saying what is stored, no traceback, and the session marked interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from benchlab.store.db import Store
from tests.ci.conftest import make_repo
from tests.conftest import BENCHLAB

pytestmark = pytest.mark.slow


def _runs(db: Path) -> int:
    try:
        with Store.open(db, readonly=True) as store:
            return sum(s["n_runs"] for s in store.sessions())
    except Exception:  # the store is being created
        return 0


def _interrupt_while_measuring(argv: list[str], cwd: Path, db: Path, sig: int
                               ) -> tuple[int, str]:
    """Start ``argv``, send ``sig`` once runs are stored; (exit status, stderr)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and _runs(db) == 0 and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1]
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def _check(code: int, err: str, sig: int, db: Path) -> None:
    assert code == 128 + sig, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("benchlab: interrupted; "), err
    with Store.open(db, readonly=True) as store:
        assert [s["status"] for s in store.sessions()][-1] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_gate_interrupted_while_measuring(tmp_path, cache_env, sig):
    db = Path(cache_env["BENCHLAB_DB"])
    code, err = _interrupt_while_measuring(
        [BENCHLAB, "gate", "-q", "-r", "200", "--record", "main", "--junit",
         str(tmp_path / "j.xml"), "sleep 0.05"], tmp_path, db, sig)
    _check(code, err, sig, db)
    assert not (tmp_path / "j.xml").exists()  # no verdict written for a cancelled job


def test_bisect_interrupted_while_measuring(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 0, 300])
    db = Path(cache_env["BENCHLAB_DB"])
    code, err = _interrupt_while_measuring(
        [BENCHLAB, "bisect", "-q", "--good", "HEAD~2", "--bad", "HEAD", "--build", "make",
         "--max-time", "60", "--", "sleep 0.1"], repo, db, signal.SIGINT)
    _check(code, err, signal.SIGINT, db)


def test_ab_interrupted_by_ctrl_c_while_measuring(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "extra").write_text("5\n")
    db = Path(cache_env["BENCHLAB_DB"])
    code, err = _interrupt_while_measuring(
        [BENCHLAB, "ab", "-q", "--build", "make", "--max-time", "60", "sleep 0.1"], repo, db,
        signal.SIGINT)
    _check(code, err, signal.SIGINT, db)
