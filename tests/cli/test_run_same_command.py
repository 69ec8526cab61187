"""The same command given twice is an A/A comparison, as in hyperfine: real runs of `true`,
stored under distinct names, and a verdict that finds no difference."""

from __future__ import annotations

import json

from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def _names(db) -> list[str]:
    with Store.open(db) as store:
        return [b["name"] for b in store.benchmarks(store.sessions()[0]["id"])]


def test_same_command_twice_is_numbered_and_compared_as_a_over_a(db_path):
    # --conf-level 0.999: the verdict of two identical commands says "faster" with the test's
    # own error rate; at 0.1% this test stays quiet while still reading the verdict's outcome
    proc = run_cli("run", "-N", "-r", "20", "--conf-level", "0.999", "--json", "true", "true",
                   db=db_path, check=True)
    out = json.loads(proc.stdout)
    assert [b["name"] for b in out["benchmarks"]] == ["true #1", "true #2"]
    assert _names(db_path) == ["true #1", "true #2"]
    [candidate] = out["verdict"]["candidates"]
    assert candidate["outcome"] in ("equivalent", "undecided")
    assert {candidate["name"], out["verdict"]["baseline"]} == {"true #1", "true #2"}


def test_text_output_names_both_and_a_third_command_keeps_its_name(db_path):
    proc = run_cli("run", "-N", "-r", "5", "true", "false --help", "true", "--ignore-failure",
                   db=db_path, check=True)
    assert "true #1" in proc.stdout and "true #2" in proc.stdout
    assert _names(db_path) == ["true #1", "false --help", "true #2"]


def test_names_the_user_gives_are_kept_and_repeated_ones_refused(db_path, tmp_path):
    run_cli("run", "-N", "-r", "3", "-n", "first", "-n", "second", "true", "true",
            db=db_path, check=True)
    assert _names(db_path) == ["first", "second"]
    other = tmp_path / "other.db"
    proc = run_cli("run", "-N", "-r", "3", "-n", "x", "-n", "x", "true", "true", db=other)
    assert_one_line_error(proc, "names repeat", "-n")
    assert not other.exists() or _sessions(other) == 0


def _sessions(db) -> int:
    with Store.open(db) as store:
        return len(store.sessions())
