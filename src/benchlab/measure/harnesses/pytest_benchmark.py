"""``--harness pytest-benchmark``: pytest writes JSON to ``--benchmark-json``, with every round
(``--benchmark-save-data``).

Narrowing (:meth:`PytestBenchmarkHarness.narrow`) uses pytest's ``-k``: an expression of
names, each matched case-insensitively as a substring of a test's name or of a name above it
(class, module, directory), so ``-k 'test_a or test_fib[8]'`` runs those and maybe a few more
(``test_ab``, every test of a module ``test_a.py``), never fewer. A parametrised name keeps its brackets
(``test_fib[8]``: ``-k`` reads them since pytest 6); one whose id ``-k`` cannot spell (blanks,
quotes, commas) runs with all its parameters. A ``-k`` the command already has is kept:
``-k '(GIVEN) and (NAMES)'``, so the narrowed runs stay within it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from benchlab.measure.harnesses import (
    Harness,
    Prepared,
    read_output,
    refuse_option,
    register,
)
from benchlab.measure.harnesses.command_words import SimpleCommand, edited, simple_commands
from benchlab.store.formats import pytest_benchmark

#: One name of a ``-k`` expression (pytest's own grammar, ``_pytest.mark.expression``).
_K_NAME = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def keyword_of(name: str) -> str | None:
    """The ``-k`` name that selects benchmark ``name`` (``test_fib[8]``, or the node id
    ``path::Class::test_fib[8]`` when two share a name): the test's name with its parameters,
    or without them when ``-k`` cannot spell them; None when neither can be spelt."""
    head, bracket, params = name.partition("[")
    test = head.rsplit("::", 1)[-1]
    for candidate in (test + bracket + params, test):
        if _K_NAME.fullmatch(candidate) and candidate not in ("and", "or", "not"):
            return candidate
    return None


def keyword_expression(names: list[str]) -> str | None:
    """``-k``'s expression running the benchmarks ``names`` (and maybe a few more), or None
    when one of them cannot be spelt in it."""
    keywords = {keyword_of(name) for name in names}
    if not keywords or None in keywords:
        return None
    return " or ".join(sorted(keywords))


def _given_keyword(line: str, pytest: SimpleCommand) -> tuple[int, int, str] | None:
    """(start, end, raw text of its expression) of the last ``-k`` of the command (``-k E``,
    ``-kE``, ``-k=E``), or None."""
    args = pytest.args
    for i in reversed(range(len(args))):
        w, raw = args[i], line[args[i].start:args[i].end]
        if w.text == "-k" and i + 1 < len(args):
            value = args[i + 1]
            return w.start, value.end, line[value.start:value.end]
        if w.text.startswith("-k") and w.text != "-k" and raw.startswith("-k"):
            return w.start, w.end, raw[3:] if raw.startswith("-k=") else raw[2:]
    return None


def narrowed_command(command: str, names: list[str]) -> str | None:
    """``command`` (a shell line whose last command runs pytest, as :meth:`prepare`
    assumes) made to run only the benchmarks ``names``; None when ``-k`` cannot name them or
    the line cannot be read."""
    expression = keyword_expression(names)
    try:
        commands = simple_commands(command)
    except ValueError:
        return None
    if expression is None or not commands:
        return None
    given = _given_keyword(command, commands[-1])
    if given is None:  # after pytest's last word (not after a comment or a newline)
        end = commands[-1].end
        return edited(command, [(end, end, f" -k {shlex.quote(expression)}")])
    start, end, raw = given
    # the given expression's words stay as written (quotes, $VARS): the shell joins the pieces
    combined = f"-k {shlex.quote('(')}{raw}{shlex.quote(f') and ({expression})')}"
    return edited(command, [(start, end, combined)])


class PytestBenchmarkHarness(Harness):
    """pytest-benchmark: the command runs pytest; ``--benchmark-json=FILE
    --benchmark-save-data`` is added at its end, so every round's time is kept."""

    kind = "pytest-benchmark"
    primary = pytest_benchmark.PRIMARY
    narrow_hint = ("end the command with pytest's own arguments (`pytest ...`, not a script "
                   "that runs it)")

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """Append the JSON output options to the command."""
        refuse_option(command, ("--benchmark-json",), self.kind)
        out = workdir / "pytest-benchmark.json"
        return Prepared(command=f"{command} --benchmark-json={shlex.quote(str(out))}"
                                f" --benchmark-save-data", output=out)

    def narrow(self, command: str, names: list[str]) -> str | None:
        """``-k 'test_a or test_fib[8]'`` added (or joined to the command's own ``-k`` with
        ``and``): those run, and maybe a few more whose names contain theirs."""
        return narrowed_command(command, names)

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the JSON file the run wrote."""
        return read_output(
            self.kind, source,
            lambda: pytest_benchmark.parse_pytest_benchmark(prepared.output,
                                                            name="pytest-benchmark"),
            expected=prepared.output,
            missing="pytest passed but wrote no benchmark results: pytest-benchmark was off "
                    "(--benchmark-disable, -p no:benchmark, xdist's -n) or not installed in the "
                    "environment pytest ran in")


register(PytestBenchmarkHarness())
