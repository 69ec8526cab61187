"""What a harness suite's shared budget gives the benchmarks still undecided.

Two benchmarks in a throwaway git repository, one doing 3-4x the work at the head commit (decided
at the first look), the other unchanged and held to a 0.5 % threshold, so on a busy machine it
stays undecided until the budget ends: with ``--harness go`` a Go package
(``tests.harnesses.toolchains.go_sum_product``: Sum slower, Product held), with ``--harness
pytest-benchmark`` a Python package (``test_fib`` slower, ``test_fib_small`` held). The same
``benchlab ab --harness KIND`` job runs twice per repetition, interleaved: as shipped (once the
slower one is decided, the harness runs the other alone: ``Harness.narrow``), and with the
harness's narrowing switched off (every run runs both). Printed per job: its exit status, the
measured runs per benchmark and side, whether the runs were narrowed, and the 1-minute load.
The held benchmark's runs are the pairs the undecided one got.

    .venv/bin/python bench/harness_narrowing.py --reps 3 --max-time 20
    .venv/bin/python bench/harness_narrowing.py --harness pytest-benchmark --reps 3 --max-time 40 \
        --benchmark-max-time 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ci.conftest import git  # noqa: E402
from tests.harnesses.toolchains import go_sum_product  # noqa: E402

#: Per harness: the ab options that build and run it (``{python}``: this interpreter;
#: ``{seconds}``: pytest-benchmark's time per benchmark).
JOBS = {
    "go": ["--build", "go test -c -o tiny.test",
           "{root}/tiny.test -test.run ^$ -test.bench . -test.benchtime 50ms"],
    "pytest-benchmark": ["cd {root} && {python} -m pytest -q -p no:cacheprovider benchmarks "
                         "--benchmark-max-time={seconds}"],
}
#: The Python package of the pytest-benchmark job: fib(N), N raised at the head commit.
FIB = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\nN = SIZE\n"
PY_BENCH = ("from fib import N, fib\n\n\ndef test_fib(benchmark):\n    benchmark(fib, N)\n\n\n"
            "def test_fib_small(benchmark):\n    benchmark(fib, 12)\n")
#: The benchlab entry point, with the harness's narrowing off for the "all" mode.
ENTRY = ("{patch}import sys; from benchlab.cli.main import main; sys.argv[0] = 'benchlab'; "
         "main()")
NO_NARROWING = ("from benchlab.measure.harnesses import get_harness; "
                "get_harness({kind!r}).narrow = lambda command, names: None; ")


def revisions(kind: str) -> list[tuple[str, dict[str, str]]]:
    """(subject, files) of the base and the head commit of the ``kind`` job's repository."""
    if kind == "go":
        return [("base", go_sum_product(2000)), ("slower", go_sum_product(6000))]
    return [("base", {"fib/__init__.py": FIB.replace("SIZE", "15"),
                      "benchmarks/test_fib.py": PY_BENCH}),
            ("slower", {"fib/__init__.py": FIB.replace("SIZE", "18")})]


def make_repo(kind: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix="harness-narrowing-")) / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@benchlab.invalid")
    git(root, "config", "user.name", "bench")
    for subject, files in revisions(kind):
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        git(root, "add", ".")
        git(root, "commit", "-qm", subject)
    return root


def one_job(repo: Path, kind: str, mode: str, max_time: str, gocache: str,
            seconds: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="harness-narrowing-job-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"),
           "BENCHLAB_DB": str(work / "ab.db"), "GOCACHE": gocache}
    code = ENTRY.format(patch="" if mode == "narrowed" else NO_NARROWING.format(kind=kind))
    job = [a.replace("{python}", sys.executable).replace("{seconds}", seconds)
           for a in JOBS[kind]]
    res = subprocess.run([sys.executable, "-c", code, "ab", "--harness", kind, "--base",
                          "HEAD~1", "--threshold", "0.5%", "--max-time", max_time,
                          "--min-pairs", "10", "--look-every", "5", "--warmup", "0", *job],
                         cwd=repo, env=env, capture_output=True, text=True)
    with sqlite3.connect(work / "ab.db") as con:
        runs = dict(con.execute("SELECT b.name, count(*) FROM runs r JOIN benchmarks b ON "
                                "b.id = r.benchmark_id WHERE r.warmup = 0 GROUP BY b.name"))
    return {"mode": mode, "exit": res.returncode, "runs": runs,
            "narrowed": "the harness runs only those" in res.stderr,
            "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", choices=sorted(JOBS), default="go")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-time", default="20")
    parser.add_argument("--benchmark-max-time", default="0.05",
                        help="pytest-benchmark's --benchmark-max-time, s")
    args = parser.parse_args()
    repo = make_repo(args.harness)
    gocache = ""
    if args.harness == "go":
        gocache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True,
                                 text=True).stdout.strip()
    for rep in range(args.reps):
        for mode in ("narrowed", "all"):
            job = one_job(repo, args.harness, mode, args.max_time, gocache,
                          args.benchmark_max_time)
            print(json.dumps({"rep": rep, "harness": args.harness, **job}), flush=True)


if __name__ == "__main__":
    main()
