"""``--harness criterion``: ``cargo bench`` with criterion.rs writes its results under
``$CRITERION_HOME`` (default ``target/criterion``); each run gets a fresh one."""

from __future__ import annotations

from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import Harness, Prepared, output_failed, register
from benchlab.store.formats import criterion


class CriterionHarness(Harness):
    """criterion.rs: the command is ``cargo bench ...``; ``CRITERION_HOME`` points at this
    run's own directory, so one run's results never mix with an earlier run's."""

    kind = "criterion"
    primary = criterion.PRIMARY

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """The command as given, with ``CRITERION_HOME`` set to a directory of this run."""
        out = workdir / "criterion"
        return Prepared(command=command, env={"CRITERION_HOME": str(out)}, output=out)

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the ``new/`` results criterion wrote."""
        try:
            return criterion.parse_criterion(prepared.output, name="criterion")
        except UserError as exc:
            raise output_failed(exc, source, self.kind) from None


register(CriterionHarness())
