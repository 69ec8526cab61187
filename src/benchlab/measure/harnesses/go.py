"""``--harness go``: ``go test -bench`` prints its results (benchfmt text) on standard output."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import Harness, Prepared, read_output, register
from benchlab.store.formats import gotest

#: ``-bench PATTERN`` (or ``-test.bench=PATTERN``) in a shell line: the flag and its value
#: (a word, or a quoted string).
_BENCH_FLAG = re.compile(r"""(^|\s)(-{1,2}(?:test\.)?bench)(?:=|\s+)('[^']*'|"[^"]*"|\S+)""")


class GoHarness(Harness):
    """Go's ``testing.B``: the command is ``go test -bench PATTERN ...`` (any shell line)."""

    kind = "go"
    primary = gotest.PRIMARY

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
        sub-benchmarks), never fewer."""
        functions = sorted({re.sub(r"-\d+$", "", name.split(":")[-1].split("/")[0])
                            for name in names})
        if not functions or not all(re.fullmatch(r"\w+", f) for f in functions):
            return None
        pattern = shlex.quote(f"^Benchmark({'|'.join(functions)})$")
        narrowed, found = _BENCH_FLAG.subn(lambda m: f"{m.group(1)}{m.group(2)}={pattern}",
                                           command, count=1)
        return narrowed if found else None

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the result lines of the run's standard output."""
        return read_output(self.kind, source,
                           lambda: gotest.parse_gotest_text(stdout, source, name="go"))


register(GoHarness())
