"""``--harness go``: ``go test -bench`` prints its results (benchfmt text) on standard output."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import Harness, Prepared, read_output, register
from benchlab.measure.harnesses.command_words import shell_words
from benchlab.store.formats import gotest

#: ``-bench PATTERN`` (or ``-test.bench=PATTERN``) in a shell line: the flag and its value
#: (a word, or a quoted string).
_BENCH_FLAG = re.compile(r"""(^|\s)(-{1,2}(?:test\.)?bench)(?:=|\s+)('[^']*'|"[^"]*"|\S+)""")


class GoHarness(Harness):
    """Go's ``testing.B``: the command is ``go test -bench PATTERN ...`` (any shell line)."""

    kind = "go"
    primary = gotest.PRIMARY
    narrow_hint = ("give -bench (or -test.bench) as a word of the command line itself, not "
                   "inside a quoted string such as sh -c '...'")

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """The command as given: go writes its results to standard output."""
        if not re.search(r"(^|\s)-{1,2}(test\.)?bench(=|\s)", command):
            raise UserError("--harness go runs `go test -bench PATTERN ...`; the command has "
                            "no -bench, so go would run no benchmark: add -bench .")
        return Prepared(command=command)

    def narrow(self, command: str, names: list[str]) -> str | None:
        """``-bench '^Benchmark(A|B)$'`` in place of the command's pattern: a name's package
        (``pkg:``), GOMAXPROCS suffix (``-8``) and sub-benchmarks (``/...``) are dropped, so
        the pattern may run a few more (the same function in another package, its other
        sub-benchmarks), never fewer. None when the flag is not a word of its own (inside a
        quoted ``sh -c '...'``, where the quoted pattern would break the quoting)."""
        functions = sorted({re.sub(r"-\d+$", "", name.split(":")[-1].split("/")[0])
                            for name in names})
        if not functions or not all(re.fullmatch(r"\w+", f) for f in functions):
            return None
        try:
            starts = {w.start for w in shell_words(command)}
        except ValueError:
            return None
        flag = next((m for m in _BENCH_FLAG.finditer(command) if m.start(2) in starts), None)
        if flag is None:
            return None
        pattern = shlex.quote(f"^Benchmark({'|'.join(functions)})$")
        return f"{command[:flag.start(2)]}{flag.group(2)}={pattern}{command[flag.end():]}"

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the result lines of the run's standard output."""
        return read_output(self.kind, source,
                           lambda: gotest.parse_gotest_text(stdout, source, name="go"))


register(GoHarness())
