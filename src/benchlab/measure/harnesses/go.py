"""``--harness go``: ``go test -bench`` prints its results (benchfmt text) on standard output."""

from __future__ import annotations

import re
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import Harness, Prepared, output_failed, register
from benchlab.store.formats import gotest


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

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the result lines of the run's standard output."""
        try:
            return gotest.parse_gotest_text(stdout, source, name="go")
        except UserError as exc:
            raise output_failed(exc, source, self.kind) from None


register(GoHarness())
