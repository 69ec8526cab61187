"""What a harness suite's shared budget gives the benchmarks still undecided.

A Go package of two benchmarks (``tests.harnesses.toolchains.go_sum_product``): Sum does 3x
the work at the head commit and is decided at the first look; Product is unchanged and held to
a 0.5 % threshold, so on a busy machine it stays undecided until the budget ends. The same
``benchlab ab --harness go`` job runs twice per repetition, interleaved: as shipped (once Sum is
decided, the harness runs Product alone: ``Harness.narrow``), and with narrowing switched off
(every run runs both). Printed per job: its exit status, the measured runs per benchmark and
side, and the 1-minute load. Product's runs are the pairs the undecided benchmark got.

    .venv/bin/python bench/harness_narrowing.py --reps 3 --max-time 20
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

COMMAND = "{root}/tiny.test -test.run ^$ -test.bench . -test.benchtime 50ms"
#: The benchlab entry point, with the go harness's narrowing off for the "all" mode.
ENTRY = ("{patch}import sys; from benchlab.cli.main import main; sys.argv[0] = 'benchlab'; "
         "main()")
NO_NARROWING = ("import benchlab.measure.harnesses.go as go; "
                "go.GoHarness.narrow = lambda self, command, names: None; ")


def make_repo() -> Path:
    root = Path(tempfile.mkdtemp(prefix="harness-narrowing-")) / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@benchlab.invalid")
    git(root, "config", "user.name", "bench")
    for subject, files in (("base", go_sum_product(2000)), ("slower", go_sum_product(6000))):
        for name, text in files.items():
            (root / name).write_text(text)
        git(root, "add", ".")
        git(root, "commit", "-qm", subject)
    return root


def one_job(repo: Path, mode: str, max_time: str, gocache: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="harness-narrowing-job-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"),
           "BENCHLAB_DB": str(work / "ab.db"), "GOCACHE": gocache}
    code = ENTRY.format(patch="" if mode == "narrowed" else NO_NARROWING)
    res = subprocess.run([sys.executable, "-c", code, "ab", "-q", "--harness", "go", "--base",
                          "HEAD~1", "--build", "go test -c -o tiny.test", "--threshold", "0.5%",
                          "--max-time", max_time, "--min-pairs", "10", "--look-every", "5",
                          "--warmup", "0", COMMAND], cwd=repo, env=env, capture_output=True,
                         text=True)
    with sqlite3.connect(work / "ab.db") as con:
        runs = dict(con.execute("SELECT b.name, count(*) FROM runs r JOIN benchmarks b ON "
                                "b.id = r.benchmark_id WHERE r.warmup = 0 GROUP BY b.name"))
    return {"mode": mode, "exit": res.returncode, "runs": runs,
            "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-time", default="20")
    args = parser.parse_args()
    repo = make_repo()
    gocache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True,
                             text=True).stdout.strip()
    for rep in range(args.reps):
        for mode in ("narrowed", "all"):
            print(json.dumps({"rep": rep, **one_job(repo, mode, args.max_time, gocache)}),
                  flush=True)


if __name__ == "__main__":
    main()
