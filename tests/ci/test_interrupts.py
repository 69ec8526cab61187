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


def _as_background_job() -> None:
    """What a shell does to a job it starts with ``&`` without job control: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupt_while_measuring(argv: list[str], cwd: Path, db: Path, sig: int,
                               background: bool = False) -> tuple[int, str]:
    """Start ``argv`` in its own process group, send ``sig`` to the group once runs are
    stored (as a CI runner cancels a job); (exit status, stderr). ``background``: started
    with SIGINT ignored, as a background job."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=_as_background_job if background else None)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and _runs(db) == 0 and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1]
        os.killpg(proc.pid, sig)
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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ab_started_as_a_background_job_still_stops_on_sigint_and_sigterm(tmp_path, cache_env,
                                                                          sig):
    """A job a CI script started with ``&`` inherits SIGINT ignored; the runner's cancel
    (SIGINT to the process group, then SIGTERM) still ends it as interrupted, 130 or 143."""
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "extra").write_text("5\n")
    db = Path(cache_env["BENCHLAB_DB"])
    code, err = _interrupt_while_measuring(
        [BENCHLAB, "ab", "-q", "--build", "make", "--max-time", "60", "sleep 0.1"], repo, db,
        sig, background=True)
    _check(code, err, sig, db)
