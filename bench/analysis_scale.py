"""How the analyses grow with the data, beside a peer measured in the same run (prints figures).

1. In one process, per size N of each of two samples (10k, 100k, 1M, 10M): CPU time of
   - the Hodges-Lehmann estimate with its 95 % interval (N x N differences, never formed),
     beside numpy's sort of both samples, the floor of any exact rank method;
   - the Mann-Whitney test, beside ``scipy.stats.mannwhitneyu`` (asymptotic, as ours at that n);
   - the summary a run prints (median, MAD, mean, sd, min, max, p95, p99), beside numpy
     computing the same numbers;
   - the whole verdict of two series (what ``run``, ``show`` and ``compare SESSION`` print).
2. The console script on a store of one session with two benchmarks of N program-reported
   samples each (N = 10k, 100k, 500k) and one of 1M: ``compare SESSION``, ``show SESSION`` and
   ``report SESSION``, wall time, CPU time and peak memory (the child's maximum resident set),
   beside pandas reading the same values from the same SQLite file. Goals: compare and show of
   2 x 500k <= 1 s and <= 200 MB; report of 1M <= 2 s, file <= 5 MB.

Samples are integer nanoseconds, log-normal around 440 us with a 2 % shift between the two
(seeded). CPU times are printed because the machine is shared: wall time grows with the load,
CPU time much less; the load average is printed first. Ratios to the peer are the figures to
compare across machines.

Usage:  .venv/bin/python bench/analysis_scale.py [--max N] [--repeat R] [--skip-cli]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchlab.stats.descriptive import summarize  # noqa: E402
from benchlab.stats.rank import hodges_lehmann, mann_whitney_u  # noqa: E402
from benchlab.stats.verdict_model import verdict_model  # noqa: E402
from benchlab.store.db import Store  # noqa: E402
from tests.report.storebuild import add_session  # noqa: E402

BENCHLAB = str(Path(sys.executable).parent / "benchlab")
SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
CLI_SIZES = (10_000, 100_000, 500_000)
#: CPU seconds measured before (docs/analysis.md, 2026-12-07, load 14), printed beside
#: today's: N -> (Hodges-Lehmann with its interval, the whole verdict).
PREVIOUS_DATE = "2026-12-07 at load 14"
PREVIOUS = {10_000: (0.022, 0.11), 100_000: (0.14, 0.39), 1_000_000: (0.29, 2.8),
            10_000_000: (4.2, 41.0)}
#: The console script's CPU seconds measured then: N -> (compare, show) of 2 x N samples.
PREVIOUS_CLI = {10_000: (0.29, 0.30), 100_000: (0.73, 0.72), 500_000: (1.87, 1.95)}


def samples(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two samples of ``n`` integer ns, the second 2 % slower."""
    rng = np.random.default_rng(seed)
    return (np.round(rng.lognormal(13.0, 0.3, n)), np.round(rng.lognormal(13.02, 0.3, n)))


def forget() -> None:
    """Empty the statistics' memory of selected differences and computed rank tests: each call
    is timed cold, as a new process's first verdict (within one verdict they are reused)."""
    from benchlab.stats.rank import forget_remembered

    forget_remembered()


def cpu_s(fn: Callable[[], Any], repeat: int) -> float:
    """Median CPU seconds of ``fn()`` over ``repeat`` calls, each cold (:func:`forget`)."""
    times = []
    for _ in range(repeat):
        forget()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def numpy_summary(x: np.ndarray) -> tuple:
    """The summary's numbers the way a numpy user computes them."""
    med = np.median(x)
    return (med, np.median(np.abs(x - med)), x.mean(), x.std(ddof=1), x.min(), x.max(),
            *np.percentile(x, [95, 99]))


def in_process(sizes: list[int], repeat: int) -> None:
    from scipy.stats import mannwhitneyu

    print("CPU seconds per call (median of", repeat, "), two samples of N each; HL+CI on the")
    print("integer ns (a table lookup per row), HL log on their logarithms as the verdict's ratio")
    print("(a binary search per row); (before) the figures of", PREVIOUS_DATE)
    head = (f"{'N':>10}  {'HL+CI':>7} {'(before)':>8} {'HL log':>7} {'np.sort':>7} {'ratio':>6}  "
            f"{'MW':>7} {'scipy':>7} {'ratio':>6}  {'summary':>7} {'numpy':>7} {'ratio':>6}  "
            f"{'verdict':>7} {'(before)':>8}")
    print(head)
    for n in sizes:
        x, y = samples(n)
        log_x, log_y = np.log(x), np.log(y)
        reps = repeat if n <= 1_000_000 else 1
        hl = cpu_s(lambda: hodges_lehmann(x, y), reps)
        hl_log = cpu_s(lambda: hodges_lehmann(log_x, log_y), reps)
        floor = cpu_s(lambda: (np.sort(x), np.sort(y)), reps)
        mw = cpu_s(lambda: mann_whitney_u(x, y), reps)
        peer_mw = cpu_s(lambda: mannwhitneyu(x, y, method="asymptotic"), reps)
        summ = cpu_s(lambda: summarize(x), reps)
        peer_summ = cpu_s(lambda: numpy_summary(x), reps)
        verdict = cpu_s(lambda: verdict_model([("b", y), ("a", x)]), reps)
        hl_before, verdict_before = PREVIOUS.get(n, (float("nan"), float("nan")))
        print(f"{n:>10,}  {hl:7.3f} {hl_before:8.3f} {hl_log:7.3f} {floor:7.3f} "
              f"{hl / floor:5.1f}x  {mw:7.3f} {peer_mw:7.3f} {mw / peer_mw:5.1f}x  {summ:7.3f} "
              f"{peer_summ:7.3f} {summ / peer_summ:5.1f}x  {verdict:7.3f} {verdict_before:8.3f}",
              flush=True)


