"""Instruction counts under valgrind's cachegrind: real valgrind, the real bundled workload."""

from __future__ import annotations

import shutil
import statistics

import pytest

from benchlab.errors import UserError
from benchlab.measure.counts import count_instructions, count_runs
from benchlab.workloads import workload_command

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None,
                                reason="valgrind is not installed (bash scripts/setup.sh installs it)")


def test_five_runs_of_quicksort_give_identical_counts_and_more_input_more_instructions():
    command = workload_command("qsort", 20000)
    counts = [c.instructions for c in count_runs(command, 5)]
    assert all(c > 1_000_000 for c in counts), counts
    cv = statistics.pstdev(counts) / statistics.mean(counts)
    assert cv == 0, counts
    longer = count_instructions(workload_command("qsort", 40000)).instructions
    # Twice the input: more than twice the work for an n log n sort, but well under 4x.
    assert 2.0 * counts[0] < longer < 4.0 * counts[0]


def test_a_shell_command_counts_the_program_it_runs():
    command = workload_command("qsort", 20000)
    direct = count_instructions(command)
    via_shell = count_instructions(["sh", "-c", " ".join(command)])
    assert via_shell.processes == 2
    assert via_shell.instructions > direct.instructions
    assert via_shell.exit_code == 0


def test_exit_code_passes_through_and_a_missing_program_is_a_user_error():
    assert count_instructions(["sh", "-c", "exit 3"]).exit_code == 3
    with pytest.raises(UserError, match="cannot count"):
        count_instructions(["/nonexistent/benchlab-no-such-program"])
    with pytest.raises(UserError, match="at least 1 run"):
        count_runs(["true"], 0)
