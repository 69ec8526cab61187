"""The gate on benchmark harnesses: false alarms and detections of ``benchlab ab --harness``.

Each *gate* is one real ``benchlab ab --harness KIND`` job (the command line a CI job runs) in a
throwaway git repository whose head commit changes nothing the benchmarks run (A/A) or makes
one benchmark do 5 % more work:

==============  ===================================================  ==========================
cell            project                                              success
==============  ===================================================  ==========================
go a/a          a Go package, BenchmarkSum and BenchmarkProduct      no regression
go 5%           BenchmarkSum's loop 5 % longer                       Sum a regression, Product not
gbench a/a      a Google Benchmark binary, BM_Sum and BM_Product     no regression
gbench 5%       BM_Sum's loop 5 % longer                             BM_Sum a regression only
suite200 a/a    a Google Benchmark binary of 200 benchmarks          no regression among 200
==============  ===================================================  ==========================

Every benchmark's decision is counted on the harness's primary metric (``ns_per_op``,
``real_time``), with Clopper-Pearson 95 % intervals; each gate is appended to ``--results`` as
one JSON line as soon as it ends, and ``--merge FILE...`` prints the table from such files.

    .venv/bin/python bench/gate_quality_harness.py --gates 3 --results /tmp/h.jsonl
    .venv/bin/python bench/gate_quality_harness.py --merge /tmp/h.jsonl
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.harnesses.toolchains import GO_SUM_PRODUCT as GO_TEST  # noqa: E402  (one Go package)

BENCHLAB = str(Path(sys.executable).parent / "benchlab")


GBENCH = r"""#include <benchmark/benchmark.h>
static long work(long n) { long s = 0; for (long i = 0; i < n; ++i) benchmark::DoNotOptimize(s += i * i); return s; }
static void BM_Sum(benchmark::State& state) { for (auto _ : state) benchmark::DoNotOptimize(work(SUM)); }
static void BM_Product(benchmark::State& state) { for (auto _ : state) benchmark::DoNotOptimize(work(2000) * 3); }
BENCHMARK(BM_Sum);
BENCHMARK(BM_Product);
BENCHMARK_MAIN();
"""

SUITE200 = r"""#include <benchmark/benchmark.h>
static void BM_Work(benchmark::State& state) {
  long n = 200 + state.range(0);
  for (auto _ : state) { long s = 0; for (long i = 0; i < n; ++i) benchmark::DoNotOptimize(s += i); }
}
BENCHMARK(BM_Work)->DenseRange(0, 199);
BENCHMARK_MAIN();
"""

GXX = "g++ -O2 b.cc -o b -lbenchmark -lpthread"

#: cell -> (kind, the file, its text, SUM of base and head, build, command, primary, slowed)
CELLS = {
    "go a/a": ("go", "tiny_test.go", GO_TEST, (2000, 2000), None,
               "go -C {root} test -run ^$ -bench . -benchtime 100ms ./...", "ns_per_op", None),
    "go 5%": ("go", "tiny_test.go", GO_TEST, (2000, 2100), None,
              "go -C {root} test -run ^$ -bench . -benchtime 100ms ./...", "ns_per_op", "Sum"),
    "gbench a/a": ("gbench", "b.cc", GBENCH, (2000, 2000), GXX,
                   "{root}/b --benchmark_min_time=0.05", "real_time", None),
    "gbench 5%": ("gbench", "b.cc", GBENCH, (2000, 2100), GXX,
                  "{root}/b --benchmark_min_time=0.05", "real_time", "BM_Sum"),
    "suite200 a/a": ("gbench", "b.cc", SUITE200, (0, 0), GXX,
                     "{root}/b --benchmark_min_time=0.002", "real_time", None),
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_repo(root: Path, cell: str) -> Path:
    """A repository with the cell's project at ``main`` (base) and a head commit on ``pr``."""
    kind, name, text, (base, head), _, _, _, _ = CELLS[cell]
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "bench@benchlab.invalid")
    _git(root, "config", "user.name", "bench")
    if kind == "go":
        (root / "go.mod").write_text("module example.com/tiny\n\ngo 1.19\n")
    (root / ".gitignore").write_text("b\n")
    (root / name).write_text(text.replace("SUM", str(base)))
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "base")
    _git(root, "checkout", "-q", "-b", "pr")
    if head == base:
        (root / "README").write_text("docs only\n")
    else:
        (root / name).write_text(text.replace("SUM", str(head)))
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "head")
    return root


