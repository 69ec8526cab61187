"""One stress-ng run of a machine profile: run it in the core, read its rate, store its fields.

Split from :mod:`benchlab.machines.profile` (which plans rounds and builds the profile) so
that module stays readable in one sitting; :class:`RunRecord` is what observers receive.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlab.errors import UserError


@dataclass(frozen=True)
class RunRecord:
    """One stress-ng run of a profile: what was run and what it gave (passed to observers)."""

    method: str
    round: int
    status: str
    value: float | None
    cpu_value: float | None
    wall_ns: int | None
    error: str | None = None
    cgroup: dict | None = None


def run_method(session, method: str, argv_template: list[str], tmp: str, round_no: int,
               duration_s: int, nice: int | None = None) -> RunRecord:
    """Run one stress-ng method once in ``session`` (``duration_s`` s, its YAML report and log
    in ``tmp``) and read its result into a RunRecord (rates in bogo ops/s, times in s)."""
    from benchlab.machines import stressng

    yaml_path = os.path.join(tmp, f"{method}-{round_no}.yaml")
    log_path = os.path.join(tmp, f"{method}-{round_no}.log")
    argv = [yaml_path if a == "{yaml}" else a for a in argv_template]
    # A throttled run stretches: allow for a quota as low as 5% of a CPU plus start-up time.
    timeout_s = duration_s * 3 + 30
    if nice is not None:
        argv = ["nice", "-n", str(nice), *argv]
    measurement, usage = session.execute(argv, stdout_path=log_path, stderr_path=log_path,
                                         timeout_s=timeout_s)
    value = cpu_value = None
    error = measurement.error
    status = measurement.status
    if status == "ok":
        try:
            result = stressng.parse_yaml_file(yaml_path)
            value, cpu_value = result.ops_per_s_real, result.ops_per_s_cpu
            if not value > 0:
                status, error, value = "failed", "stress-ng reported 0 bogo-ops", None
        except UserError as err:
            status, error = "failed", str(err)
    elif error is None:
        try:
            tail = Path(log_path).read_text()[-300:]
        except OSError:
            tail = ""
        error = f"stress-ng exited with {measurement.exit_code}: {' '.join(tail.split())}"
    return RunRecord(method, round_no, status, value, cpu_value, measurement.wall_ns, error, usage)


def record_fields(record: RunRecord) -> dict[str, Any]:
    """The stored columns of one profile run."""
    return {"status": record.status if record.status in
            ("ok", "failed", "signaled", "timeout", "error") else "failed",
            "wall_ns": record.wall_ns, "error": record.error,
            "extra": {"round": record.round, "cgroup": record.cgroup}}
