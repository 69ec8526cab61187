"""What a study report says per cell: the machine's load while it ran, correlations measured
within it, and names short enough for a figure's ticks.

- **Load**: each cell's run session stores the 1-minute load average at its start and end.
  A comparison between two cells whose loads differ by more than :data:`LOAD_GAP_PER_CORE`
  runnable tasks per core is flagged: its "higher" or "lower" may be the load's, not the
  factor's (the platform's study held load constant; a shared machine does not).
- **Correlations**: Pearson and Spearman of each metric with harness CPU time *within one
  cell and workload*. Pooling cells mixes levels whose measurements mean different things
  (in a container the harness's rusage and page faults are the engine client's, not the
  program's), and a pooled r then reflects the difference between levels, not a relation
  within any of them.
- **Tick names**: factor levels such as ``podman:localhost/benchlab-busybox:1`` make tick
  labels that a figure would cut; :func:`tick_names` shortens them without losing which is
  which, and numbers them with a key in the caption when shortening is not enough.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from benchlab.report.figures import short_label
from benchlab.stats.correlation import pearson, spearman

#: Runnable tasks per core by which two cells' mean load averages may differ before their
#: comparison is flagged (half a core's worth of competing work).
LOAD_GAP_PER_CORE = 0.5
#: Metrics correlated with harness CPU time (rusage, cgroup, perf, the isolator's views).
SKIPPED = {"cpu", "self_cpu", "self_wall"}
#: The longest tick label a figure shows whole (:func:`benchlab.report.figures.short_label`).
TICK_LIMIT = 32


def cell_loads(store: Any, groups: list) -> dict[str, dict[str, Any]]:
    """Per cell label: the 1-minute load average at the start and end of its session, their
    mean, and that mean per core (``cores``: this report's machine's CPUs when the session
    did not store its own count). NaN where a session stored none."""
    out: dict[str, dict[str, Any]] = {}
    for g in groups:
        if g.label in out:
            continue
        sess = store.get_session(g.session_uid)
        start, end = _first(sess.get("load_before")), _first(sess.get("load_after"))
        known = [v for v in (start, end) if not math.isnan(v)]
        mean = float(np.mean(known)) if known else math.nan
        cores = _cores(sess)
        out[g.label] = {"cell": g.label, **{f: g.cell.get(f) for f in _factors(g.cell)},
                        "load_start": start, "load_end": end, "load_mean": mean,
                        "cores": cores, "load_per_core": mean / cores}
    return out


def _factors(cell: dict) -> list[str]:
    from benchlab.core.suite import FACTORS

    return [f for f in FACTORS if f in cell]


def _first(value: Any) -> float:
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (int, float)):
        return float(value[0])
    return math.nan


def _cores(session: dict) -> int:
    env = session.get("environment") or {}
    cpu = env.get("cpu") if isinstance(env, dict) else None
    n = cpu.get("logical_cores") if isinstance(cpu, dict) else None
    return int(n) if isinstance(n, int) and n > 0 else (os.cpu_count() or 1)


def loads_differ(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """True when two cells' mean loads per core differ by more than LOAD_GAP_PER_CORE
    (False when either is unknown: nothing to flag from)."""
    if not a or not b:
        return False
    gap = abs(a["load_per_core"] - b["load_per_core"])
    return bool(np.isfinite(gap) and gap > LOAD_GAP_PER_CORE)


def cell_correlations(groups: list) -> list[dict]:
    """Pearson's r and Spearman's rho (with p-values) of each metric with harness CPU time,
    per cell and workload: rows carry the cell's factors, the workload, the metric and n
    (runs with both values). A metric constant within the cell, or with fewer than 4 runs,
    gives no row."""
    rows = []
    for g in sorted(groups, key=lambda g: (g.workload, g.label)):
        cpu = g.values["cpu"]
        for name in sorted(set(g.values) - SKIPPED):
            x = g.values[name]
            if x.shape != cpu.shape:
                continue
            ok = np.isfinite(x) & np.isfinite(cpu)
            if ok.sum() < 4 or np.ptp(x[ok]) == 0 or np.ptp(cpu[ok]) == 0:
                continue
            p, s = pearson(x[ok], cpu[ok]), spearman(x[ok], cpu[ok])
            rows.append({**{f: g.cell[f] for f in _factors(g.cell)}, "cell": g.label,
                         "workload": g.workload, "metric": name, "n": int(ok.sum()),
                         "pearson_r": p.estimate, "pearson_p": p.p_value,
                         "spearman_rho": s.estimate, "spearman_p": s.p_value})
    return rows


def compact_level(level: str) -> str:
    """A container level without its registry and tag (``podman:localhost/x/img:1`` ->
    ``podman:img``); other levels unchanged."""
    kind, sep, image = level.partition(":")
    if not sep or "/" not in image and ":" not in image:
        return level
    name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    return f"{kind}:{name}" if name else level


def tick_names(labels: list[str], replace: dict[str, str] | None = None,
               limit: int = TICK_LIMIT) -> tuple[list[str], str]:
    """Tick labels a figure shows whole, and a caption key ('' when none is needed).

    Words every label shares (``aff=none`` in every cell) are dropped, and ``replace``'s
    long texts (factor levels) become their compact forms; if the results are not all
    distinct and within ``limit`` characters, the ticks become ``#1``, ``#2``... and the key
    names each in full.
    """
    shared = set.intersection(*(set(t.split()) for t in labels)) if len(labels) > 1 else set()
    out = []
    for text in labels:
        text = " ".join(w for w in text.split() if w not in shared) or text
        for long, short in sorted((replace or {}).items(), key=lambda kv: -len(kv[0])):
            text = text.replace(long, short)
        out.append(text)
    if len(set(out)) == len(out) and all(short_label(t, limit) == t for t in out):
        return out, ""
    key = "; ".join(f"#{k + 1}: {text}" for k, text in enumerate(labels))
    return [f"#{k + 1}" for k in range(len(labels))], f"Key: {key}."


def level_replacements(levels: list[str]) -> dict[str, str]:
    """Compact names for the long factor levels among ``levels``, when they stay distinct."""
    compact = {lv: compact_level(lv) for lv in levels if compact_level(lv) != lv}
    if len(set(compact.values()) | (set(levels) - set(compact))) < len(set(levels)):
        return {}  # two levels would look alike: keep them whole
    return compact
