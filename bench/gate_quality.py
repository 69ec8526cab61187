"""Can the gate's alarms be trusted on this noisy machine? False alarms and detections, measured.

A tiny C program does N iterations plus EXTRA per mille more (builds with EXTRA = 0, 0, 1, 3,
10: two identical builds for A/A, then 0.1 %, 0.3 %, 1 % more work). Each *gate* is one
benchmark measured by the real ``benchlab ab`` engine (:func:`benchlab.core.ab.run_ab`: pairs
in random order, warmups, the sequential rule, everything stored in a SQLite file):

========  =========================  =========  ==========  ==========================
scenario  head vs base               threshold  budget      success
========  =========================  =========  ==========  ==========================
a/a       identical builds           0.5 %      30 s        no regression (goal: <= 1 % alarms)
1%        1 % more work              0.5 %      30 s        regression decided (goal >= 95 %)
0.3%      0.3 % more work            0.15 %     120 s       regression decided (goal >= 80 %)
instr     0.1 % more work, counted   0.05 %     20 s        regression on instructions, 100 %
========  =========================  =========  ==========  ==========================

Timed scenarios are gated on wall time and on CPU time (user+sys) from the same pairs; the
time to decide each is read from the stored looks. Beside them, on the very same pairs: asv's
rule (Mann-Whitney p < 0.002 and a ratio beyond x1.1), pyperf ``compare_to``'s t-test (Student,
p < 0.05, "significant"), and a fixed 5 % gate (median ratio > 1.05). Every rate has its
Clopper-Pearson 95 % interval. Conditions: ``quiet`` (whatever else runs on the machine) and
``stress`` (``stress-ng --cpu 2`` started beside the gates).

Gates are run round-robin over scenarios and conditions until ``--gates`` per cell or
``--budget`` seconds in total; the table says how many fit. Load average printed beside it.

    .venv/bin/python bench/gate_quality.py --gates 4 --budget 1500
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from benchlab.core.ab import AbBenchmark, AbOptions, run_ab
from benchlab.core.revisions import Revision
from benchlab.store.db import Store

WORK_C = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    n += n * EXTRA / 1000;
    volatile unsigned long x = 1;
    for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return (int)(x & 0);
}
"""
ITERATIONS = 3_000_000  # about 4 ms of CPU here
# scenario: (base build, head build, threshold, budget s, metrics)
SCENARIOS = {
    "a/a": ("0", "0b", 0.005, 30.0, ["wall", "cpu"]),
    "1%": ("0", "10", 0.005, 30.0, ["wall", "cpu"]),
    "0.3%": ("0", "3", 0.0015, 120.0, ["wall", "cpu"]),
    "instr": ("0", "1", 0.0005, 20.0, ["instructions"]),
}


def build(where: Path) -> dict[str, Path]:
    """One directory per build, each holding ``w``."""
    src = where / "work.c"
    src.write_text(WORK_C)
    out = {}
    for label, extra in (("0", 0), ("0b", 0), ("1", 1), ("3", 3), ("10", 10)):
        d = where / f"b{label}"
        d.mkdir()
        subprocess.run(["cc", "-O2", f"-DEXTRA={extra}", "-o", str(d / "w"), str(src)],
                       check=True)
        out[label] = d
    return out


def revision(label: str, root: Path) -> Revision:
    return Revision(label=label, requested=label, commit=label, subject=f"EXTRA build {label}",
                    dirty=False, root=str(root), build_command=None)


def comparators(base: np.ndarray, head: np.ndarray) -> dict[str, bool]:
    """What asv, pyperf and a fixed 5 % gate say about a slowdown on the same values."""
    ratio = float(np.median(head) / np.median(base))
    p_mw = stats.mannwhitneyu(head, base, alternative="two-sided").pvalue
    p_t = stats.ttest_ind(head, base).pvalue
    return {"asv": bool(p_mw < 0.002 and ratio > 1.1),
            "pyperf": bool(p_t < 0.05 and ratio > 1.0),
            "fixed 5%": bool(ratio > 1.05)}


