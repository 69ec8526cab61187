"""Instruction counts under valgrind's cachegrind: real valgrind, real programs."""

from __future__ import annotations

import re
import statistics

import pytest

from benchlab.errors import UserError
from benchlab.measure import build
from benchlab.measure.counts import count_instructions, count_runs
from benchlab.workloads import workload_command
from tests.conftest import needs_tool

pytestmark = needs_tool("valgrind")

FIXED_WORK = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    unsigned long x = 1;
    for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    printf("%lu\n", x);
    return 0;
}
"""


def test_five_runs_of_a_deterministic_program_give_identical_counts():
    program = str(build.build_source_text("test_counts_fixed_work", FIXED_WORK))
    counts = [c.instructions for c in count_runs([program, "200000"], 5)]
    assert statistics.pstdev(counts) / statistics.mean(counts) == 0, counts
    assert counts[0] > 200000 * 3  # at least a multiply, an add and a loop step per iteration


def _digit_signature(stdout: str) -> tuple[int, ...]:
    """How many digits each number on the BENCHLAB_SELF line has (its printing cost)."""
    line = next(l for l in stdout.splitlines() if l.startswith("BENCHLAB_SELF"))
    return tuple(len(v) for v in re.findall(r"=(\d+)", line))


def test_five_runs_of_quicksort_give_identical_counts_and_more_input_more_instructions(tmp_path):
    """The bundled quicksort prints its own timings: runs that printed as many digits (almost
    always all of them) have identical counts; the rest differ by 14 instructions a digit."""
    command = workload_command("qsort", 20000)
    by_signature: dict[tuple[int, ...], set[int]] = {}
    counts = []
    for run in range(5):
        out = tmp_path / f"out{run}"
        counted = count_instructions(command, stdout_path=str(out)).instructions
        counts.append(counted)
        by_signature.setdefault(_digit_signature(out.read_text()), set()).add(counted)
    assert all(len(same) == 1 for same in by_signature.values()), by_signature
    assert max(counts) - min(counts) <= 14 * 8, counts
    assert statistics.pstdev(counts) / statistics.mean(counts) < 1e-5
    longer = count_instructions(workload_command("qsort", 40000)).instructions
    # Twice the input: more than twice the work for an n log n sort, but well under 4x.
    assert 2.0 * min(counts) < longer < 4.0 * max(counts)


def test_a_shell_command_counts_the_program_it_runs():
    program = str(build.build_source_text("test_counts_fixed_work", FIXED_WORK))
    direct = count_instructions([program, "100000"])
    via_shell = count_instructions(["sh", "-c", f"{program} 100000"])
    assert via_shell.processes == 2
    assert via_shell.instructions > direct.instructions
    assert via_shell.exit_code == 0


def test_exit_code_passes_through_and_a_missing_program_is_a_user_error():
    assert count_instructions(["sh", "-c", "exit 3"]).exit_code == 3
    with pytest.raises(UserError, match="cannot count"):
        count_instructions(["/nonexistent/benchlab-no-such-program"])
    with pytest.raises(UserError, match="at least 1 run"):
        count_runs(["true"], 0)
