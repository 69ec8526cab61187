"""Start-up time of ``benchlab`` beside hyperfine's (issue 8, Part 1 item 5). Prints figures.

Median wall time of each command line over N runs, the commands interleaved round by round (so
machine load drifts across all of them alike), each run a fresh process with the environment's
PYTHONDONTWRITEBYTECODE as it is (the setup compiles bytecode, so it must not matter). Targets:
``--version`` and ``--help`` <= 0.15 s, ``run -r 3 /bin/true`` end to end <= 0.6 s.

Usage:  .venv/bin/python bench/startup.py [--runs N] [--benchlab PATH]
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

TARGETS_S = {"--version": 0.15, "--help": 0.15, "run": 0.6}
HEAVY = ("numpy", "scipy", "pandas", "matplotlib", "rich", "dask", "jinja2", "bokeh", "psycopg")


def wall_s(argv: list[str]) -> float:
    """Wall time in seconds of one run of ``argv`` (output discarded; a failure is fatal)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"startup: {' '.join(argv)} failed ({proc.returncode}): "
                 f"{proc.stderr.decode(errors='replace').strip()[-500:]}")
    return elapsed


def heavy_importers(argv: list[str]) -> list[tuple[str, str, float]]:
    """(heavy package, the benchlab module whose import pulled it in first, total import time of
    the package's modules in s) for one run of ``argv`` (a benchlab command line)."""
    code = ("import sys; from benchlab.cli.main import main; sys.argv = ['benchlab'] + "
            f"{argv!r}; main()")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows = []  # (depth, module, self us), in completion order: children before their parents
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((depth, name.strip(), int(own)))
    first: dict[str, str] = {}
    total: dict[str, float] = {}
    for index, (depth, name, own) in enumerate(rows):
        top = name.split(".")[0]
        if top not in HEAVY:
            continue
        total[top] = total.get(top, 0.0) + own / 1e6
        if top in first:
            continue
        # The nearest enclosing benchlab module; depth 0 means a function imported it at run time.
        culprit, level = "(a function, at run time)", depth
        for later_depth, later_name, _ in rows[index + 1:]:
            if later_depth < level:
                level = later_depth
                if later_name.startswith("benchlab"):
                    culprit = later_name
                    break
        first[top] = culprit
    return [(top, first[top], total[top]) for top in first]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--benchlab", default=str(Path(sys.executable).parent / "benchlab"))
    args = parser.parse_args()
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        sys.exit("startup: hyperfine is not installed; run scripts/setup.sh")
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        db = str(Path(tmp) / "bench.db")
        cases = {
            "benchlab --version": ([args.benchlab, "--version"], "--version"),
            "benchlab --help": ([args.benchlab, "--help"], "--help"),
            "benchlab run -r 3 /bin/true": ([args.benchlab, "run", "-q", "-r", "3", "/bin/true",
                                             "--db", db], "run"),
            "hyperfine --version": ([hyperfine, "--version"], None),
            "hyperfine -N -r 3 /bin/true": ([hyperfine, "-N", "-r", "3", "/bin/true",
                                             "--style", "none"], None),
        }
        for argv, _ in cases.values():      # one warm-up each: page cache, the store's schema
            wall_s(argv)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (argv, _) in cases.items():
                times[name].append(wall_s(argv))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"start-up, median of {args.runs} interleaved runs "
          f"(PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}, "
          f"{os.cpu_count()} CPUs)")
    print(f"{'command':32} {'median':>9} {'min':>9} {'max':>9} {'target':>8}")
    for name, (_, key) in cases.items():
        target = f"{TARGETS_S[key]:.2f} s" if key else ""
        flag = "" if key is None or medians[name] <= TARGETS_S[key] else "  OVER"
        print(f"{name:32} {medians[name]:8.3f}s {min(times[name]):8.3f}s "
              f"{max(times[name]):8.3f}s {target:>8}{flag}")
    print()
    print("ratio benchlab --version / hyperfine --version:         "
          f"{medians['benchlab --version'] / medians['hyperfine --version']:6.1f}x")
    print("ratio benchlab run -r 3 / hyperfine -N -r 3 (/bin/true): "
          f"{medians['benchlab run -r 3 /bin/true'] / medians['hyperfine -N -r 3 /bin/true']:6.1f}x")
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        pulled = heavy_importers(["run", "-q", "-r", "3", "/bin/true", "--db",
                                  str(Path(tmp) / "who.db")])
    print()
    print("heavy packages imported by `benchlab run -r 3 /bin/true` (first importer, s spent importing it):")
    for top, culprit, cost in pulled or [("none", "-", 0.0)]:
        print(f"  {top:12} via {culprit:45} {cost:6.3f} s")


if __name__ == "__main__":
    main()