def child(argv: list[str]) -> tuple[float, float, float]:
    """Wall s, CPU s (user + sys) and peak resident MB of one run of ``argv``. GNU time
    reports the peak: a child forked from this process would count this process's memory
    up to its exec."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"analysis_scale: {' '.join(argv)} failed ({proc.returncode}): "
                 f"{proc.stderr[-400:]}")
    user, system, kib = proc.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(kib) / 1024


def timed_child(argv: list[str], repeat: int) -> tuple[float, float, float]:
    """Medians of :func:`child` over ``repeat`` runs."""
    runs = [child(argv) for _ in range(repeat)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))  # type: ignore


PEER = """
import sqlite3, sys, numpy as np, pandas as pd
conn = sqlite3.connect(sys.argv[1])
df = pd.read_sql("SELECT r.benchmark_id, b.data FROM sample_blocks b JOIN runs r"
                 " ON r.id = b.run_id WHERE r.warmup = 0 ORDER BY r.seq, b.first_seq", conn)
per = df.groupby("benchmark_id")["data"].apply(
    lambda d: pd.Series(np.concatenate([np.frombuffer(v, dtype="<f8") for v in d])).median())
"""


def cli(work: Path, sizes: list[int], repeat: int) -> None:
    print()
    print("the console script: wall s / CPU s / peak MB (median of", repeat, ")")
    for n in sizes:
        db = work / f"two-{n}.db"
        if not db.exists():
            x, y = samples(n, seed=2)
            with Store.open(db) as store:
                uid = add_session(store, {"a": x, "b": y}, name="two", program_metric="latency")
        else:
            with Store.open(db) as store:
                uid = store.sessions()[0]["uid"]
        lines = {
            f"compare SESSION (2 x {n:,})": [BENCHLAB, "compare", uid, "--db", str(db)],
            f"show SESSION (2 x {n:,})": [BENCHLAB, "show", uid, "--db", str(db)],
            f"  peer: pandas reads 2 x {n:,} and takes medians": [sys.executable, "-c", PEER,
                                                                   str(db)],
        }
        before = dict(zip(("compare", "show"), PREVIOUS_CLI.get(n, ())))
        for label, argv in lines.items():
            wall, cpu, mb = timed_child(argv, repeat)
            was = before.get(label.split()[0])
            print(f"  {label:52} {wall:6.2f} s {cpu:6.2f} s {mb:7.0f} MB"
                  + (f"  (before: {was:.2f} s CPU)" if was else ""))
    db = work / "million.db"
    if not db.exists():
        rng = np.random.default_rng(3)
        x = np.round(rng.lognormal(13.0, 0.3, 1_000_000))
        with Store.open(db) as store:
            add_session(store, {"latency": x}, name="million", program_metric="latency")
    out = work / "million.html"
    wall, cpu, mb = timed_child([BENCHLAB, "report", "million", "-o", str(out), "--db", str(db)],
                                repeat)
    print(f"  {'report SESSION (1,000,000 samples)':52} {wall:6.2f} s {cpu:6.2f} s {mb:7.0f} MB"
          f", file {out.stat().st_size / 1e6:.2f} MB")
    wall, cpu, mb = timed_child([sys.executable, "-c", PEER, str(db)], repeat)
    print(f"  {'  peer: pandas reads 1,000,000 and takes the median':52} {wall:6.2f} s "
          f"{cpu:6.2f} s {mb:7.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=SIZES[-1], help="largest N (default 10M)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-cli", action="store_true", help="only the in-process curve")
    ap.add_argument("--keep", default=None, help="keep the stores in DIR")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}")
    in_process([n for n in SIZES if n <= args.max], args.repeat)
    if not args.skip_cli:
        work = Path(args.keep or tempfile.mkdtemp(prefix="benchlab-analysis-scale-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            cli(work, [n for n in CLI_SIZES if n <= args.max], args.repeat)
        finally:  # the stores (~20 MB) stay only where --keep asked for them
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
