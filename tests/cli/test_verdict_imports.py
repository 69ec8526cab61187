"""An imported series with too few values: the verdict's advice is the
importing tool's way to get repetitions (Google Benchmark's --benchmark_repetitions, pyperf's
-p and --values), not run's "-r N", which an import cannot use. Real imports into a real store.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.forked import run_cli


def _gbench_one_repetition(path: Path) -> Path:
    entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                "repetition_index": 0, "threads": 1, "iterations": 1000, "real_time": t,
                "cpu_time": t, "time_unit": "ns"} for name, t in (("BM_A", 100.0),
                                                                  ("BM_B", 110.0))]
    path.write_text(json.dumps({"context": {"date": "2024-01-01T00:00:00", "host_name": "box",
                                            "num_cpus": 8}, "benchmarks": entries}))
    return path


def _verdict_block(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("verdict"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")),
               len(lines))
    return lines[start:end]


def test_one_value_import_says_how_its_tool_gives_repetitions(db_path, tmp_path):
    run_cli("import", str(_gbench_one_repetition(tmp_path / "gb.json")), db=db_path, check=True)
    block = _verdict_block(run_cli("show", db=db_path, check=True).stdout)
    line = next(line for line in block if "cannot tell" in line)
    assert "--benchmark_repetitions=10" in line and "-r " not in line, line
    assert "at least 4 values each" in line, line
    session = json.loads(run_cli("show", "--json", db=db_path, check=True).stdout)["uid"]
    compared = _verdict_block(run_cli("compare", session, db=db_path, check=True).stdout)
    assert compared == block  # one verdict, the same words


def test_a_run_with_too_few_runs_still_says_use_r(db_path):
    out = run_cli("run", "-N", "-r", "2", "true", "sleep 0.001", db=db_path, check=True).stdout
    line = next(line for line in _verdict_block(out) if "cannot tell" in line)
    assert line.endswith("; use -r 4 or more"), line
