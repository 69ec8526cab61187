"""``--harness pytest-benchmark``: pytest writes JSON to ``--benchmark-json``, with every round
(``--benchmark-save-data``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import (
    Harness,
    HarnessFailed,
    Prepared,
    output_failed,
    refuse_option,
    register,
)
from benchlab.store.formats import pytest_benchmark


class PytestBenchmarkHarness(Harness):
    """pytest-benchmark: the command runs pytest; ``--benchmark-json=FILE
    --benchmark-save-data`` is added at its end, so every round's time is kept."""

    kind = "pytest-benchmark"
    primary = pytest_benchmark.PRIMARY

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """Append the JSON output options to the command."""
        refuse_option(command, ("--benchmark-json",), self.kind)
        out = workdir / "pytest-benchmark.json"
        return Prepared(command=f"{command} --benchmark-json={shlex.quote(str(out))}"
                                f" --benchmark-save-data", output=out)

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the JSON file the run wrote."""
        if not prepared.output.exists():
            raise HarnessFailed(f"{source}: pytest passed but wrote no benchmark results: "
                                f"pytest-benchmark was off (--benchmark-disable, -p no:benchmark, "
                                f"xdist's -n) or not installed in the environment pytest ran in")
        try:
            return pytest_benchmark.parse_pytest_benchmark(prepared.output,
                                                           name="pytest-benchmark")
        except UserError as exc:
            raise output_failed(exc, source, self.kind) from None


register(PytestBenchmarkHarness())
