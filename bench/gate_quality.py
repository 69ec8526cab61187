"""Can the gate's alarms be trusted on this noisy machine? False alarms and detections, measured.

A tiny C program does N iterations plus EXTRA per mille more (builds with EXTRA = 0, 0, 1, 3,
10: two identical builds for A/A, then 0.1 %, 0.3 %, 1 % more work). Each *gate* is one
benchmark measured by the real ``benchlab ab`` engine (:func:`benchlab.ci.ab.run_ab`: pairs
in random order, warmups, the sequential rule, everything stored in a SQLite file):

========  =========================  =========  ==========  ==========================
scenario  head vs base               threshold  budget      success
========  =========================  =========  ==========  ==========================
a/a       identical builds           0.5 %      30 s        no regression (goal: <= 1 % alarms)
1%        1 % more work              0.5 %      30 s        regression decided (goal >= 95 %)
0.3%      0.3 % more work            0.15 %     120 s       regression decided (goal >= 80 %)
instr     0.1 % more work, counted   0.05 %     20 s        regression on instructions, 100 %
========  =========================  =========  ==========  ==========================

Timed scenarios measure wall time and CPU time (user+sys) in the same pairs. A user gates on
one metric, with the whole error alpha; the job gates on both at once (alpha split between
them, so it measures until both are decided), and each metric's row is the exact replay of
the one-metric rule on the very same pairs and looks (:func:`one_metric`: the look schedule
and each look's share of the time budget as the job recorded them, alpha not split, the first
look that decides). The split rule's outcome is kept beside it (``joint``). Because a
one-metric interval is never wider than the split one at the same look, the replay always
decides within the pairs the job measured. Beside them, on the very same pairs: asv's
rule (Mann-Whitney p < 0.002 and a ratio beyond x1.1), pyperf ``compare_to``'s t-test (Student,
p < 0.05, "significant"), and a fixed 5 % gate (median ratio > 1.05). Every rate has its
Clopper-Pearson 95 % interval. Conditions: ``quiet`` (whatever else runs on the machine) and
``stress`` (``stress-ng --cpu 2`` started beside the gates).

Gates are run round-robin over scenarios and conditions until ``--gates`` per cell (``--gates-for
a/a=200`` overrides one scenario), ``--budget`` seconds in total or the ``--until HH:MM`` UTC
deadline (no gate starts after it). Each gate is appended as one JSON line to ``--results FILE``
as soon as it ends (scenario, condition, seed, the 1-minute load average before and after, whether
any ``stress-ng`` ran beside it, outcomes, seconds, the comparators), so a run cut short still
counts; ``--merge FILE...`` prints the table from any number of such files (runs made in different
windows add up) without measuring. A gate's condition is what was seen, not what was asked: a
gate during which this script's ``stress-ng --cpu 2`` ran (asked by any stream) counts as
``stress``; ``--merge`` recomputes it from the timestamps of the gates asked to run stressed. The table
gives one row per condition, scenario and metric with the load range of its gates.

    .venv/bin/python bench/gate_quality.py --gates 4 --budget 1500 --results /tmp/g.jsonl
    .venv/bin/python bench/gate_quality.py --merge /tmp/g.jsonl /tmp/h.jsonl

Benchmark harnesses (``ab --harness go``/``gbench``, and a 200-benchmark A/A suite) have cells of
their own in ``bench/gate_quality_harness.py``, which runs the ``benchlab ab --harness`` command
line a CI job runs.

``--simulate-aa STORE`` measures nothing: it replays the one-metric rule on >= 10,000 A/A
gates whose differences are the recorded gates' own (each gate's d minus its median, in their
recorded order, with random signs: what the random order within a pair does to two identical
programs), on each recorded gate's look schedule carried on to the end of its budget
(:func:`to_budget`), at a true ratio of 1 (A/A) and of exactly 1 + threshold (the worst case
the guarantee is about: alarms <= alpha / 2). See :func:`simulate_aa`.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from benchlab.ci.ab import AbBenchmark, AbOptions, run_ab
from benchlab.ci.revisions import Revision
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
#: iterations of the test program: 7.5 million take ~10 ms here, so 1 % more work is ~0.95 %
#: more wall time (the ~0.5 ms spawn does not grow with it; 3 million, ~4 ms, gave 0.85 %)
ITERATIONS = 7_500_000
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


def one_metric(base: np.ndarray, head: np.ndarray, looks: list[dict], metric: str,
               threshold: float, alpha: float) -> dict:
    """The one-metric gate replayed exactly on the job's pairs and looks: each recorded look
    (its pairs and its share of the time budget) gets the critical value of alpha unsplit, and
    the first decided look ends it; undecided at the job's last look when none decides."""
    from benchlab.ci.gate import Looks, decide

    replay = Looks(alpha=alpha)
    d = None
    for lk in looks:
        critical = replay.critical(lk["pairs"], lk["spent"])
        critical = replay.last() if critical is None else critical
        d = decide(base[:lk["pairs"]], head[:lk["pairs"]], benchmark="g", metric=metric,
                   threshold=threshold, critical=critical, alpha=alpha, paired=True)
        if d.decided:
            return {"regression": d.regression, "outcome": d.outcome, "ratio": d.ratio,
                    "decided_s": lk["seconds"], "pairs": lk["pairs"]}
    last_final = bool(looks) and looks[-1].get("final", False)
    return {"regression": False, "outcome": "undecided" if last_final else "truncated",
            "ratio": d.ratio if d else float("nan"), "decided_s": None,
            "pairs": looks[-1]["pairs"] if looks else 0}


