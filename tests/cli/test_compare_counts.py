"""`benchlab compare` on counted instructions (`run --count instructions`, valgrind's cachegrind).

Counts are printed as counts, never as durations; deterministic counts get their exact relative
difference, counts that vary a little get the difference with its observed range. The expected
percentages come from valgrind run directly by the test (its own "I refs" line), not from
benchlab's store.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from benchlab.report.verdict_text import verdict_text
from benchlab.stats.verdict import CompareOptions, compare
from tests.cli.forked import run_cli
from tests.conftest import needs_tool

pytestmark = needs_tool("valgrind")

# A program whose instruction count varies by a few dozen instructions per run: it loops a
# random 0..63 extra times on top of a fixed amount of work (like a program reading the clock).
JITTER_C = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    unsigned char r = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&r, 1, 1, f) != 1) return 1;
    fclose(f);
    volatile unsigned long acc = 0;
    long n = atol(argv[1]) + (r % 64);
    for (long i = 0; i < n; i++) acc += i;
    return 0;
}
"""


def _valgrind_count(*argv: str) -> int:
    """Instructions of one run of ``argv``, as valgrind itself reports them (I refs)."""
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *argv],
                          capture_output=True, text=True, check=True, timeout=120)
    match = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    assert match, proc.stderr
    return int(match.group(1).replace(",", ""))


def _session_of(proc: subprocess.CompletedProcess) -> str:
    match = re.search(r"stored as session (\w+)", proc.stdout + proc.stderr)
    assert match, proc.stdout + proc.stderr
    return match.group(1)


def _run_counted(db, name: str, *command: str) -> str:
    proc = run_cli("run", "-N", "-r", "3", "--count", "instructions", "-n", name,
                   " ".join(command), db=db, check=True, timeout=240)
    return _session_of(proc)


@pytest.fixture(scope="module")
def seq_counts(tmp_path_factory):
    """One store with three counted sessions, read (never written) by the two tests below:
    ``small`` (seq 1000), ``large`` (seq 3000) and ``again`` (seq 1000 once more), and
    valgrind's own counts of seq 1000 and seq 3000. Each counted run is a valgrind run (~0.5 s
    of CPU): built once, not once per test."""
    db = tmp_path_factory.mktemp("counts") / "bench.db"
    return {"db": db, "small": _valgrind_count("seq", "1000"),
            "large": _valgrind_count("seq", "3000"),
            "sa": _run_counted(db, "small", "seq", "1000"),
            "sb": _run_counted(db, "large", "seq", "3000"),
            "sc": _run_counted(db, "again", "seq", "1000")}


@pytest.mark.slow
def test_deterministic_counts_give_the_exact_difference(seq_counts):
    """Two runs of `seq` under valgrind: the verdict states valgrind's own relative difference,
    and no count is printed as a duration (597,775 instructions were once '597.8 µs')."""
    db_path, small, large = seq_counts["db"], seq_counts["small"], seq_counts["large"]
    assert large > small
    sa, sb = seq_counts["sa"], seq_counts["sb"]
    proc = run_cli("compare", f"{sa}:small/instructions", f"{sb}:large/instructions",
                   db=db_path, check=True)
    text = proc.stdout
    data = json.loads(run_cli("compare", f"{sa}:small/instructions", f"{sb}:large/instructions",
                              "--json", db=db_path, check=True).stdout)["comparisons"][0]
    # benchlab's runs differ from the test's by their environment (a few hundred instructions
    # of start-up), so the stored counts are close to valgrind's, not equal.
    stored_a, stored_b = data["summary_a"]["median"], data["summary_b"]["median"]
    assert stored_a == pytest.approx(small, rel=0.01) and stored_b == pytest.approx(large,
                                                                                     rel=0.01)
    expected = 100 * (1 - stored_a / stored_b)
    assert expected == pytest.approx(100 * (1 - small / large), abs=0.3)
    verdict = re.search(r"verdict: (.*?)\n\n", text, re.S).group(1)
    assert re.sub(r"\s+", " ", verdict) == (
        f"small executes {expected:.2f}% fewer instructions than large "
        f"({stored_a:,.0f} vs {stored_b:,.0f}; exact: counts are deterministic)")
    for unit in ("µs", " ms", " ns", " s,"):
        assert unit not in text, (unit, text)
    assert f"median {stored_a:.0f} count" in text
    # analyze: deterministic counts are not refused as a constant time would be (a clock
    # problem); their median is exact.
    text = run_cli("analyze", f"{sa}:small/instructions", db=db_path, check=True).stdout
    assert f"median {stored_a:.0f} count  (exact: every count is the same)" in text
    a = json.loads(run_cli("analyze", f"{sa}:small/instructions", "--json", db=db_path,
                           check=True).stdout)
    assert a["median_ci"]["kind"] == "exact" and a["median_ci"]["low"] == stored_a
    # The other direction, and the JSON verdict, say the same thing from B's side.
    data = json.loads(run_cli("compare", f"{sb}:large/instructions", f"{sa}:small/instructions",
                              "--json", db=db_path, check=True).stdout)
    assert data["comparisons"][0]["verdict"].startswith(
        f"large executes {100 * (stored_b / stored_a - 1):.2f}% more instructions than small")


