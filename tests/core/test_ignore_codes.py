"""hyperfine's ``-i=CODES``: only the listed exit codes are tolerated; ``-i`` alone and
``-i=all-non-zero`` tolerate every failure; the bare flag never swallows the next command."""

from __future__ import annotations

import pytest

from benchlab.store import Store
from tests.conftest import assert_one_line_error, run_cli


def _only(db):
    with Store.open(db) as store:
        [s] = store.sessions()
        return s, store.runs(session_id=s["id"])


@pytest.mark.parametrize("flag", ["-i=3", "--ignore-failure=3", "-i=1,3", "-i=all-non-zero", "-i"])
def test_listed_or_all_codes_keep_measuring(db_path, flag):
    run_cli("run", "-q", "-r", "3", flag, "exit 3", db=db_path, check=True)
    session, runs = _only(db_path)
    assert session["status"] == "complete"
    assert [(r["status"], r["exit_code"]) for r in runs] == [("failed", 3)] * 3
    expected = True if flag in ("-i", "-i=all-non-zero") else ([1, 3] if "1" in flag else [3])
    assert session["protocol"]["ignore_failure"] == expected  # stored: a resume keeps it


def test_an_unlisted_code_stops_with_the_exact_option_to_add(db_path):
    proc = run_cli("run", "-q", "-r", "3", "-i=1,2", "exit 3", db=db_path)
    assert proc.returncode == 1, proc.stderr  # a failing command exits 1, as hyperfine
    assert "exited with code 3" in proc.stderr and "-i=3" in proc.stderr
    session, runs = _only(db_path)
    assert session["status"] == "failed" and len(runs) == 1


@pytest.mark.parametrize("bad", ["-i=x", "-i=0", "-i=256", "-i=", "--ignore-failure=1,,2"])
def test_bad_codes_are_one_line_and_create_nothing(db_path, bad):
    assert_one_line_error(run_cli("run", "-q", "-r", "2", bad, "exit 3", db=db_path),
                          "exit codes")
    assert not db_path.exists() or Store.open(db_path).sessions() == []


def test_after_double_dash_nothing_is_rewritten(db_path):
    """``--`` ends the options: a command spelled like the option stays a command."""
    proc = run_cli("run", "-q", "-r", "1", "-N", "--", "-i=3", db=db_path)
    assert proc.returncode == 2 and "-i=3" in proc.stderr and "exit codes" not in proc.stderr
