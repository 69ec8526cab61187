"""``benchlab reproduce``: worked examples on the JayBeams order book.

1. Bundled and reproduced on the same machine: reproduced.
2. A "slow machine" emulated by a known CPU quota (1000 us per 10000 us: a tenth of a CPU),
   its profile and session measured under it; reproduced without the quota: the comparison
   holds but the machine is several times faster, so "reproduced in direction, not in size";
   with --calibrate: reproduced, under a recovered quota within 25 % of the known one (the
   test says why not 10 %).

Everything is real: stress-ng profiles, cgroup v1 CPU quotas, the execution core, the store.
The machine is shared (2 vCPUs, other test processes): sizes are judged with --tolerance 0.5
(0.8 on the same machine) on top of the variability range measured at the time, never against
absolute timings.
"""

from __future__ import annotations

import json

import pytest

from tests.bundle.conftest import order_book_session
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

QUOTA_US, PERIOD_US = 1000, 10_000
# Two methods, not three: every stress-ng run is a whole second, and the profile, the plain
# reproduction (a round before and one after) and each calibration trial run every method per
# round. Not one: a trial's interval then has 1 degree of freedom (t = 12.7), and beside
# stress-ng --cpu 2 at load 8 the unthrottled first trial's interval reached down to 1, the
# search stopped there ("already matches") and the calibrated machine stayed 3.5x faster.
METHODS = "int64,matrixprod"


def _reproduce(bundle, db, *extra, tolerance="0.5"):
    proc = run_cli("reproduce", str(bundle), "--trust", "--json", "--tolerance", tolerance,
                   *extra, db=db,
                   timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.serial  # compares sizes measured minutes apart
def test_same_machine_reproduces(tmp_path):
    db = tmp_path / "bench.db"
    uid = order_book_session(db)
    bundle = tmp_path / "here.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(bundle), "--profile", db=db, check=True, timeout=300)
    # 0.8: one run in four of this test saw the shared machine's load move the medians by
    # more than the 0.5 the slow-machine test can afford (it needs the 10x quota to stand out)
    outcome = _reproduce(bundle, db, tolerance="0.8")
    kinds = {p["kind"] for p in outcome["points"]}
    assert kinds == {"comparison", "size"}
    # the comparisons are decided within each session: they must reproduce whatever the load
    assert all(p["ok"] for p in outcome["points"] if p["kind"] == "comparison"), outcome
    # the sizes compare medians measured minutes apart: a shared machine's load (8 here, once)
    # can move them past the band, so only a broken replay (x4 or more) fails this test; the
    # size judgement itself is tested on its own numbers by the slow-machine test below
    sizes = [p for p in outcome["points"] if p["kind"] == "size"]
    assert all(0.25 <= p["ratio"] <= 4.0 for p in sizes), sizes
    assert outcome["verdict"] == ("reproduced" if all(p["ok"] for p in sizes)
                                  else "reproduced in direction, not in size"), outcome
    assert outcome["sessions"][0]["original"] == uid


# serial: the unthrottled machine must be clearly faster than the 10 % quota; run beside other
# tests at load 12, stress-ng unthrottled got ~17 % of a CPU, the sizes matched and this failed
@pytest.mark.serial
def test_slow_machine_reproduces_in_direction_then_calibrated(tmp_path):
    db = tmp_path / "slow.db"
    quota = ("--cpu-quota", str(QUOTA_US), "--cpu-period", str(PERIOD_US))
    run_cli("profile", "--methods", METHODS, "--repeat", "2", "--no-progress", *quota,
            db=db, check=True, timeout=300)
    uid = order_book_session(db, *quota)
    bundle = tmp_path / "slow.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(bundle), db=db, check=True, timeout=300)

    plain = _reproduce(bundle, db)
    assert plain["verdict"] == "reproduced in direction, not in size", plain
    assert all(p["ok"] for p in plain["points"] if p["kind"] == "comparison")
    assert plain["speedup_range"][0] > 1.5  # this machine, unthrottled, is clearly faster
    assert any("CPU quota of 1000 us" in w for w in plain["warnings"])

    calibrated = _reproduce(bundle, db, "--calibrate")
    if calibrated["verdict"] != "reproduced":
        # Under a 10 % quota a run's wall time jitters with where it falls in the 10 ms period:
        # a fresh-clone CI run (load 1.5) once measured a size outside the calibrated band.
        # One more calibrated reproduction; a calibration that does not work fails both.
        calibrated = _reproduce(bundle, db, "--calibrate")
    assert calibrated["verdict"] == "reproduced", calibrated
    recovered, period = calibrated["cpu_quota"]
    assert period == PERIOD_US
    # 25 %, not 10: the base profile is 2 rounds measured while the bundle is made, and a
    # shared machine's load drifts between then and the calibration; at load 3-6 one run in
    # four recovered 1198 us (20 % off, the others within 10 %). A search that does not bind
    # (the full 10000 us) or a wrong proportional step is still far outside.
    assert abs(recovered - QUOTA_US) <= 0.25 * QUOTA_US, recovered


def test_counted_instructions_are_equal_when_reproduced(tmp_path):
    """cachegrind counts (``--count instructions``) of a deterministic program are the same on
    a re-measurement; the judgement lists them as points. Counts do not depend on the machine's
    load, so this test runs in the parallel phase; 3 runs (3 counted runs of each benchmark under
    valgrind, in the session and again in its reproduction) are enough for equal counts."""
    db = tmp_path / "counted.db"
    uid = order_book_session(db, "--count", "instructions", runs=3)
    bundle = tmp_path / "counted.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(bundle), db=db, check=True, timeout=300)
    outcome = _reproduce(bundle, db)
    counts = [p for p in outcome["points"] if p["kind"] == "instructions"]
    assert {p["benchmark"] for p in counts} == {"array", "map"}
    assert all(p["ok"] and p["there"] > 1e6 for p in counts), counts
