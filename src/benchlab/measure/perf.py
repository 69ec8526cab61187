"""Hardware and software performance counters through ``perf stat -x,``.

The program runs under ``perf stat -x, -e EVENTS -o FILE --``; after the run each event becomes
a measurement with source ``perf``. An event the machine cannot count (no PMU in most VMs:
``<not supported>``) is stored with status ``unsupported`` and no value — never as zero — and one
perf could not schedule (``<not counted>``) as ``unknown``. Note that the harness then measures
``perf`` with the program as its child: wall time includes perf's own start-up, and rusage covers
both (perf waits for the program, so its CPU time is included).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass

from benchlab.errors import NotAvailable, UserError

_EVENT = re.compile(r"^[A-Za-z0-9_\-.:/=,]+$")


def parse_events(text: str) -> list[str]:
    """Split ``--perf-events`` (comma-separated names such as ``cycles,task-clock``)."""
    events = [e.strip() for e in text.split(",") if e.strip()]
    if not events:
        raise UserError("--perf-events is empty; give a comma-separated list such as "
                        "task-clock,cycles,instructions")
    for e in events:
        if not _EVENT.match(e) or e.startswith("-"):
            raise UserError(f"--perf-events: {e!r} is not an event name; see `perf list`")
    return events


def perf_binary() -> str:
    """Path of ``perf``; NotAvailable with the install command when it is missing."""
    path = shutil.which("perf")
    if path is None:
        raise NotAvailable("perf is not installed; install it with apt-get install linux-perf, "
                           "or drop --perf-events")
    return path


def check_events(events: list[str], *, timeout_s: float = 30.0) -> None:
    """Run ``perf stat`` once on ``true`` with ``events``: UserError naming perf's complaint when
    it refuses them (an unknown event is perf's usage error, exit 129), so a bad
    ``--perf-events`` is refused before any session instead of failing every run. Events the
    machine cannot count (``<not supported>`` in a VM) pass: they are stored as unsupported.
    ``timeout_s``: seconds perf may take."""
    import subprocess
    import tempfile

    true = shutil.which("true") or "/bin/true"
    with tempfile.NamedTemporaryFile(prefix="benchlab-perf-check-", suffix=".csv") as out:
        try:
            proc = subprocess.run(perf_prefix(events, out.name) + [true], capture_output=True,
                                  text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UserError(f"--perf-events: perf could not be run ({exc}); check perf, or "
                            f"drop --perf-events") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        why = " ".join(lines[:2])[:200] if lines else f"exit {proc.returncode}"
        raise UserError(f"--perf-events {','.join(events)}: perf refuses it ({why}); see "
                        f"`perf list` for the events this machine has")


def perf_prefix(events: list[str], output_path: str) -> list[str]:
    """argv prefix that runs a program under ``perf stat`` writing CSV to ``output_path``."""
    return [perf_binary(), "stat", "-x,", "-e", ",".join(events), "-o", output_path, "--"]


@dataclass(frozen=True)
class PerfValue:
    """One event's outcome: value (or None), unit, status ok/unsupported/unknown, note."""

    event: str
    value: float | None
    unit: str | None
    status: str
    note: str | None = None

    def as_measurement(self) -> dict:
        """The store's measurement row for this event (source ``perf``)."""
        return {"source": "perf", "name": self.event, "value": self.value,
                "unit": self.unit or "count", "status": self.status, "note": self.note}


def parse_perf_csv(text: str, requested: list[str]) -> list[PerfValue]:
    """Parse ``perf stat -x,`` output. Every requested event gets a result, even if absent.

    Fields: value, unit, event, run time, percentage, [metric value, metric unit].
    """
    found: dict[str, PerfValue] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        raw, unit, event = fields[0].strip(), fields[1].strip() or None, fields[2].strip()
        event = re.sub(r":[ukhG]+$", "", event) if event not in requested else event
        if raw == "<not supported>":
            found[event] = PerfValue(event, None, unit, "unsupported",
                                     "the machine cannot count this event (no PMU access)")
        elif raw == "<not counted>":
            found[event] = PerfValue(event, None, unit, "unknown",
                                     "perf could not schedule this event during the run")
        else:
            try:
                found[event] = PerfValue(event, float(raw), unit, "ok")
            except ValueError:
                found[event] = PerfValue(event, None, unit, "unknown", f"unparsed value {raw!r}")
    out = []
    for e in requested:
        out.append(found.get(e) or PerfValue(e, None, None, "unknown",
                                             "perf reported nothing for this event"))
    return out
