"""Imports analysed without guessing: a Google Benchmark or pyperf import is
analysed and compared on the series its tool reports as primary (``real_time``, pyperf's
values) without ``/METRIC``; a one-value series says how that tool gives repetitions; pyperf's
metadata (and gbench's context) become the session's environment, so imported sessions diff;
``analyze`` never prints "steady from run None"; counts agree in number ("1 value").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchlab.units import plural
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def _gbench(path: Path, reps: int, seed: int = 1) -> Path:
    rng = np.random.default_rng(seed)
    entries = []
    for name, mu in (("BM_A", 100.0), ("BM_B", 110.0)):
        for r in range(reps):
            entries.append({"name": name, "run_name": name, "run_type": "iteration",
                            "repetitions": reps, "repetition_index": r, "threads": 1,
                            "iterations": 1000, "real_time": mu + rng.random(),
                            "cpu_time": mu + 3 * rng.random(), "time_unit": "ns"})
    path.write_text(json.dumps({"context": {"date": "2024-01-01T00:00:00", "host_name": "box",
                                            "num_cpus": 8, "mhz_per_cpu": 3000,
                                            "library_build_type": "release"},
                                "benchmarks": entries}))
    return path


def _pyperf(path: Path, values: list[list[float]], cpu: str = "Intel Xeon") -> Path:
    path.write_text(json.dumps({
        "version": "1.0",
        "metadata": {"hostname": "box", "cpu_count": 8, "cpu_model_name": cpu,
                     "python_version": "3.11.7 (64-bit)", "python_implementation": "cpython",
                     "perf_version": "2.6.1", "date": "2024-01-01"},
        "benchmarks": [{"metadata": {"name": "bench_a", "unit": "second", "loops": 8},
                        "runs": [{"metadata": {}, "values": v} for v in values]}]}))
    return path


def test_gbench_import_is_analysed_and_compared_on_real_time(db_path, tmp_path):
    run_cli("import", str(_gbench(tmp_path / "gb.json", 10)), db=db_path, check=True)
    analysis = json.loads(run_cli("analyze", "BM_A", "--json", db=db_path, check=True).stdout)
    assert analysis["series"]["metric"] == "real_time" and analysis["series"]["n"] == 10
    compared = run_cli("compare", "BM_A", "BM_B", db=db_path, check=True).stdout
    assert "BM_A ran" in compared and "faster than BM_B" in compared
    shown = json.loads(run_cli("show", "--json", db=db_path, check=True).stdout)
    assert shown["verdict"]["metric"] == "real_time"
    text = run_cli("show", db=db_path, check=True).stdout
    assert "wall" not in text.split("environment")[0]  # no empty wall row for an import


def test_one_value_series_say_how_their_tool_gives_repetitions(db_path, tmp_path):
    run_cli("import", str(_gbench(tmp_path / "gb1.json", 1)), db=db_path, check=True)
    assert_one_line_error(run_cli("analyze", "BM_A", db=db_path), "has 1 value;",
                          "--benchmark_repetitions")
    assert "--benchmark_repetitions" in run_cli("show", db=db_path, check=True).stdout
    db2 = tmp_path / "p.db"
    run_cli("import", str(_pyperf(tmp_path / "p1.json", [[0.001]])), db=db2, check=True)
    assert_one_line_error(run_cli("analyze", "bench_a", db=db2), "has 1 value;", "-p 20")


def test_pyperf_metadata_becomes_an_environment_that_diffs(db_path, tmp_path):
    values = [[0.001 + 1e-6 * i, 0.001 + 2e-6 * i] for i in range(10)]
    run_cli("import", "--name", "old", str(_pyperf(tmp_path / "a.json", values)), db=db_path,
            check=True)
    run_cli("import", "--name", "new", str(_pyperf(tmp_path / "b.json", values, "AMD EPYC")),
            db=db_path, check=True)
    shown = json.loads(run_cli("show", "old", "--json", db=db_path, check=True).stdout)
    env = shown["environment"]
    assert env["host"]["hostname"] == "box" and env["cpu"]["logical_cores"] == 8
    assert env["python"]["version"] == "3.11.7" and env["pyperf"]["perf_version"] == "2.6.1"
    assert "date" not in env.get("pyperf", {})  # a moment, not the machine
    out = run_cli("compare", "old:bench_a", "new:bench_a", db=db_path, check=True).stdout
    assert "cpu.model: Intel Xeon | AMD EPYC" in out
    assert "host.hostname" not in out  # the same machine name is no difference


def test_analyze_says_when_there_is_no_steady_segment(db_path, tmp_path):
    """A level shift in the last runs: no steady segment, said in words (not 'run None')."""
    rng = np.random.default_rng(4)
    series = np.r_[0.001 + 1e-6 * rng.random(60), 0.003 + 1e-6 * rng.random(3)]
    run_cli("import", str(_pyperf(tmp_path / "s.json", [list(series)])), db=db_path,
            check=True)
    analysis = json.loads(run_cli("analyze", "bench_a", "--json", db=db_path,
                                  check=True).stdout)
    assert analysis["steady_state"]["steady_from"] is None  # the case that printed 'None'
    out = run_cli("analyze", "bench_a", db=db_path, check=True).stdout
    assert "None" not in out and "no steady segment" in out


def test_plural_agrees_in_number():
    assert plural(1, "run") == "1 run" and plural(2, "run") == "2 runs"
    assert plural(1, "more run") == "1 more run" and plural(0, "session") == "0 sessions"
    assert plural(3, "series", "series") == "3 series"
