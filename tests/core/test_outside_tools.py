"""numactl and perf placed outside the isolation level: numa:0 and perf page-faults work under
bwrap, firejail and podman where they can, and a combination that cannot work (perf with a
container) is refused in one line before any session is stored, in a run and in a study."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, needs_tool
from tests.control.container_image import busybox_image

#: The program is bound to node 0 only if its own numa_maps says so (grep's exit status).
BOUND = "grep -q bind:0 /proc/self/numa_maps"
IMAGE = "localhost/benchlab-busybox:1"


def _perf_works() -> bool:
    """A software event counts here (this machine has no hardware counters)."""
    if shutil.which("perf") is None:
        return False
    return subprocess.run(["perf", "stat", "-e", "page-faults", "true"],
                          capture_output=True).returncode == 0


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes and podman run as root")
needs_perf = pytest.mark.skipif(not _perf_works(), reason="perf cannot count page-faults here")


def _sessions(db) -> list[dict]:
    if not db.exists():
        return []
    with Store.open(db) as store:
        return list(store.sessions())


@needs_root
@needs_tool("numactl")
@pytest.mark.parametrize("level", ["bwrap", "firejail"])
def test_numa_affinity_reaches_the_program_inside_a_sandbox(level, db_path):
    """firejail's seccomp filter refuses set_mempolicy inside: numactl runs outside and the
    policy is inherited by the program (its numa_maps reads bind:0, else grep exits 1)."""
    if shutil.which(level) is None:
        pytest.skip(f"{level} is not installed")
    run_cli("run", "--runs", "2", "--isolation", level, "--affinity", "numa:0", BOUND,
            db=db_path, check=True, timeout=120)
    with Store.open(db_path) as store:
        runs = [r for s in store.sessions() for b in store.benchmarks(s["id"])
                for r in store.runs(benchmark_id=b["id"])]
    assert runs and all(r["status"] == "ok" and r["exit_code"] == 0 for r in runs)


@needs_root
@needs_perf
@pytest.mark.parametrize("level", ["bwrap", "firejail"])
def test_perf_counts_the_program_from_outside_a_sandbox(level, db_path, tmp_path):
    """perf inside firejail cannot enable its event (no capabilities): outside, its inherited
    count covers the program: a program touching 64 MiB faults at least 16,384 pages more
    than an empty one, less the few pages an empty run already touched."""
    if shutil.which(level) is None:
        pytest.skip(f"{level} is not installed")
    faults = {}
    for name, size in (("empty", "0"), ("touch", str(64 << 20))):
        db = tmp_path / f"{name}.db"
        run_cli("run", "--runs", "2", "--isolation", level, "--perf-events", "page-faults",
                f"python3 -c \"bytearray({size})\"", db=db, check=True, timeout=120)
        with Store.open(db) as store:
            values = [m["value"] for s in store.sessions() for b in store.benchmarks(s["id"])
                      for r in store.runs(benchmark_id=b["id"])
                      for m in store.measurements_of_run(r["id"])
                      if m["source"] == "perf" and m["name"] == "page-faults"]
        assert len(values) == 2 and all(v is not None and v > 0 for v in values), values
        faults[name] = min(values)
    assert faults["touch"] - faults["empty"] >= 0.9 * 16384, faults


@needs_root
@needs_perf
@needs_tool("podman")
def test_perf_with_a_container_is_refused_before_any_session(db_path):
    if busybox_image() is None:
        pytest.skip("no busybox image")
    proc = run_cli("run", "--runs", "2", "--isolation", f"podman:{IMAGE}", "--perf-events",
                   "page-faults", "true", db=db_path, timeout=300)
    assert_one_line_error(proc, "perf", "container")
    assert _sessions(db_path) == []


@needs_root
@needs_tool("numactl")
@needs_tool("podman")
@pytest.mark.parametrize("kind", ["podman", "podman-exec"])
def test_numa_affinity_reaches_the_program_inside_a_container(kind, db_path):
    """The image has no numactl: the policy set outside is inherited through the engine."""
    if busybox_image() is None:
        pytest.skip("no busybox image")
    run_cli("run", "--runs", "1", "--isolation", f"{kind}:{IMAGE}", "--affinity", "numa:0",
            BOUND, db=db_path, check=True, timeout=300)


SUITE = """
[study]
name = "placement"
runs = 2
warmup = 0
seed = 5
perf_events = "page-faults"

[[workload]]
name = "bound"
command = "{bound}"

[matrix]
isolation = [{levels}]
affinity = ["none", "numa:0"]
"""


@pytest.mark.slow
@needs_root
@needs_perf
@needs_tool("numactl")
@needs_tool("bwrap")
@needs_tool("firejail")
def test_a_study_of_sandboxes_numa_and_perf_runs_every_cell(db_path, tmp_path):
    """bare, bwrap, firejail x affinity none/numa:0 x perf page-faults: every cell runs, and
    perf's count is stored for every run."""
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE.format(bound="true", levels='"bare", "bwrap", "firejail"'))
    run_cli("study", str(suite), db=db_path, check=True, timeout=600)
    sessions = _sessions(db_path)
    study = [s for s in sessions if s["kind"] == "study"]
    assert len(study) == 1 and study[0]["status"] == "complete"
    cells = [s for s in sessions if s["kind"] != "study"]
    assert len(cells) == 6 and all(s["status"] == "complete" for s in cells)
    with Store.open(db_path) as store:
        counted = [m["value"] for s in cells for b in store.benchmarks(s["id"])
                   for r in store.runs(benchmark_id=b["id"], include_warmup=False)
                   for m in store.measurements_of_run(r["id"]) if m["source"] == "perf"]
    assert len(counted) == 12 and all(v and v > 0 for v in counted)


@needs_root
@needs_perf
@needs_tool("podman")
def test_a_study_with_an_impossible_cell_is_refused_before_any_session(db_path, tmp_path):
    if busybox_image() is None:
        pytest.skip("no busybox image")
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE.format(bound="true", levels=f'"bare", "podman:{IMAGE}"'))
    proc = run_cli("study", str(suite), db=db_path, timeout=600)
    assert_one_line_error(proc, "suite cell", "perf", "container")
    assert _sessions(db_path) == []


@pytest.mark.slow
@needs_root
@needs_tool("numactl")
@needs_tool("podman")
def test_a_study_of_podman_with_numa_affinity_runs_every_cell(db_path, tmp_path):
    """The container cells of the matrix, without perf (refused above): numactl outside the
    engine, every cell complete."""
    if busybox_image() is None:
        pytest.skip("no busybox image")
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE.format(bound="true", levels=f'"bare", "podman:{IMAGE}"')
                     .replace('perf_events = "page-faults"\n', ""))
    run_cli("study", str(suite), db=db_path, check=True, timeout=600)
    cells = [s for s in _sessions(db_path) if s["kind"] != "study"]
    assert len(cells) == 4 and all(s["status"] == "complete" for s in cells)