@pytest.mark.slow
def test_equal_counts_are_the_same_exactly(seq_counts):
    """Two sessions of the same `seq 1000`: the same count exactly, said so."""
    sa, sc = seq_counts["sa"], seq_counts["sc"]
    comp = json.loads(run_cli("compare", f"{sa}:small/instructions", f"{sc}:again/instructions",
                              "--json", db=seq_counts["db"], check=True).stdout)["comparisons"][0]
    count = comp["summary_a"]["median"]
    assert count == pytest.approx(seq_counts["small"], rel=0.01)
    assert comp["verdict"] == (f"small and again execute exactly the same number of "
                               f"instructions ({count:,.0f}; exact: counts are deterministic)")


@pytest.mark.slow
def test_slightly_varying_counts_give_the_observed_range(db_path, tmp_path):
    """A real program whose count moves by < 64 of 2M loop iterations per run: the verdict gives the
    difference with the range of every pairing of runs, which the test recomputes from the
    stored counts."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed (scripts/setup.sh installs it)")
    src = tmp_path / "jitter.c"
    src.write_text(JITTER_C)
    exe = tmp_path / "jitter"
    subprocess.run(["gcc", "-O0", "-o", str(exe), str(src)], check=True)
    sa = run_cli("run", "-N", "-r", "5", "--count", "instructions", "-n", "few",
                 f"{exe} 2000000", db=db_path, check=True, timeout=240)
    sb = run_cli("run", "-N", "-r", "5", "--count", "instructions", "-n", "many",
                 f"{exe} 2200000", db=db_path, check=True, timeout=240)
    ua, ub = _session_of(sa), _session_of(sb)
    data = json.loads(run_cli("compare", f"{ua}:few/instructions", f"{ub}:many/instructions",
                              "--json", db=db_path, check=True).stdout)
    comp = data["comparisons"][0]
    a, b = comp["summary_a"], comp["summary_b"]
    assert a["max"] > a["min"] or b["max"] > b["min"], "the counts did not vary at all"
    assert a["cv"] < 1e-4 and b["cv"] < 1e-4
    low, high = 100 * (a["min"] / b["max"] - 1), 100 * (a["max"] / b["min"] - 1)
    rel = 100 * (1 - a["median"] / b["median"])
    assert comp["verdict"].startswith(f"few executes {rel:.2f}% fewer instructions than many")
    assert f"observed range [{low:+.2f}%, {high:+.2f}%] over 5 and 5 runs" in comp["verdict"]


def test_noisy_counts_fall_back_to_the_test_in_counts():
    """Counts with a real spread (CV of a few %) are judged by the usual test, and its words
    keep the unit: no 'µs' for page faults."""
    rng = np.random.default_rng(3)
    a = rng.normal(1000, 30, 40).round()
    b = rng.normal(1100, 30, 40).round()
    c = compare(a, b, name_a="a", name_b="b", options=CompareOptions())
    text = verdict_text(c, "count", "minflt")
    assert text.startswith("a is faster than b by ") and text.count(" count") >= 2, text
    assert "µs" not in text and " ns" not in text
    # The same comparison read as durations keeps its duration words.
    assert " ns" in verdict_text(c)


def test_removed_options_name_their_replacement(db_path):
    """--alpha and --min-effect-percent are refused in one line naming what replaced them (click
    alone would suggest --help), before any store is opened."""
    from tests.conftest import assert_one_line_error

    assert_one_line_error(run_cli("compare", "a", "b", "--alpha", "0.01", db=db_path),
                          "--alpha was removed", "--conf-level")
    assert_one_line_error(run_cli("compare", "a", "b", "--min-effect-percent", "2", db=db_path),
                          "--min-effect-percent was removed", "--min-effect 2%")
    assert not db_path.exists()


def test_count_words_name_the_metric_or_say_count():
    """Constant counts of another metric (page faults) or of an unnamed one (the reports know
    only the unit) are not called instructions."""
    from benchlab.report.comparison_words import verdict_sentence

    c = compare(np.full(5, 5.0), np.full(5, 7.0), name_a="a", name_b="b",
                options=CompareOptions())
    assert verdict_text(c, "count", "minflt") == (
        "a counts 28.57% fewer minflt than b (5 vs 7; exact: counts are deterministic)")
    assert verdict_sentence(c, "count").startswith(
        "a's count is 28.57% lower than b's (5 vs 7; exact: counts are deterministic)")
    same = compare(np.full(4, 9.0), np.full(4, 9.0), name_a="a", name_b="b",
                   options=CompareOptions())
    assert verdict_text(same, "count") == (
        "a and b have exactly the same count (9; exact: counts are deterministic)")
