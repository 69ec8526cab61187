"""Fleet characterisation on two local "machines": two Dask worker processes, each moved into
its own cgroup (the control layer's RunCgroup) with a different CPU quota, so one is twice as
fast as the other — what this single test machine can offer instead of two machines.

The profiles run with ``nice`` so stress-ng stays in its worker's cgroup (no per-run cgroup):
the quota is the machine's speed. A calibration trial runs in its own quota cgroup beside the
machine's (cgroup v1 refuses a child quota above its parent's), so the quota that makes the
fast machine match the slow base is the base's own quota: that is what must be recovered.
"""

from __future__ import annotations

import json
import os

import pytest

from benchlab.control.cgroups import CgroupLimits, RunCgroup, detect_layout
from benchlab.core.cluster.address import SLOT, quiet_config
from benchlab.core.cluster.session import run_cluster_plan
from benchlab.machines.fleet import (
    calibrate_fleet,
    fleet_matrix,
    fleet_profiles,
    load_fleet_calibration,
    profile_fleet,
)
from benchlab.store.db import Store
from tests.cluster.helpers import plan_of
from tests.conftest import require_tool

# Not in the serial phase: each machine's speed is its CPU quota (20 % and 10 % of a CPU, at the
# highest CPU weight), which binds whatever else runs; this test passed at load 11-13.
pytestmark = pytest.mark.slow

# A 20 ms period, not 100 ms: a 1 s stress-ng run under a 10 % quota then gets 50 quota slices
# instead of 10, so where the run starts in a period moves its rate by ~2 %, not ~10 %, and the
# search settles in fewer trials (4 trials at load 7, 31 s for the test's call, from 35 s).
PERIOD = 20_000
QUOTAS = {"127.0.0.1/0": 4_000, "127.0.0.1/1": 2_000}  # machine 0 twice as fast


def _join(procs_paths: list[str]) -> int:
    """On a worker: move this worker process into the machine's cgroup."""
    for path in procs_paths:
        with open(path, "w") as fh:
            fh.write(str(os.getpid()))
    return os.getpid()


@pytest.fixture
def two_machines():

    require_tool("stress-ng")
    import dask
    from distributed import Client, LocalCluster

    cpus = sorted(os.sched_getaffinity(0))
    groups = {}
    with dask.config.set(quiet_config()):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               resources={SLOT: 1}, dashboard_address=None, silence_logs=50)
        client = Client(cluster, set_as_default=False)
        try:
            layout = detect_layout()
            workers = client.scheduler_info()["workers"]
            for i, (address, info) in enumerate(sorted(workers.items(),
                                                       key=lambda w: str(w[1]["name"]))):
                label = f"127.0.0.1/{info['name']}"
                # a high weight so other work on this shared machine does not eat the quota
                group = RunCgroup(CgroupLimits(cpu_quota_us=QUOTAS[label], cpu_period_us=PERIOD,
                                               cpu_weight=10000,
                                               cpuset_cpus=(cpus[i % len(cpus)],)),
                                  session=f"fleet{i}", layout=layout).create()
                groups[label] = group
                client.submit(_join, group.procs_paths, workers=[address], pure=False).result()
            yield cluster.scheduler_address
        finally:
            client.close()
            cluster.close()
            for group in groups.values():
                group.__exit__(None, None, None)


def test_fleet_profile_matrix_calibration_and_per_machine_quota(two_machines, db_path, tmp_path):
    address = two_machines
    store = Store.open(db_path)
    fleet_id, profiles = profile_fleet(store, address, {
        "methods": "int64,double", "duration_s": 1, "repeat": 3, "seed": 1, "nice": 0})
    assert [p.name for p in profiles] == sorted(QUOTAS)
    assert fleet_profiles(store)[0] == fleet_id
    matrix = fleet_matrix(profiles)
    assert matrix.base == "127.0.0.1/1"
    speedup = matrix.medians["127.0.0.1/0"]["127.0.0.1/1"]
    # 25 %, as the calibration below: beside stress-ng --cpu 2 the matrix read 2.01-2.05 (3 runs,
    # load 2), but a fresh-clone CI's parallel phase (beside the end-to-end calibration's own
    # quota cgroups, load ~2) read 2.30; 1.5-2.5 still tells a 2x fleet from 1x or 4x
    assert speedup == pytest.approx(QUOTAS["127.0.0.1/0"] / QUOTAS["127.0.0.1/1"], rel=0.25)

    base = next(p for p in profiles if p.name == matrix.base)
    output = tmp_path / "fleet.json"
    # 2 confirmation rounds, not the default 4: what is checked is the searched quota, which the
    # confirmation (residual ratio, range after) does not change; 4 s of stress-ng less
    doc = calibrate_fleet(address, base, ["int64", "double"],
                          {"period_us": PERIOD, "duration_s": 1, "repeat": 2, "max_trials": 8,
                           "confirm_repeat": 2}, output)
    # the option reaches the worker: 2 rounds (3 when it pools a search trial's 2), not 4
    assert doc["machines"]["127.0.0.1/0"]["trials"][-1]["repeat"] in (2, 3)
    assert json.loads(output.read_text()) == doc
    assert doc["machines"]["127.0.0.1/1"] is None  # the base keeps its speed
    quota = doc["machines"]["127.0.0.1/0"]["cpu_quota_us"]
    # 25 %, not 15: the base's profile and the search are 1 s stress-ng runs, 2 rounds each,
    # minutes apart on a shared VM; a fresh-clone CI run on the quiet machine recovered 8415 of
    # 10000 us once, with a 100 ms period (the end-to-end calibration tests allow 25 % for the
    # same reason). A search that does not bind (the full period) or keeps the machine's own
    # quota (twice the base's) is far outside.
    assert quota == pytest.approx(QUOTAS["127.0.0.1/1"], rel=0.25)

    placements = load_fleet_calibration(output)
    plan = plan_of("true", runs=1, isolation="cgroup")
    result = run_cluster_plan(store, plan, address, placements=placements)
    for run in store.runs(session_id=result.session.id):
        setup = json.loads(store.conn.execute("SELECT data FROM setups WHERE id = ?",
                                              (run["setup_id"],)).fetchone()[0])
        limits = (setup["cgroup"] or {}).get("limits") or setup["cgroup"] or {}
        if setup["machine"] == "127.0.0.1/0":
            assert limits.get("cpu_quota_us") == quota, setup
        else:
            assert not limits.get("cpu_quota_us"), setup
    store.close()
