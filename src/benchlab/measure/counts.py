"""Deterministic counts: the instructions a command executes, under valgrind's cachegrind.

Wall time on a shared VM varies by percents from run to run; the number of instructions a
deterministic program retires does not. Without hardware counters (perf sees none on most VMs),
cachegrind's instrumentation gives that count: ``valgrind --tool=cachegrind --cache-sim=no``
simulates no cache and reports only ``Ir`` (instructions read = executed). The program runs
20-50x slower under valgrind, so these are separate runs from the timed ones and never mixed
with them.

``--trace-children=yes`` follows every exec'd child (a shell running the command, a driver script
starting the real program), each into its own output file; the count is their sum, so
``sh -c 'prog'`` counts ``prog`` too.

What is deterministic is the program's work: a program that prints times it measured itself
(the bundled workloads print ``BENCHLAB_SELF wall_ns=...``) executes 14 more instructions per
extra decimal digit printed, so its count moves by a few tens of instructions (~1e-6) when a
loaded machine pushes a printed time past a power of ten. Runs that printed the same number of
digits give identical counts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchlab.errors import UserError

VALGRIND_HINT = "install valgrind (apt-get install -y valgrind, or bash scripts/setup.sh)"

# "summary: 17074256" in cachegrind's output file; with --cache-sim=no Ir is the only event.
_SUMMARY = re.compile(r"^summary:\s+(\d+)", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s+(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class InstructionCount:
    """One counted run.

    Attributes:
        instructions: instructions executed (cachegrind ``Ir``), summed over the command and every
            process it exec'd.
        processes: how many processes cachegrind followed (one output file each).
        exit_code: the command's exit status (valgrind passes it through).
        stderr_tail: the last lines valgrind and the command wrote to stderr, for error messages.
    """

    instructions: int
    processes: int
    exit_code: int
    stderr_tail: str


def valgrind_path() -> str:
    """Path of the valgrind executable; UserError naming the fix when it is not installed."""
    path = shutil.which("valgrind")
    if path is None:
        raise UserError(f"--count instructions needs valgrind, which is not installed; {VALGRIND_HINT}")
    return path


def _read_summary(path: Path) -> int:
    text = path.read_text(errors="replace")
    events = _EVENTS.search(text)
    if events is None or events.group(1).split()[0] != "Ir":
        raise RuntimeError(f"{path}: cachegrind output without an Ir event column")
    summary = _SUMMARY.search(text)
    if summary is None:
        raise RuntimeError(f"{path}: cachegrind output without a summary line (did valgrind crash?)")
    return int(summary.group(1))


def count_instructions(argv: Sequence[str], *, cwd: str | None = None,
                       env: Mapping[str, str] | None = None, timeout_s: float | None = None,
                       stdin_path: str | None = None,
                       stdout_path: str | None = None) -> InstructionCount:
    """Run ``argv`` once under cachegrind and return the instructions it executed.

    Args:
        argv: the command, already split (a shell command is ``["sh", "-c", text]``).
        cwd: working directory of the command (default: this process's).
        env: its environment (default: this process's).
        timeout_s: wall-clock limit in seconds for the instrumented run (it runs 20-50x slower
            than natively); the run is killed and RuntimeError raised when it is exceeded.
        stdin_path: file to connect to the command's stdin (default: /dev/null).
        stdout_path: file the command's stdout is written to (default: discarded).

    Returns:
        :class:`InstructionCount` with ``instructions`` in instructions (cachegrind ``Ir``).

    Raises:
        UserError: valgrind is not installed, or the command cannot be started.
        RuntimeError: valgrind produced no count (killed by the timeout, or crashed).
    """
    if not argv:
        raise UserError("nothing to count: give a command")
    valgrind = valgrind_path()
    with tempfile.TemporaryDirectory(prefix=f"benchlab-counts-p{os.getpid()}-") as out_dir:
        # %p: one file per process, so children followed through exec do not overwrite each other.
        pattern = os.path.join(out_dir, "cachegrind.%p.out")
        command = [valgrind, "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                   f"--cachegrind-out-file={pattern}", "--log-fd=2", "-q", *argv]
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        stdout = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        try:
            result = subprocess.run(command, cwd=cwd, env=dict(env) if env is not None else None,
                                    stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                                    timeout=timeout_s, start_new_session=True)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"counting {argv[0]} under valgrind took longer than {timeout_s:g} s "
                               "(valgrind runs programs 20-50x slower); raise --timeout") from exc
        finally:
            if stdin_path:
                stdin.close()
            if stdout_path:
                stdout.close()
        tail = "\n".join(result.stderr.decode(errors="replace").strip().splitlines()[-5:])
        files = sorted(Path(out_dir).glob("cachegrind.*.out"))
        if not files:
            if "No such file" in tail or "cannot execute" in tail.lower():
                raise UserError(f"cannot count {argv[0]!r}: {tail.splitlines()[-1]}; check the command")
            raise RuntimeError(f"valgrind wrote no count for {argv[0]!r} (exit {result.returncode}): "
                               f"{tail or 'no message'}")
        total = sum(_read_summary(path) for path in files)
    return InstructionCount(instructions=total, processes=len(files),
                            exit_code=result.returncode, stderr_tail=tail)


def count_runs(argv: Sequence[str], runs: int, **options) -> list[InstructionCount]:
    """``runs`` separate counted runs of ``argv`` (see :func:`count_instructions` for options).

    The core calls this for ``--count instructions`` and stores each run's ``instructions`` as the
    metric ``instructions`` (unit: instructions), apart from the timed runs.
    """
    if runs < 1:
        raise UserError(f"--count needs at least 1 run, got {runs}; give a positive number of runs")
    return [count_instructions(argv, **options) for _ in range(runs)]
