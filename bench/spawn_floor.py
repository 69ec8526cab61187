"""Measurement floor of benchlab's spawn vs ``hyperfine -N``.

Prints, for ``/bin/true`` and ``sleep 0.01``, the median wall time that benchlab's
``spawn_measured`` reports and that ``hyperfine -N --runs N --export-json`` reports, their ratio
(benchlab / hyperfine; <= 1 means benchlab adds no more overhead than hyperfine), the peak RSS
benchlab reports for ``/bin/true`` and the Python-side cost per run (harness loop time / runs).

The machine is shared, so load drifts during the benchmark: benchlab's runs are split in two
halves, one before and one after hyperfine's, and pooled.

Usage: .venv/bin/python bench/spawn_floor.py [--runs 300] [--method helper|python]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from benchlab.measure.spawn import SpawnRequest, spawn_measured  # noqa: E402

COMMANDS = {"/bin/true": ["/bin/true"], "sleep 0.01": ["sleep", "0.01"]}


def benchlab_runs(argv: list[str], runs: int, method: str) -> tuple[list, float]:
    request = SpawnRequest(argv=argv)
    for _ in range(3):  # warm-up: page cache, helper binary lookup
        spawn_measured(request, method=method)
    start = time.perf_counter_ns()
    results = [spawn_measured(request, method=method) for _ in range(runs)]
    per_run_ns = (time.perf_counter_ns() - start) / runs
    bad = [r for r in results if r.status != "ok"]
    if bad:
        raise SystemExit(f"benchlab run failed: {bad[0]}")
    return results, per_run_ns


def hyperfine_median_ns(command: str, runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "hf.json"
        subprocess.run(
            ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json",
             str(export), "--style", "none", command],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        result = json.loads(export.read_text())["results"][0]
    return statistics.median(result["times"]) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--method", default="helper", choices=["helper", "python"])
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        raise SystemExit("hyperfine not found; install it (apt-get install hyperfine)")

    print(f"runs per measurement: {args.runs}; benchlab method: {args.method}")
    print(f"{'command':<12} {'benchlab median':>16} {'hyperfine -N median':>20} {'ratio':>7}"
          f" {'benchlab loop/run':>18}")
    true_rss = None
    for label, argv in COMMANDS.items():
        first, first_ns = benchlab_runs(argv, args.runs // 2, args.method)
        theirs = hyperfine_median_ns(" ".join(argv), args.runs)
        second, second_ns = benchlab_runs(argv, args.runs - args.runs // 2, args.method)
        results = first + second
        per_run_ns = (first_ns * len(first) + second_ns * len(second)) / len(results)
        ours = statistics.median(r.wall_ns for r in results)
        print(f"{label:<12} {ours / 1e6:>13.3f} ms {theirs / 1e6:>17.3f} ms {ours / theirs:>7.2f}"
              f" {per_run_ns / 1e6:>15.3f} ms")
        if label == "/bin/true":
            true_rss = statistics.median(r.max_rss_kib for r in results)
            method_used = results[0].method
    print(f"/bin/true peak RSS (median of max_rss_kib): {true_rss:.0f} KiB"
          f" (method {method_used})")


if __name__ == "__main__":
    main()
