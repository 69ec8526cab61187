"""How criterion's and pytest-benchmark's commands are narrowed to the benchmarks a gate has
not decided (``Harness.narrow``), read back through the real ``/bin/sh``: ``cargo`` and
``pytest`` are shell functions that print the words they receive, so each test sees exactly
the arguments the harness would get. That the harnesses then run only those benchmarks is
tests/ci/test_harness_gates.py's (real cargo + criterion, real pytest-benchmark)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from benchlab.measure.harnesses import get_harness
from benchlab.measure.harnesses.command_words import simple_commands
from benchlab.measure.harnesses.criterion import id_filter
from benchlab.measure.harnesses.pytest_benchmark import keyword_of

#: Shell functions standing for the programs: each prints its arguments, one per line.
PRINTERS = "cargo() { printf '%s\\n' \"$@\"; }; pytest() { printf '%s\\n' \"$@\"; }; "


def received(command: str, **env: str) -> list[str]:
    """The words ``cargo``/``pytest`` receive when ``sh`` runs ``command``."""
    proc = subprocess.run(["/bin/sh", "-c", PRINTERS + command], capture_output=True,
                          text=True, check=True, env={**os.environ, **env})
    return proc.stdout.splitlines()


IDS = ["fib 12", "grp/f(x)/1.5"]
FILTER = r"^(fib 12|grp/f\(x\)/1\.5)$"


@pytest.mark.parametrize("command, words", [
    ("cargo bench", ["bench", "--", FILTER]),
    ("cargo bench --locked --bench fib -- --warm-up-time 0.05 --sample-size 10",
     ["bench", "--locked", "--bench", "fib", "--", FILTER, "--warm-up-time", "0.05",
      "--sample-size", "10"]),
    # cargo's BENCHNAME and criterion's filter (with --exact) are replaced, values kept
    ("cargo +stable bench fib --bench b -p x -- --noplot",
     ["+stable", "bench", "--bench", "b", "-p", "x", "--", FILTER, "--noplot"]),
    ("cargo bench -- 'fib 1' --exact -ns base", ["bench", "--", FILTER, "-ns", "base"]),
    ("cargo bench -q -- -s base fib", ["bench", "-q", "--", FILTER, "-s", "base"]),
    # the cargo bench of a line, with a redirection and a variable as written
    ('true && cargo bench --features "$FEATURES" 2>/dev/null; true',
     ["bench", "--features", "a b", "--", FILTER]),
], ids=["bare", "options", "benchname", "exact", "filter-last", "line"])
def test_criterion_filter_goes_after_the_double_dash_in_place_of_the_given_one(command, words):
    narrowed = get_harness("criterion").narrow(command, IDS)
    assert narrowed is not None
    assert received(narrowed, FEATURES="a b") == words


def test_the_criterion_filter_matches_the_ids_exactly():
    """Anchored and escaped: neither a prefix (``fib 1``) nor a regex character matches more."""
    pattern = re.compile(id_filter(IDS))
    assert [i for i in ["fib 12", "fib 123", "fib 1", "grp/f(x)/1.5", "grp/fx/1x5"]
            if pattern.search(i)] == ["fib 12", "grp/f(x)/1.5"]


@pytest.mark.parametrize("command", ["make bench", "cargo build", "cargo bench -- 'fib",
                                     "cargo test"])
def test_criterion_without_a_cargo_bench_is_not_narrowed(command):
    assert get_harness("criterion").narrow(command, IDS) is None


NAMES = ["test_fib10", "test_fibp[5]", "benchmarks/test_x.py::TestX::test_y[a-b]"]
EXPRESSION = "test_fib10 or test_fibp[5] or test_y[a-b]"


@pytest.mark.parametrize("command, words", [
    ("pytest -q benchmarks", ["-q", "benchmarks", "-k", EXPRESSION]),
    # a -k given is kept: the narrowed runs stay within it
    ("pytest -k 'fib and not slow' -q",
     ["-k", f"(fib and not slow) and ({EXPRESSION})", "-q"]),
    ('pytest -k"$SELECT" x', ["-k", f"(fib or y) and ({EXPRESSION})", "x"]),
    ("pytest -k=fib", ["-k", f"(fib) and ({EXPRESSION})"]),
    ("cd . && pytest -q  # the benchmarks\n", ["-q", "-k", EXPRESSION]),
], ids=["appended", "given", "variable", "equals", "line"])
def test_pytest_k_names_the_benchmarks_within_a_given_k(command, words):
    narrowed = get_harness("pytest-benchmark").narrow(command, NAMES)
    assert narrowed is not None
    assert received(narrowed, SELECT="fib or y") == words


def test_a_parameter_id_k_cannot_spell_runs_every_parameter():
    assert keyword_of("test_fib[8]") == "test_fib[8]"
    assert keyword_of("test_fib[a b]") == "test_fib"  # more, never fewer
    assert keyword_of("t.py::test_fib[x::y]") == "test_fib[x::y]"
    assert keyword_of("test fib") is None
    assert get_harness("pytest-benchmark").narrow("pytest", ["test fib"]) is None
    assert get_harness("pytest-benchmark").narrow("pytest 'x", ["test_a"]) is None


def test_command_words_keep_redirections_and_assignments_out():
    (first, second) = simple_commands("A=1 cargo bench 2>&1 > 'l o g' -q; echo $(a b)")
    assert [w.text for w in first.args] == ["cargo", "bench", "-q"]
    assert [w.text for w in second.args] == ["echo", "$(a b)"]
