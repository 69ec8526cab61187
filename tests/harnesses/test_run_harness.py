"""``benchlab run --harness KIND`` and ``benchlab import --format KIND`` on real harnesses:
every benchmark the harness reports is a benchmark of the session, readable by show/compare."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchlab.store.db import Store
from tests.conftest import BENCHLAB
from tests.harnesses.toolchains import (
    CRITERION_COMMAND,
    criterion_crate,
    gbench_binary,
    go_package,
    pytest_benchmark_project,
)


def _benchlab(*args, cwd=None, timeout=900):
    return subprocess.run([BENCHLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def _session(db, uid):
    with Store.open(db, readonly=True) as store:
        sess = store.get_session(uid)
        benches = {b["name"]: b for b in store.benchmarks(sess["id"])}
        units = {m: store.metric_unit(sess["id"], m) for b in benches.values()
                 for m in store.sample_metrics(b["id"])}
        counts = {name: len(store.sample_values(b["id"], store.sample_metrics(b["id"])[0])[0])
                  for name, b in benches.items()}
        return sess, list(benches), units, counts


def test_run_harness_go_stores_every_benchmark(tmp_path, db_path):
    pkg = go_package(tmp_path / "pkg")
    cmd = "go test -run '^$' -bench . -benchtime 200x -count 3 ./..."
    proc = _benchlab("run", "--harness", "go", cmd, "-r", 2, "--json", "--db", db_path, cwd=pkg)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["benchmarks"] == ["Sum", "Copy", "Sub/n=10"] and out["harness_runs"] == 2
    sess, names, units, counts = _session(db_path, out["session"])
    assert sess["kind"] == "run" and sess["status"] == "complete"
    assert units["MB_per_s"] == "MB/s" and units["ns_per_op"] == "ns"
    assert counts["Sum"] == 6  # 2 harness runs x -count 3
    show = _benchlab("show", out["session"], "--db", db_path)
    assert show.returncode == 0 and "Sub/n=10" in show.stdout and "MB_per_s" in show.stdout
    # import reads the same output into the same benchmarks
    text = subprocess.run(cmd, shell=True, cwd=pkg, capture_output=True, text=True).stdout
    (tmp_path / "go.txt").write_text(text)
    imp = _benchlab("import", tmp_path / "go.txt", "--format", "go", "--json", "--db", db_path)
    assert imp.returncode == 0, imp.stderr
    _, imported_names, imported_units, _ = _session(db_path, json.loads(imp.stdout)["uid"])
    assert imported_names == names and imported_units == units
    cmp = _benchlab("compare", f"{out['session']}:Sum/ns_per_op",
                    f"{json.loads(imp.stdout)['uid']}:Sum/ns_per_op", "--db", db_path)
    assert cmp.returncode == 0, cmp.stderr


def test_run_harness_refuses_and_fails_plainly(tmp_path, db_path):
    pkg = go_package(tmp_path / "pkg")
    for args, words in ((["--harness", "go", "go test ./..."], "no -bench"),
                        (["--harness", "zig", "x"], "unknown harness 'zig'"),
                        (["--harness", "go", "--warmup", "2", "go test -bench ."], "--warmup"),
                        (["--harness", "go", "a -bench .", "b -bench ."], "one command")):
        proc = _benchlab("run", *args, "--db", db_path, cwd=pkg)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not db_path.exists() or _count_sessions(db_path) == 0
    proc = _benchlab("run", "--harness", "go", "go test -run '^$' -bench . ./missing", "--db",
                     db_path, cwd=pkg)
    assert proc.returncode == 3 and "exited with status 1" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def _count_sessions(db):
    with Store.open(db, readonly=True) as store:
        return len(store.sessions())


def test_run_harness_gbench(tmp_path, db_path):
    binary = gbench_binary(tmp_path)
    proc = _benchlab("run", "--harness", "gbench",
                     f"{binary} --benchmark_min_time=0.002 --benchmark_repetitions=3", "--json",
                     "--db", db_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    _, names, units, counts = _session(db_path, out["session"])
    assert names == ["BM_Sum/100", "BM_Sum/1000", "BM_Vec"]
    assert units["real_time"] == "ns" and units["items_per_second"] == "1/s"
    assert counts["BM_Vec"] == 3
    proc = _benchlab("run", "--harness", "gbench", f"{binary} --benchmark_out=x.json",
                     "--db", db_path)
    assert proc.returncode == 2 and "drop it" in proc.stderr


def test_run_harness_pytest_benchmark(tmp_path, db_path):
    command = pytest_benchmark_project(tmp_path / "proj")
    proc = _benchlab("run", "--harness", "pytest-benchmark", command, "--json", "--db", db_path,
                     cwd=tmp_path / "proj")
    assert proc.returncode == 0, proc.stderr
    _, names, units, counts = _session(db_path, json.loads(proc.stdout)["session"])
    assert names == ["test_fib10", "test_fibp[5]", "test_fibp[8]"] and units == {"time": "ns"}
    assert counts["test_fib10"] >= 5  # every round, not a summary


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first build compiles criterion (minutes); later runs: seconds
def test_run_harness_criterion(db_path):
    crate = criterion_crate()
    proc = _benchlab("run", "--harness", "criterion", CRITERION_COMMAND, "--json", "--db",
                     db_path, cwd=crate)
    assert proc.returncode == 0, proc.stderr
    _, names, units, counts = _session(db_path, json.loads(proc.stdout)["session"])
    assert names == ["fib 10", "fib 12"] and units == {"time": "ns"}
    assert counts == {"fib 10": 10, "fib 12": 10}


def test_parse_run_output_for_a_gate(tmp_path):
    """The call a gate makes after running the prepared command itself."""
    from pathlib import Path

    from benchlab.measure.harnesses import HarnessFailed, get_harness, parse_run_output

    pkg = go_package(tmp_path / "pkg")
    prepared = get_harness("go").prepare("go test -run '^$' -bench Sum -benchtime 100x -count 3",
                                         Path(tmp_path))
    out = subprocess.run(prepared.command, shell=True, cwd=pkg, capture_output=True, text=True)
    readings = parse_run_output("go", out.stdout, out.stderr)
    values, unit = readings["Sum"]["ns_per_op"]
    assert len(values) == 3 and unit == "ns" and list(readings) == ["Sum"]
    with pytest.raises(HarnessFailed, match="no Go benchmark result line"):
        parse_run_output("go", "PASS\n", "")


def test_docs_ci_harness_lines_run_as_written(tmp_path):
    """docs/ci.md's `run --harness go` line, in a Go package, as written."""
    import re

    from tests.conftest import REPO

    doc = (REPO / "docs" / "ci.md").read_text()
    line = re.search(r"^benchlab run --harness go .*$", doc, flags=re.M).group(0)
    pkg = go_package(tmp_path / "pkg")
    env = {**__import__("os").environ, "BENCHLAB_DB": str(tmp_path / "b.db")}
    proc = subprocess.run(line.replace("benchlab", BENCHLAB, 1), shell=True, cwd=pkg, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "stored 3 benchmarks of 2 harness runs" in proc.stdout