def one_gate(store: Store, builds: dict[str, Path], scenario: str, seed: int) -> dict:
    """Run one gate; per metric: regression decided, outcome, seconds to decide; comparators."""
    base_l, head_l, threshold, budget, metrics = SCENARIOS[scenario]
    bench = AbBenchmark(name=scenario, command=f"{{root}}/w {ITERATIONS}",
                        thresholds={m: threshold for m in metrics}, metrics=metrics)
    options = AbOptions(max_time_s=budget, warmup=2, min_pairs=20, look_every=10, seed=seed,
                        count="instructions" if "instructions" in metrics else None,
                        count_runs=2)
    start = time.monotonic()
    result = run_ab(store, [bench], revision("base", builds[base_l]),
                    revision("head", builds[head_l]), options, repo="(bench)")
    out = {"seconds": time.monotonic() - start, "pairs": result.pairs.get(scenario, 0)}
    looks = result.looks.get(scenario, [])
    for d in result.decisions:
        first = next((lk["seconds"] for lk in looks
                      if lk["outcomes"].get(d.metric) not in (None, "undecided")), None)
        out[d.metric] = {"regression": d.regression, "outcome": d.outcome, "ratio": d.ratio,
                         "decided_s": first if d.metric != "instructions" else out["seconds"]}
    if "wall" in metrics:
        benches = store.benchmarks(result.session.id)
        for metric in ("wall", "cpu"):
            b = store.harness_values(benches[0]["id"], metric)[0]
            h = store.harness_values(benches[1]["id"], metric)[0]
            out[f"cmp_{metric}"] = comparators(b, h)
    return out


def rate(k: int, n: int) -> str:
    if n == 0:
        return "-"
    ci = stats.binomtest(k, n).proportion_ci(0.95)
    return f"{100 * k / n:.0f} % [{100 * ci.low:.0f}, {100 * ci.high:.0f}] ({k}/{n})"


def table(results: dict[tuple[str, str], list[dict]]) -> list[str]:
    lines = ["| condition | scenario | metric | gate: alarms / caught | median s to decide | "
             "asv | pyperf t-test | fixed 5 % |", "|---|---|---|---|---|---|---|---|"]
    for (cond, scen), runs in sorted(results.items()):
        metrics = SCENARIOS[scen][4]
        for metric in metrics:
            n = len(runs)
            k = sum(r[metric]["regression"] for r in runs)
            limit = SCENARIOS[scen][3]
            within = [r[metric]["decided_s"] for r in runs if r[metric]["regression"]
                      and r[metric]["decided_s"] is not None
                      and (metric == "instructions" or r[metric]["decided_s"] <= limit)]
            med = f"{np.median(within):.1f}" if within else "-"
            cmp = [rate(sum(r[f"cmp_{metric}"][c] for r in runs), n)
                   if f"cmp_{metric}" in runs[0] else "-"
                   for c in ("asv", "pyperf", "fixed 5%")]
            lines.append(f"| {cond} | {scen} | {metric} | {rate(k, n)} | {med} | "
                         + " | ".join(cmp) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=200, help="gates per scenario and condition")
    parser.add_argument("--budget", type=float, default=3600.0, help="total seconds")
    parser.add_argument("--conditions", default="quiet,stress")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    a = parser.parse_args()
    conditions = a.conditions.split(",")
    scenarios = a.scenarios.split(",")
    work = Path(tempfile.mkdtemp(prefix="benchlab-gate-quality-"))
    results: dict[tuple[str, str], list[dict]] = {}
    start = time.monotonic()
    loads = []
    try:
        builds = build(work)
        store = Store.open(work / "gates.db")
        for seed in itertools.count():
            if seed >= a.gates or time.monotonic() - start > a.budget:
                break
            for cond in conditions:
                stress = None
                if cond == "stress":
                    stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--quiet"],
                                              start_new_session=True)
                try:
                    for scen in scenarios:
                        if time.monotonic() - start > a.budget:
                            break
                        r = one_gate(store, builds, scen, seed)
                        results.setdefault((cond, scen), []).append(r)
                        loads.append(os.getloadavg()[0])
                        print(f"[{time.monotonic() - start:6.0f} s] {cond} {scen} seed {seed}: "
                              + ", ".join(f"{m} {r[m]['outcome']} {r[m]['ratio']:.4f}"
                                          for m in SCENARIOS[scen][4])
                              + f" ({r['pairs']} pairs, {r['seconds']:.1f} s)", flush=True)
                finally:
                    if stress is not None:
                        os.killpg(stress.pid, signal.SIGTERM)
                        stress.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"{sum(len(v) for v in results.values())} gates in {time.monotonic() - start:.0f} s; "
          f"load average (1 min) during them: median {np.median(loads):.1f}, "
          f"range {min(loads):.1f}-{max(loads):.1f}")
    for line in table(results):
        print(line)


if __name__ == "__main__":
    main()
