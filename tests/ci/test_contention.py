"""A gate against a stored baseline does not blame the code for the machine: a fresh session
measured beside real CPU hogs (stress-ng, six on the benchmark's CPU) runs
under more contention than the baseline's history covers, and the gate refuses to decide,
saying why in one line and pointing to ``ab``.

Timing-sensitive (a CPU hog beside the gate, and the history recorded first): serial.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from benchlab.ci.contention import summarise
from benchlab.store.db import Store
from tests.ci.conftest import WORK_C
from tests.conftest import BENCHLAB

pytestmark = [pytest.mark.serial, pytest.mark.slow]


#: The program's own count of its loops, printed after each run: a value no load changes.
LOOPS = "loops:count=loops (\\d+)"


def _gate(db: Path, prog: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["taskset", "-c", "0", BENCHLAB, "gate", "-q", "--db", str(db),
                           "-w", "1", "--metric", LOOPS, *args,
                           f"{prog} 3000000 && echo 'loops 3000000'"],
                          capture_output=True, text=True, timeout=300)


def test_the_contention_summary_of_two_readings():
    before = {"cpus": 2.0, "load_1m": 1.0, "runnable": 2.0, "steal": 10.0, "total": 1000.0}
    after = {"cpus": 2.0, "load_1m": 3.0, "runnable": 4.0, "steal": 30.0, "total": 1400.0}
    assert summarise(before, after) == {"load_per_cpu": 1.5, "runnable_per_cpu": 1.5,
                                        "steal": 0.05}


def test_a_gate_beside_a_cpu_hog_refuses_to_decide(tmp_path):
    for tool in ("stress-ng", "taskset", "cc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is needed for this test")
    (tmp_path / "work.c").write_text(WORK_C)
    prog = tmp_path / "work"
    subprocess.run(["cc", "-O2", "-o", str(prog), str(tmp_path / "work.c")], check=True)
    db = tmp_path / "g.db"
    for _ in range(3):  # the baseline's history, under whatever runs here now
        res = _gate(db, prog, "-r", "8", "--record", "main")
        assert res.returncode == 0, res.stderr
    # six hogs on the gate's CPU: 3 more runnable tasks per CPU than the history saw and a
    # share of about 1/7 of CPU 0 for each run, whatever already loaded the machine while the
    # history was recorded (one hog at a high priority beside `stress-ng --cpu 2` stretched
    # the runs by only 1.5x, within the history's own wall/CPU ratio, and the gate decided)
    hog = subprocess.Popen(["taskset", "-c", "0", "stress-ng", "--cpu", "6", "--timeout", "60s",
                            "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        res = _gate(db, prog, "-r", "3", "--baseline", "branch:main", "--metric", "wall",
                    "--metric", "cpu", "--json", "-")
    finally:
        hog.terminate()
        hog.wait(timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    timed = [d for d in doc["benchmarks"] if d["metric"] != "loops"]
    assert {d["outcome"] for d in timed} == {"undecided"} and len(timed) == 2
    assert all(d["reason"] == "contention beyond the baseline's history" for d in timed)
    # the count read the same in every run on both sides: the hog cannot have moved it
    [count] = [d for d in doc["benchmarks"] if d["metric"] == "loops"]
    assert count["outcome"] == "equivalent", count
    [note] = [n for n in doc["notes"] if "contention" in n and "(wall)" in n]
    assert "wall/CPU ratio" in note and "benchlab ab" in note
    with Store.open(db, readonly=True) as store:
        fresh = store.get_session(doc["session"])
        recorded = fresh["metadata"]["contention"]
        assert recorded["runnable_per_cpu"] >= 0 and "load_per_cpu" in recorded
