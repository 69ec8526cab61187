"""How long a report takes and how big it is at scale (prints figures).

1. A session with one benchmark of 1,000,000 program-reported samples (log-normal around
   10 µs with a 2 % level shift half-way): ``benchlab report`` as a user runs it (the console
   script, so start-up and imports count), its wall time and the HTML file's size. Target:
   <= 5 s and <= 5 MB.
2. A history of 200 sessions of one benchmark (30 runs each, a 5 % regression at session 150
   and a kernel change at 100): ``benchlab history`` (text) and ``benchlab report --history``
   (HTML), wall times. Target: <= 5 s.

The stores are built once with the store's writer API (not timed). Each command is timed
``--repeat`` times; the median wall time is printed with the minimum and maximum, and the
median CPU time (user + sys of the child: on a shared machine, what the command itself costs).
Beside each, a peer measured in the same run: a Python process that reads the same values with
pandas' ``read_sql`` from the same SQLite file (and, for the history, takes each session's
median with pandas) -- the floor of "start Python, read the numbers", with no statistics and no
figures.

Usage:  .venv/bin/python bench/report_scale.py [--repeat N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchlab.store.db import Store  # noqa: E402
from tests.report.storebuild import add_session, environment  # noqa: E402

BENCHLAB = str(Path(sys.executable).parent / "benchlab")


def build_million(path: Path) -> None:
    rng = np.random.default_rng(1)
    x = 10_000 * rng.lognormal(0, 0.05, 1_000_000)
    x[500_000:] *= 1.02
    with Store.open(path) as store:
        add_session(store, {"latency": x}, name="million", program_metric="latency")


def build_history(path: Path, n: int = 200) -> None:
    rng = np.random.default_rng(2)
    with Store.open(path) as store:
        for i in range(n):
            env = environment(**{"git.commit": f"{i:04x}" * 10,
                                 "os.kernel.release": "6.5.0" if i >= 100 else "6.1.0"})
            level = 1e6 * (1.05 if i >= 150 else 1.0)
            add_session(store, {"parse": level * rng.lognormal(0, 0.01, 30)},
                        name=f"nightly-{i}", env=env)


def timed(argv: list[str], repeat: int) -> tuple[float, float, float, float]:
    """Median, min and max wall time (s) and the median CPU time (user + sys, s) of the
    command: on a shared machine the CPU time is what the command itself costs."""
    times, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), min(times), max(times), statistics.median(cpus)


PEER_MILLION = """
import sqlite3, numpy as np, pandas as pd
conn = sqlite3.connect({db!r})
df = pd.read_sql("SELECT b.data FROM sample_blocks b JOIN runs r ON r.id = b.run_id"
                 " WHERE r.warmup = 0 AND r.status = 'ok' ORDER BY r.seq, b.first_seq", conn)
values = pd.Series(np.concatenate([np.frombuffer(d, dtype="<f8") for d in df["data"]]))
assert len(values) == 1_000_000
"""

PEER_HISTORY = """
import sqlite3, pandas as pd
conn = sqlite3.connect({db!r})
df = pd.read_sql("SELECT r.session_id, r.wall_ns FROM runs r JOIN benchmarks b"
                 " ON b.id = r.benchmark_id WHERE b.name = 'parse' AND r.warmup = 0"
                 " AND r.status = 'ok' ORDER BY r.session_id, r.seq", conn)
assert df.groupby("session_id")["wall_ns"].median().size == 200
"""


def show(label: str, result: tuple[float, float, float, float], repeat: int,
         extra: str = "") -> None:
    """One line: median wall (min, max), median CPU, anything else."""
    med, lo, hi, cpu = result
    print(f"{label}: wall {med:.2f} s (min {lo:.2f}, max {hi:.2f}; {repeat} runs), "
          f"CPU {cpu:.2f} s{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", default=None, help="Keep the stores and reports in DIR.")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="benchlab-report-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    million, history = work / "million.db", work / "history.db"
    if not million.exists():
        build_million(million)
    if not history.exists():
        build_history(history)
    out = work / "million.html"
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs (wall times grow with it; "
          f"CPU times do not)")
    peer = [sys.executable, "-c"]
    show("1M-sample report", timed([BENCHLAB, "report", "million", "-o", str(out), "--db",
                                    str(million)], args.repeat), args.repeat,
         f", {out.stat().st_size / 1e6:.2f} MB  [target <= 5 s, <= 5 MB]")
    show("  peer: pandas.read_sql of the same 1M samples",
         timed(peer + [PEER_MILLION.format(db=str(million))], args.repeat), args.repeat)
    show("history of 200 sessions (text)", timed([BENCHLAB, "history", "parse", "--db",
                                                  str(history)], args.repeat), args.repeat,
         "  [target <= 5 s]")
    hout = work / "history.html"
    show("history of 200 sessions (HTML report)",
         timed([BENCHLAB, "report", "--history", "parse", "-o", str(hout), "--db",
                str(history)], args.repeat), args.repeat,
         f", {hout.stat().st_size / 1e6:.2f} MB  [target <= 5 s]")
    show("  peer: pandas.read_sql of the 200 sessions' runs and their medians",
         timed(peer + [PEER_HISTORY.format(db=str(history))], args.repeat), args.repeat)
    print(f"files in {work}")


if __name__ == "__main__":
    main()
