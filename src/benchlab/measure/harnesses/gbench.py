"""``--harness gbench``: a Google Benchmark binary writes JSON to ``--benchmark_out``."""

from __future__ import annotations

import shlex
from pathlib import Path

from benchlab.measure.harnesses import Harness, Prepared, read_output, refuse_option, register
from benchlab.store.formats.gbench import parse_gbench


class GbenchHarness(Harness):
    """Google Benchmark: the command runs a binary built with ``benchmark::benchmark_main``;
    ``--benchmark_out=FILE --benchmark_out_format=json`` is added at its end."""

    kind = "gbench"
    primary = "real_time"
    narrow_hint = "end the command with the benchmark binary's own arguments"

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """Append the JSON output options to the command."""
        refuse_option(command, ("--benchmark_out=", "--benchmark_out_format"), self.kind)
        out = workdir / "gbench.json"
        return Prepared(command=f"{command} --benchmark_out={shlex.quote(str(out))}"
                                f" --benchmark_out_format=json", output=out)

    def narrow(self, command: str, names: list[str]) -> str | None:
        """``--benchmark_filter`` of the names (each a prefix: an aggregate's or a longer
        argument's name may run too, never fewer), in place of the command's own."""
        import re

        if not names:
            return None
        pattern = "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")"
        kept = re.sub(r"""\s--benchmark_filter(=|\s+)('[^']*'|"[^"]*"|\S+)""", "", command)
        return f"{kept} --benchmark_filter={shlex.quote(pattern)}"

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the JSON file the run wrote."""
        return read_output(self.kind, source,
                           lambda: parse_gbench(prepared.output, name="gbench"))


register(GbenchHarness())
