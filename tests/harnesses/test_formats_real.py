"""Each harness format's parser on output made by the real harness in the test."""

from __future__ import annotations

import json
import statistics
import subprocess

import pytest

from benchlab.errors import UserError
from benchlab.store.formats import detect_format, parse_path
from benchlab.store.formats.reported import reported_of
from tests.harnesses.toolchains import (
    CRITERION_COMMAND,
    criterion_crate,
    gbench_binary,
    go_package,
    pytest_benchmark_project,
)


def _go_output(tmp_path, *args: str) -> str:
    pkg = go_package(tmp_path / "pkg")
    proc = subprocess.run(["go", "test", "-run", "^$", "-bench", ".", "-benchtime", "200x",
                           *args, "./..."], cwd=pkg, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_go_benchfmt_from_go_test(tmp_path):
    out = tmp_path / "go.txt"
    out.write_text(_go_output(tmp_path, "-count", "2", "-cpu", "1,2"))
    assert detect_format(out) == "go"
    imp = parse_path(out, "go")[0]
    names = [b.name for b in imp.benchmarks]
    # one name ran at two GOMAXPROCS values: the -N suffix tells them apart
    assert names == ["Sum", "Sum-2", "Copy", "Copy-2", "Sub/n=10", "Sub/n=10-2"]
    units = {m.name: m.unit for m in imp.metrics}
    assert units == {"ns_per_op": "ns", "MB_per_s": "MB/s", "frobs_per_op": "frobs",
                     "B_per_op": "B", "allocs_per_op": "allocs"}
    copy = imp.benchmarks[2]
    assert len(copy.runs) == 2  # -count 2
    assert copy.runs[0].samples["frobs_per_op"] == [3.5]
    assert copy.runs[0].fields["extra"]["iterations"] == 200
    assert copy.runs[0].fields["extra"]["pkg"] == "example.com/tiny"
    assert copy.runs[0].samples["MB_per_s"][0] > 0
    assert imp.metadata["config"]["goos"] == "linux"
    rep = reported_of(imp)
    assert len(rep.benchmarks["Sum"]["ns_per_op"]) == 2


def test_go_single_procs_drops_suffix_and_bad_lines(tmp_path):
    text = _go_output(tmp_path)
    out = tmp_path / "go.txt"
    out.write_text(text)
    imp = parse_path(out, "go")[0]
    assert [b.name for b in imp.benchmarks] == ["Sum", "Copy", "Sub/n=10"]
    line = next(l for l in text.splitlines() if l.startswith("BenchmarkSum"))
    out.write_text(text.replace(line, line.replace("ns/op", "").rstrip()))
    with pytest.raises(UserError, match="value-unit pairs"):
        parse_path(out, "go")
    out.write_text("PASS\nok  example.com/tiny 0.1s\n")
    with pytest.raises(UserError, match="no Go benchmark result line"):
        parse_path(out, "go")


def test_go_sec_per_op_and_two_packages():
    from benchlab.store.formats.gotest import parse_gotest_text

    text = ("pkg: a\nBenchmarkX-4 10 2e-06 sec/op 5 MB/s\npkg: b\nBenchmarkX-4 10 3000 ns/op\n"
            "BenchmarkY 5 1 allocs/op\n")
    imp = parse_gotest_text(text, "t", name="t")
    assert [b.name for b in imp.benchmarks] == ["a:X", "b:X", "Y"]
    assert imp.benchmarks[0].runs[0].samples["ns_per_op"] == [2000.0]


def test_gbench_json_from_the_binary(tmp_path):
    binary = gbench_binary(tmp_path)
    out = tmp_path / "g.json"
    subprocess.run([str(binary), "--benchmark_min_time=0.002", "--benchmark_repetitions=3",
                    f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True,
                   capture_output=True, timeout=300)
    assert detect_format(out) == "gbench"
    imp = parse_path(out, "gbench")[0]
    assert [b.name for b in imp.benchmarks] == ["BM_Sum/100", "BM_Sum/1000", "BM_Vec"]
    rep = reported_of(imp)
    assert len(rep.benchmarks["BM_Sum/100"]["real_time"]) == 3  # repetitions, not aggregates
    assert rep.units["items_per_second"] == "1/s" and rep.units["bytes_per_second"] == "B/s"
    assert rep.benchmarks["BM_Sum/1000"]["frobs"] == [3.5] * 3
    doc = json.loads(out.read_text())
    first = next(e for e in doc["benchmarks"] if e["run_name"] == "BM_Sum/100")
    assert first["time_unit"] == "us"  # stored in ns
    assert rep.benchmarks["BM_Sum/100"]["real_time"][0] == pytest.approx(first["real_time"] * 1e3)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first build compiles criterion (minutes); later runs: seconds
def test_criterion_samples_from_cargo_bench(tmp_path):
    crate = criterion_crate()
    home = tmp_path / "criterion"
    proc = subprocess.run(CRITERION_COMMAND, shell=True, cwd=crate, capture_output=True,
                          text=True, env={**__import__("os").environ, "CRITERION_HOME": str(home)},
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert detect_format(home) == "criterion"
    imp = parse_path(home, "criterion")[0]
    assert [b.name for b in imp.benchmarks] == ["fib 10", "fib 12"]
    sample = json.loads((home / "fib 12" / "new" / "sample.json").read_text())
    times = imp.benchmarks[1].runs[0].samples["time"]
    assert times == pytest.approx([t / n for t, n in zip(sample["times"], sample["iters"])])
    assert len(times) == 10
    assert all(t > 0 for t in times)
    assert imp.benchmarks[0].runs[0].fields["extra"]["estimates"]["mean"] > 0


def test_pytest_benchmark_json_from_pytest(tmp_path):
    command = pytest_benchmark_project(tmp_path)
    out = tmp_path / "pb.json"
    subprocess.run(f"{command} --benchmark-json={out}", shell=True, cwd=tmp_path, check=True,
                   capture_output=True, timeout=300)
    assert detect_format(out) == "pytest-benchmark"
    imp = parse_path(out, "pytest-benchmark")[0]
    assert [b.name for b in imp.benchmarks] == ["test_fib10", "test_fibp[5]", "test_fibp[8]"]
    doc = json.loads(out.read_text())
    stats = doc["benchmarks"][0]["stats"]
    times = imp.benchmarks[0].runs[0].samples["time"]
    assert len(times) == stats["rounds"]
    assert statistics.mean(times) == pytest.approx(stats["mean"] * 1e9)
    # without the rounds: one sample, the median, and the run says so
    for entry in doc["benchmarks"]:
        del entry["stats"]["data"]
    out.write_text(json.dumps(doc))
    imp = parse_path(out, "pytest-benchmark")[0]
    run = imp.benchmarks[0].runs[0]
    assert run.samples["time"] == [pytest.approx(stats["median"] * 1e9)]
    assert "median" in run.fields["extra"]["summary_only"]
    with pytest.raises(UserError, match="pytest-benchmark"):
        parse_path(out, "pyperf")