def one_gate(store: Store, builds: dict[str, Path], scenario: str, seed: int,
             iterations: int = ITERATIONS) -> dict:
    """Run one gate; per metric: regression decided, outcome, seconds to decide (the
    one-metric replay, and ``joint``: the job's split-alpha rule); comparators."""
    base_l, head_l, threshold, budget, metrics = SCENARIOS[scenario]
    bench = AbBenchmark(name=scenario, command=f"{{root}}/w {iterations}",
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
            out[metric] = {**one_metric(b, h, looks, metric, threshold, options.alpha),
                           "joint": out[metric]}
    out["iterations"] = iterations
    return out


STRESS = ["stress-ng", "--cpu", "2", "--quiet"]


def stress_running() -> bool:
    """Whether a ``stress-ng --cpu 2 --quiet`` (this script's stressor, any stream's) runs
    now. Other stress-ng processes (other people's tests: machine profiles run 1-second
    stressors) are part of the machine's load, not the stress condition."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if [a.decode(errors="replace") for a in argv[1:4]] == STRESS[1:] \
                    and argv[0].endswith(b"stress-ng"):
                return True
    return False


def _interval(r: dict) -> tuple[float, float]:
    start = datetime.datetime.fromisoformat(r["started"]).timestamp()
    return start, start + r["seconds"]


def relabel(records: list[dict]) -> list[dict]:
    """Each gate's condition from the timestamps: ``stress`` when it was asked to run beside
    this script's stressor, or when it overlapped (by more than the 1 s resolution of
    ``started``) a gate of another results file that was (that stream's stress-ng runs from
    before the first to after the last of them); else ``quiet``. Gates of one file ran one
    after another, so a file's quiet gates are never counted stressed by its own. (Results
    written before the condition was recorded this way counted any stress-ng.)"""
    windows = [(r.get("file"), *_interval(r)) for r in records if r.get("asked") == "stress"]
    for r in records:
        lo, hi = _interval(r)
        r["condition"] = "stress" if r.get("asked") == "stress" or any(
            f != r.get("file") and min(hi, b) - max(lo, a) > 1.0 for f, a, b in windows) \
            else "quiet"
    return records


def rate(k: int, n: int, digits: int = 1) -> str:
    if n == 0:
        return "-"
    ci = stats.binomtest(k, n).proportion_ci(0.95)
    return (f"{100 * k / n:.{digits}f} % [{100 * ci.low:.{digits}f}, {100 * ci.high:.{digits}f}]"
            f" ({k}/{n})")


def table(records: list[dict]) -> list[str]:
    """Markdown rows: one per seen condition, scenario and metric."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        cells.setdefault((r["condition"], r["scenario"]), []).append(r)
    aa = [r for r in records if r["scenario"] == "a/a"]
    if len({r["condition"] for r in aa}) > 1:  # the false-alarm rate over every A/A gate
        cells[("all", "a/a")] = aa
    lines = ["| condition | load (1 min) | scenario | metric | gate: alarms / caught "
             "(95 % CI) | within budget (A/A: decided equivalent) | median s to decide | asv | pyperf t-test | "
             "fixed 5 % |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (cond, scen), runs in sorted(cells.items()):
        loads = [x for r in runs for x in (r["load_before"], r["load_after"])]
        load = f"{min(loads):.1f}-{max(loads):.1f} (median {np.median(loads):.1f})"
        limit = SCENARIOS[scen][3]
        for metric in SCENARIOS[scen][4]:
            n = len(runs)
            k = sum(r[metric]["regression"] for r in runs)
            within = [r[metric]["decided_s"] for r in runs if r[metric]["regression"]
                      and r[metric]["decided_s"] is not None
                      and r[metric]["decided_s"] <= limit]
            med = f"{np.median(within):.1f}" if within else "-"
            in_time = (f"{sum(r[metric]['outcome'] == 'equivalent' for r in runs)}/{n} "
                       f"equivalent" if scen == "a/a" else f"{len(within)}/{n}")
            cmp = [rate(sum(r[f"cmp_{metric}"][c] for r in runs), n)
                   if f"cmp_{metric}" in runs[0] else "-"
                   for c in ("asv", "pyperf", "fixed 5%")]
            lines.append(f"| {cond} | {load} | {scen} | {metric} | {rate(k, n)} | {in_time} | "
                         f"{med} | " + " | ".join(cmp) + " |")
    return lines


def read_results(paths: list[str]) -> list[dict]:
    """Every gate in the JSON-lines files (a torn last line from a killed run is skipped)."""
    out = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            try:
                out.append({**json.loads(line), "file": str(path)})
            except json.JSONDecodeError:
                continue
    return out


def recorded_gates(path: Path) -> list[dict]:
    """Every timed gate of a kept store: scenario, looks, and the within-pair log ratio of
    each metric in measurement order."""
    out = []
    with Store.open(path) as store:
        for session in reversed(store.sessions()):
            ab = (store.get_session(session["uid"]).get("metadata") or {}).get("ab") or {}
            benches = store.benchmarks(session["id"])
            if len(benches) != 2 or not ab.get("looks"):
                continue
            scenario = benches[0]["name"].split("@")[0]
            looks = schedule(ab["looks"].get(scenario) or [], SCENARIOS.get(scenario))
            if not looks:
                continue
            d = {}
            for metric in ("wall", "cpu"):
                b = store.harness_values(benches[0]["id"], metric)[0]
                h = store.harness_values(benches[1]["id"], metric)[0]
                n = min(b.size, h.size)
                d[metric] = np.log(h[:n]) - np.log(b[:n])
            out.append({"scenario": scenario, "looks": looks, "d": d})
    return out


def schedule(looks: list[dict], scenario: tuple | None) -> list[dict]:
    """A gate's looks with their share of the budget. Gates recorded before ``ab`` spent its
    error on the clock (no ``spent``) get the share of their time budget each look had used,
    thinned as ``ab`` now looks (every 10 pairs, then every 2 % more: ci.ab.LOOK_GROWTH), the
    last one final when the budget was used up."""
    from benchlab.ci.ab import LOOK_GROWTH

    if not looks or scenario is None or "wall" not in scenario[4]:
        return []
    if "spent" in looks[0]:
        return looks
    budget = scenario[3]
    out, due = [], 0.0
    for i, lk in enumerate(looks):
        final = i == len(looks) - 1 and lk["seconds"] >= budget - 0.5
        if lk["pairs"] < due and not final:
            continue
        due = lk["pairs"] * (1.0 + LOOK_GROWTH)
        spent = 1.0 if final else min(lk["seconds"] / budget, 1.0 - 1e-9)
        out.append({**lk, "spent": spent, "final": final})
    return out


def _walsh_at_most(x: np.ndarray, v: float) -> np.ndarray:
    """Per row of ``x`` (rows sorted): how many Walsh averages (x_i + x_j) / 2, i <= j, are
    <= v (one flattened search over all rows, each row offset above the previous one)."""
    rows, n = x.shape
    step = 4.0 * (float(np.abs(x).max()) + abs(v)) + 1.0
    offset = (np.arange(rows) * step)[:, None]
    flat = (x + offset).ravel()
    j = np.searchsorted(flat, (2.0 * v - x + offset).ravel(), side="right").reshape(rows, n)
    j = j - (np.arange(rows) * n)[:, None]
    return np.maximum(j - np.arange(n)[None, :], 0).sum(axis=1)


def aa_alarms(e: np.ndarray, looks: list[dict], threshold: float, shift: float,
              signs: np.ndarray, alpha: float) -> tuple[int, int]:
    """(regressions, equivalents) of A/A gates on one recorded schedule: the differences
    ``e`` (centred) with each row of random ``signs``, plus the true log ratio ``shift``.

    The rule is the library's, as counts: at each look the critical value of the recorded
    (pairs, share of the budget) under ``alpha`` (ci.gate.Looks), and the order statistic
    indices of stats.paired (signed-rank up to MAX_WALSH pairs, sign test above); "slower" is
    "at most `low` averages (or differences) at or below log(1 + threshold)", "equivalent"
    the interval inside +-threshold. A gate stops at its first decided look.
    """
    from benchlab.ci.gate import Looks
    from benchlab.stats.paired import MAX_WALSH

    up, down = math.log1p(threshold), math.log1p(-threshold)
    below_down = float(np.nextafter(down, -np.inf))
    replay = Looks(alpha=alpha)
    alive = np.ones(signs.shape[0], dtype=bool)
    slower = equivalent = 0
    x = np.empty((signs.shape[0], 0))  # each live gate's differences so far, sorted
    for lk in looks:
        n = lk["pairs"]
        z = replay.critical(n, lk["spent"])
        z = min(replay.last() if z is None else z, 37.0)
        if n > e.size:
            break
        # the new pairs merged in (a stable sort of two sorted runs is a merge)
        new = np.sort(signs[alive, x.shape[1]:n] * e[x.shape[1]:n] + shift, axis=1)
        x = np.sort(np.concatenate([x, new], axis=1), axis=1, kind="stable")
        if n <= MAX_WALSH:
            total = n * (n + 1) // 2
            sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
            at_up, at_down = _walsh_at_most(x, up), _walsh_at_most(x, below_down)
        else:
            total, sigma = n, math.sqrt(n) / 2.0
            at_up = np.count_nonzero(x <= up, axis=1)
            at_down = np.count_nonzero(x <= below_down, axis=1)
        low = int(min(max(math.floor(total / 2.0 - z * sigma), 0), total - 1))
        high = int(min(max(math.ceil(total / 2.0 + z * sigma) - 1, 0), total - 1))
        is_slower = at_up <= low                        # interval's low end above 1 + t
        is_equal = (at_down <= low) & (at_up >= high + 1)  # low >= 1 - t and high <= 1 + t
        is_faster = at_down >= high + 1                  # high end below 1 - t
        slower += int(is_slower.sum())
        equivalent += int((is_equal & ~is_slower).sum())
        ended = is_slower | is_equal | is_faster
        idx = np.flatnonzero(alive)
        alive[idx[ended]] = False
        x = x[~ended]
        if not alive.any():
            break
    return slower, equivalent


def to_budget(looks: list[dict], e: np.ndarray, budget: float, rng: np.random.Generator
              ) -> tuple[list[dict], np.ndarray]:
    """A recorded gate that stopped before its budget (it was decided), carried on to the end
    of it: looks on ``ab``'s schedule at the gate's last pace (pairs per second), the last at
    the budget spending what is left, and the differences beyond the recorded ones drawn from
    the recorded ones (their lag-1 autocorrelation was within +-0.04). Every simulated gate so
    spends its whole error, as the guarantee assumes."""
    from benchlab.ci.ab import LOOK_GROWTH

    last = looks[-1]
    if last.get("final") or last["seconds"] <= 0:
        return looks, e
    pace = last["pairs"] / last["seconds"]
    out, pairs = list(looks), last["pairs"]
    while True:
        pairs = max(pairs + 10, 10 * math.ceil(pairs * (1.0 + LOOK_GROWTH) / 10))
        if pairs / pace >= budget:
            pairs = max(int(budget * pace), out[-1]["pairs"] + 1)
            out.append({"pairs": pairs, "spent": 1.0, "seconds": budget, "final": True})
            break
        out.append({"pairs": pairs, "spent": pairs / pace / budget, "seconds": pairs / pace,
                    "final": False})
    if pairs > e.size:
        e = np.concatenate([e, rng.choice(e, pairs - e.size)])
    return out, e


def simulate_aa(path: Path, gates: int, *, seed: int = 0, alpha: float = 0.01) -> list[str]:
    """Lines of a table: A/A false alarms of the one-metric rule over >= ``gates`` simulated
    gates per cell, from a kept store's recorded gates (see the module docstring)."""
    recorded = recorded_gates(path)
    if not recorded:
        return [f"no gate with recorded looks in {path}"]
    rng = np.random.default_rng(seed)
    per = -(-gates // len(recorded))
    lines = [f"{len(recorded)} recorded gates, {per} sign patterns each, alpha {alpha}",
             "| metric | true ratio | gates | false regressions (95 % CI) | equivalent |",
             "|---|---|---|---|---|"]
    for metric in ("wall", "cpu"):
        for label, at_threshold in (("1 (A/A)", False), ("1 + threshold", True)):
            alarms = equal = total = 0
            for g in recorded:
                threshold = SCENARIOS[g["scenario"]][2]
                d = g["d"][metric]
                looks, e = to_budget(g["looks"], d - np.median(d), SCENARIOS[g["scenario"]][3],
                                     rng)
                signs = rng.choice(np.array([-1.0, 1.0]), size=(per, e.size))
                shift = math.log1p(threshold) if at_threshold else 0.0
                k, q = aa_alarms(e, looks, threshold, shift, signs, alpha)
                alarms, equal, total = alarms + k, equal + q, total + per
            lines.append(f"| {metric} | {label} | {total} | {rate(alarms, total, 2)} | "
                         f"{100 * equal / total:.1f} % |")
    return lines


def deadline(text: str | None) -> float:
    """``HH:MM`` UTC as a Unix time: today's, or tomorrow's once today's has passed (a run over
    midnight); infinity when not given."""
    if not text:
        return float("inf")
    now = datetime.datetime.now(datetime.timezone.utc)
    hh, mm = (int(x) for x in text.split(":"))
    at = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    return (at + datetime.timedelta(days=1) if at < now else at).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=200, help="gates per scenario and condition")
    parser.add_argument("--gates-for", action="append", default=[],
                        metavar="[CONDITION:]SCENARIO=N",
                        help="gates for one scenario (in every or one condition), overriding "
                             "--gates")
    parser.add_argument("--budget", type=float, default=3600.0, help="total seconds")
    parser.add_argument("--until", help="start no gate after HH:MM UTC")
    parser.add_argument("--conditions", default="quiet,stress")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (streams differ)")
    parser.add_argument("--results", help="append each gate as a JSON line to this file")
    parser.add_argument("--keep-store", metavar="PATH",
                        help="store the gates' runs in this SQLite file and keep it (to replay "
                             "other rules on the very same pairs); default: a temporary one")
    parser.add_argument("--merge", nargs="+", metavar="FILE",
                        help="print the table from these results files; measure nothing")
    parser.add_argument("--iterations", type=int, default=ITERATIONS,
                        help=f"the test program's iterations (default {ITERATIONS:,}: ~10 ms)")
    parser.add_argument("--simulate-aa", metavar="STORE",
                        help="replay the rule on >= --simulations A/A gates made of this kept "
                             "store's recorded differences; measure nothing")
    parser.add_argument("--simulations", type=int, default=10_000)
    a = parser.parse_args()
    if a.simulate_aa:
        for line in simulate_aa(Path(a.simulate_aa), a.simulations, seed=a.seed_start):
            print(line, flush=True)
        return
    if a.merge:
        records = relabel(read_results(a.merge))
        loads = [x for r in records for x in (r["load_before"], r["load_after"])]
        print(f"{len(records)} gates from {len(a.merge)} file(s); load average (1 min): "
              f"median {np.median(loads):.1f}, range {min(loads):.1f}-{max(loads):.1f}")
        for line in table(records):
            print(line)
        return
    conditions = a.conditions.split(",")
    scenarios = a.scenarios.split(",")
    targets = {(c, s): a.gates for c in conditions for s in scenarios}
    for item in a.gates_for:
        name, _, n = item.partition("=")
        cond, _, scen = name.rpartition(":")
        for c in [cond] if cond else conditions:
            targets[(c, scen)] = int(n)
    stop_at = deadline(a.until)
    work = Path(tempfile.mkdtemp(prefix="benchlab-gate-quality-"))
    records: list[dict] = []
    done: dict[tuple[str, str], int] = {}
    start = time.monotonic()

    def out_of_time() -> bool:
        return time.monotonic() - start > a.budget or time.time() > stop_at

    try:
        builds = build(work)
        store = Store.open(Path(a.keep_store) if a.keep_store else work / "gates.db")
        for seed in itertools.count(a.seed_start):
            if out_of_time() or all(done.get(cell, 0) >= n for cell, n in targets.items()):
                break
            for cond in conditions:
                todo = [s for s in scenarios if done.get((cond, s), 0) < targets[(cond, s)]]
                if not todo or out_of_time():
                    continue
                stress = None
                if cond == "stress":
                    stress = subprocess.Popen(STRESS, start_new_session=True)
                try:
                    for scen in todo:
                        if out_of_time():
                            break
                        load_before = os.getloadavg()[0]
                        stressed = stress_running()
                        started = datetime.datetime.now(datetime.timezone.utc).isoformat(
                            timespec="seconds")
                        r = one_gate(store, builds, scen, seed, a.iterations)
                        stressed = stressed or stress_running()
                        done[(cond, scen)] = done.get((cond, scen), 0) + 1
                        r.update(scenario=scen, asked=cond, seed=seed, started=started,
                                 condition="stress" if stressed else "quiet",
                                 load_before=load_before, load_after=os.getloadavg()[0])
                        records.append(r)
                        if a.results:
                            with open(a.results, "a") as f:
                                f.write(json.dumps(r) + "\n")
                        print(f"[{time.monotonic() - start:6.0f} s] {r['condition']} {scen} "
                              f"seed {seed}: "
                              + ", ".join(f"{m} {r[m]['outcome']} {r[m]['ratio']:.4f}"
                                          for m in SCENARIOS[scen][4])
                              + f" ({r['pairs']} pairs, {r['seconds']:.1f} s, "
                              f"load {r['load_after']:.1f})", flush=True)
                finally:
                    if stress is not None:
                        os.killpg(stress.pid, signal.SIGTERM)
                        stress.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    if not records:
        print("no gate ran")
        return
    loads = [x for r in records for x in (r["load_before"], r["load_after"])]
    print(f"{len(records)} gates in {time.monotonic() - start:.0f} s; "
          f"load average (1 min) during them: median {np.median(loads):.1f}, "
          f"range {min(loads):.1f}-{max(loads):.1f}")
    for line in table(records):
        print(line)


if __name__ == "__main__":
    main()