def one_gate(work: Path, cell: str, seed: int, max_time: float) -> dict:
    """One ``benchlab ab --harness`` job on a fresh repository; its outcomes by benchmark."""
    kind, _, _, _, build, command, primary, slowed = CELLS[cell]
    repo = make_repo(work / f"{cell.replace(' ', '-').replace('/', '')}-{seed}", cell)
    out = repo.parent / f"{repo.name}.json"
    args = [BENCHLAB, "ab", "--harness", kind, "--base", "main", "--max-time", str(max_time),
            "--seed", str(seed), "--json", str(out), "--db", str(repo.parent / "gates.db")]
    if build:
        args += ["--build", build]
    start = time.monotonic()
    proc = subprocess.run([*args, command], cwd=repo, capture_output=True, text=True,
                          timeout=3600)
    seconds = time.monotonic() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cell}: benchlab ab exited {proc.returncode}: {proc.stderr[-800:]}")
    doc = json.loads(out.read_text())
    outcomes = {d["benchmark"]: d["outcome"] for d in doc["benchmarks"]
                if d["metric"] == primary}
    shutil.rmtree(repo, ignore_errors=True)
    return {"cell": cell, "seed": seed, "exit": proc.returncode, "seconds": round(seconds, 1),
            "outcomes": outcomes, "slowed": slowed}


def rate(k: int, n: int) -> str:
    """k/n as a percentage with its Clopper-Pearson 95 % interval."""
    if n == 0:
        return "-"
    low = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    high = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k}/{n} = {100 * k / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


def table(records: list[dict]) -> list[str]:
    """One line per cell: false regressions among unchanged benchmarks, detections of the
    slowed one, exit statuses and seconds."""
    lines = ["| cell | gates | unchanged benchmarks called a regression | slowed benchmark "
             "called a regression | jobs failed (exit 1) | seconds per gate |",
             "|---|---|---|---|---|---|"]
    for cell in CELLS:
        rows = [r for r in records if r["cell"] == cell]
        if not rows:
            continue
        false = sum(o == "slower" for r in rows for b, o in r["outcomes"].items()
                    if b != r["slowed"])
        unchanged = sum(1 for r in rows for b in r["outcomes"] if b != r["slowed"])
        slowed = [r["outcomes"].get(r["slowed"]) for r in rows if r["slowed"]]
        detected = rate(sum(o == "slower" for o in slowed), len(slowed)) if slowed else "-"
        secs = sorted(r["seconds"] for r in rows)
        lines.append(f"| {cell} | {len(rows)} | {rate(false, unchanged)} | {detected} | "
                     f"{sum(r['exit'] == 1 for r in rows)}/{len(rows)} | "
                     f"{secs[len(secs) // 2]:.0f} (median) |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=3, help="gates per cell")
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--max-time", type=float, default=60.0,
                        help="ab's --max-time (seconds per benchmark)")
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument("--until", help="start no gate after HH:MM UTC")
    parser.add_argument("--results", help="append each gate as a JSON line to this file")
    parser.add_argument("--merge", nargs="+", metavar="FILE",
                        help="print the table from these results files; measure nothing")
    a = parser.parse_args()
    if a.merge:
        records = [json.loads(line) for path in a.merge for line in open(path) if line.strip()]
        print("\n".join(table(records)))
        return
    stop = None
    if a.until:
        now = datetime.datetime.now(datetime.timezone.utc)
        h, m = map(int, a.until.split(":"))
        deadline = now.replace(hour=h, minute=m, second=0, microsecond=0)
        if deadline < now:  # a time of day already past is tomorrow's (a run over midnight)
            deadline += datetime.timedelta(days=1)
        stop = deadline.timestamp()
    work = Path(tempfile.mkdtemp(prefix="benchlab-gate-harness-"))
    records = []
    try:
        for seed in range(a.seed_start, a.seed_start + a.gates):
            for cell in a.cells.split(","):
                if stop is not None and time.time() > stop:
                    break
                load = os.getloadavg()[0]
                r = one_gate(work, cell, seed, a.max_time)
                r.update(load_before=load, load_after=os.getloadavg()[0],
                         started=datetime.datetime.now(datetime.timezone.utc).isoformat(
                             timespec="seconds"))
                records.append(r)
                if a.results:
                    with open(a.results, "a") as fh:
                        fh.write(json.dumps(r) + "\n")
                slow = sum(o == "slower" for o in r["outcomes"].values())
                print(f"{cell} seed {seed}: exit {r['exit']}, {slow}/{len(r['outcomes'])} "
                      f"regressions, {r['seconds']:.0f} s, load {r['load_after']:.1f}",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(table(records)))


if __name__ == "__main__":
    main()
