"""The contention a session ran under, and whether a fresh session's is beyond a baseline's.

A gate against a stored baseline compares two sessions measured apart. If the fresh one ran
beside CPU hogs (a CI runner with noisy neighbours), its wall time and even its CPU time grow
(waiting for a CPU, losing caches), and a gate would blame the code for the machine: six hogs on
2 vCPUs made a 30 ms loop read "REGRESSION +494 %" in wall and "+64.6 %" in CPU time. ``ab``
is immune (it pairs runs of both revisions); a stored baseline is not, so the gate looks at what
both sessions ran under and refuses to decide when the fresh one is beyond what the baseline's
history covers.

What is recorded (``metadata["contention"]`` of a session measured by ``gate``, sampled at its
start and end): the 1-minute load average per CPU, the runnable tasks per CPU
(``procs_running`` of ``/proc/stat``, less the reader), and the fraction of CPU time stolen by
the hypervisor over the session. What is read from the runs of every session, recorded or not:
each benchmark's own **wall/CPU ratio** (median wall time over median user + sys time), which
is near 1 for a CPU-bound program with a CPU to itself and grows with the time it waits.

The rule (:func:`beyond_history`): the fresh session is beyond the baseline's history when its
benchmark's wall/CPU ratio exceeds the largest of the history's by more than
:data:`RATIO_MARGIN`, or its runnable tasks per CPU exceed the history's largest by more than
:data:`RUNNABLE_MARGIN`, or its steal exceeds the history's by more than :data:`STEAL_MARGIN`.
"""

from __future__ import annotations

import math
import os
from typing import Any

#: A wall/CPU ratio this much above (a fraction) the history's largest is beyond it.
RATIO_MARGIN = 0.5
#: Runnable tasks per CPU this many above the history's largest is beyond it.
RUNNABLE_MARGIN = 2.0
#: A steal fraction this much above the history's largest is beyond it.
STEAL_MARGIN = 0.05


def sample() -> dict[str, float]:
    """One reading of the machine: ``load_1m``, ``runnable`` (procs_running less this
    reader), CPU ``steal`` and ``total`` ticks (cumulative), ``cpus``."""
    out: dict[str, float] = {"cpus": float(os.cpu_count() or 1)}
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            out["load_1m"] = float(fh.read().split()[0])
        with open("/proc/stat", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("cpu "):
                    ticks = [int(v) for v in line.split()[1:]]
                    out["total"] = float(sum(ticks[:8]))
                    out["steal"] = float(ticks[7]) if len(ticks) > 7 else 0.0
                elif line.startswith("procs_running "):
                    out["runnable"] = max(float(line.split()[1]) - 1.0, 0.0)
    except (OSError, ValueError, IndexError):
        pass
    return out


def summarise(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """A session's contention from the readings at its start and end: the larger load per CPU,
    the mean runnable tasks per CPU, the stolen fraction of CPU time in between."""
    cpus = before.get("cpus") or 1.0
    out: dict[str, float] = {}
    loads = [s["load_1m"] for s in (before, after) if "load_1m" in s]
    if loads:
        out["load_per_cpu"] = round(max(loads) / cpus, 3)
    runnable = [s["runnable"] for s in (before, after) if "runnable" in s]
    if runnable:
        out["runnable_per_cpu"] = round(sum(runnable) / len(runnable) / cpus, 3)
    spent = after.get("total", 0.0) - before.get("total", 0.0)
    if spent > 0:
        out["steal"] = round((after.get("steal", 0.0) - before.get("steal", 0.0)) / spent, 4)
    return out


def wall_cpu_ratio(store: Any, session_id: int, benchmark: str) -> float:
    """Median wall time over median user + sys time of ``benchmark``'s runs in the session
    (NaN when it has no CPU times)."""
    import numpy as np

    for bench in store.benchmarks(session_id):
        if bench["name"] == benchmark:
            wall = store.harness_values(bench["id"], "wall")[0]
            cpu = store.harness_values(bench["id"], "cpu")[0]
            wall, cpu = wall[np.isfinite(wall)], cpu[np.isfinite(cpu) & (cpu > 0)]
            if wall.size and cpu.size:
                return float(np.median(wall) / np.median(cpu))
    return math.nan


def beyond_history(store: Any, history: list[dict[str, Any]], candidate: dict[str, Any],
                   benchmark: str) -> str | None:
    """Why the candidate ran under more contention than the baseline's ``history`` covers
    (one clause), or None when it did not (or nothing tells)."""
    ratio = wall_cpu_ratio(store, candidate["id"], benchmark)
    past = [wall_cpu_ratio(store, s["id"], benchmark) for s in history]
    past = [r for r in past if math.isfinite(r)]
    if past and math.isfinite(ratio) and ratio > max(past) * (1.0 + RATIO_MARGIN):
        return (f"its wall/CPU ratio {ratio:.2f} against at most {max(past):.2f} in "
                f"{len(past)} session(s) of the baseline's history")
    fresh = (candidate.get("metadata") or {}).get("contention") or {}
    recorded = [(s.get("metadata") or {}).get("contention") or {} for s in history]
    for key, margin, words in (("runnable_per_cpu", RUNNABLE_MARGIN, "runnable tasks per CPU"),
                               ("steal", STEAL_MARGIN, "stolen CPU time")):
        seen = [r[key] for r in recorded if isinstance(r.get(key), (int, float))]
        value = fresh.get(key)
        if seen and isinstance(value, (int, float)) and value > max(seen) + margin:
            return f"{words} {value:g} against at most {max(seen):g} in the baseline's history"
    return None
