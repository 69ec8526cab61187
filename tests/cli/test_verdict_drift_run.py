"""Real processes at -r 12: on a quiet machine
`benchlab run -r 12 'sleep 0.06' 'sleep 0.005' 'sleep 0.03'` stayed undecided on at least one
pair in 3 of 4 tries, since 12 slightly drifting runs read as "about 1 independent run" and the
deflated rank test cannot reject a 9x difference. Sleeps 6x and 12x apart decide on a quiet
machine (the ratios are asserted, never a timing); the recorded-data case is in
tests/stats/test_verdict_small_n.py."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


# serial: in a parallel phase of three workers (load 5 -> 3) the 6x pair stayed undecided
# (sleep 0.03 against sleep 0.005, 12 runs): beside other tests its outcome follows the load
@pytest.mark.serial
def test_twelve_runs_of_sleeps_far_apart_always_decide(tmp_path):
    for attempt in range(2):  # the failure showed in most tries: two must both decide
        proc = run_cli("run", "-r", "12", "sleep 0.06", "sleep 0.005", "sleep 0.03", "--json",
                       "--db", str(tmp_path / "b.db"), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        verdict = json.loads(proc.stdout)["verdict"]
        assert verdict["baseline"] == "sleep 0.005"
        outcomes = {c["name"]: c["outcome"] for c in verdict["candidates"]}
        assert outcomes == {"sleep 0.06": "slower", "sleep 0.03": "slower"}, verdict
        # The interval lies above 1, as "slower" says, around its estimate. How far above 1 its
        # lower end lies follows the load (a waking sleep waits for a CPU): 4.5 for the 6x pair
        # on the quiet machine, 1.30 once in ten serial phases beside stress-ng --cpu 2, where
        # an earlier "> 1.5" failed the test although it had decided rightly.
        for c in verdict["candidates"]:
            assert 1.0 < c["ratio_low"] <= c["ratio"] <= c["ratio_high"], c
