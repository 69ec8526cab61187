"""``--alpha-scope suite`` (and a suite file's ``[gate] alpha_scope``): ``--alpha`` spent over
the whole job, each of its k benchmark x metric decisions held to alpha / k, with k counted once
the benchmarks are known (a job of commands: before it runs; a harness: after its first run; a
stored baseline: the benchmarks both sessions hold). Checked on real jobs through the JSON each
decision's alpha lands in and the statement the summary line prints; the default stays alpha per
benchmark. Bad values are one line, exit 2, nothing stored."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.ci.conftest import make_repo
from tests.conftest import BENCHLAB

#: Three benchmarks of the test program, one gated on wall and cpu time: k = 4 decisions.
SUITE = """[gate]
alpha_scope = "suite"

[[benchmark]]
name = "small"
command = "{root}/work 20000"

[[benchmark]]
name = "large"
command = "{root}/work 40000"
metrics = ["wall", "cpu"]

[[benchmark]]
name = "medium"
command = "{root}/work 30000"
"""


def _benchlab(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _spent(path: Path) -> tuple[dict, dict[tuple[str, str], float], str]:
    """The JSON's alpha statement, each decision's alpha by (benchmark, metric), the summary."""
    doc = json.loads(path.read_text())
    return (doc["alpha"], {(d["benchmark"], d["metric"]): d["alpha"] for d in doc["benchmarks"]},
            doc["summary"])


@pytest.mark.slow
def test_a_suite_file_spends_alpha_over_the_whole_job_and_the_option_overrides_it(
        tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 0])
    (tmp_path / "bench.toml").write_text(SUITE)
    common = ["ab", "--suite", str(tmp_path / "bench.toml"), "--base", "HEAD~1", "--head",
              "HEAD", "--build", "make", "--max-time", "1", "--min-pairs", "5",
              "--look-every", "5", "--warmup", "0"]
    res = _benchlab([*common, "--json", str(tmp_path / "suite.json")], repo, cache_env)
    assert res.returncode in (0, 1), res.stderr  # an A/A job: the verdict is not the point
    alpha, each, summary = _spent(tmp_path / "suite.json")
    assert alpha == {"alpha": 0.01, "scope": "suite", "decisions": 4, "each": 0.0025,
                     "statement": "alpha 0.01 over 4 decisions: 0.0025 each"}, alpha
    assert set(each) == {("small", "wall"), ("large", "wall"), ("large", "cpu"),
                         ("medium", "wall")}
    assert all(a == pytest.approx(0.0025) for a in each.values()), each
    assert summary.endswith(f"; alpha 0.01 over 4 decisions: 0.0025 each [exit "
                            f"{res.returncode}]"), summary
    assert summary in res.stdout, res.stdout

    res = _benchlab([*common, "--alpha-scope", "benchmark", "--json",
                     str(tmp_path / "benchmark.json")], repo, cache_env)
    assert res.returncode in (0, 1), res.stderr
    alpha, each, summary = _spent(tmp_path / "benchmark.json")
    assert (alpha["scope"], alpha["decisions"], alpha["each"]) == ("benchmark", 4, None)
    # per benchmark: alpha, shared by the metrics of one benchmark (large: wall and cpu)
    assert each == {("small", "wall"): 0.01, ("large", "wall"): 0.005,
                    ("large", "cpu"): 0.005, ("medium", "wall"): 0.01}, each
    assert "decisions:" not in summary, summary


@pytest.mark.slow
def test_a_harness_job_counts_its_benchmarks_after_the_first_run(tmp_path, cache_env):
    """Google Benchmark reports three benchmarks (BM_Sum/100, BM_Sum/1000, BM_Vec): k = 3,
    said as soon as the first run tells them, before any look."""
    from tests.harnesses.toolchains import gbench_binary

    binary = gbench_binary(tmp_path / "gbench")
    repo = make_repo(tmp_path / "repo", [0, 0])
    res = _benchlab(["ab", "--harness", "gbench", "--base", "HEAD~1", "--head", "HEAD",
                     "--max-time", "3", "--min-pairs", "3", "--look-every", "3", "--warmup",
                     "0", "--alpha-scope", "suite", "--json", str(tmp_path / "g.json"),
                     f"{binary} --benchmark_min_time=0.002 --benchmark_filter=BM_"],
                    repo, cache_env)
    assert res.returncode in (0, 1), res.stderr
    assert "gbench: 3 benchmarks reported; alpha 0.01 over 3 decisions: 0.00333 each" \
        in res.stderr, res.stderr
    alpha, each, summary = _spent(tmp_path / "g.json")
    assert (alpha["scope"], alpha["decisions"]) == ("suite", 3), alpha
    assert alpha["each"] == pytest.approx(0.01 / 3), alpha
    assert len(each) == 3 and all(a == pytest.approx(0.01 / 3) for a in each.values()), each
    assert "alpha 0.01 over 3 decisions: 0.00333 each" in summary, summary


def test_a_stored_baseline_gate_counts_the_benchmarks_both_sessions_hold(tmp_path, cache_env):
    """Two benchmarks on wall and cpu time (k = 4); a third only the candidate has is not
    gated and not counted."""
    record = _benchlab(["gate", "-q", "--record", "main", "-r", "3", "-w", "0", "-n", "a",
                        "-n", "b", "true", "true"], tmp_path, cache_env)
    assert record.returncode == 0, record.stderr
    res = _benchlab(["gate", "--baseline", "branch:main", "-r", "3", "-w", "0",
                     "--alpha-scope", "suite", "--metric", "wall", "--metric", "cpu", "-n", "a",
                     "-n", "b", "-n", "c", "true", "true", "true", "--json",
                     str(tmp_path / "g.json")], tmp_path, cache_env)
    assert res.returncode in (0, 1), res.stderr
    alpha, each, summary = _spent(tmp_path / "g.json")
    assert (alpha["scope"], alpha["decisions"], alpha["each"]) == ("suite", 4, 0.0025), alpha
    assert each == {(b, m): 0.0025 for b in "ab" for m in ("wall", "cpu")}, each
    assert "alpha 0.01 over 4 decisions: 0.0025 each [exit" in summary, summary


@pytest.mark.parametrize("args, suite, needle", [
    (["ab", "--alpha-scope", "family", "./p"], None, "--alpha-scope"),
    (["ab", "--suite", "bench.toml"], '"family"', "[gate] alpha_scope must be"),
    (["gate", "--record", "main", "--suite", "bench.toml"], "0.01", "[gate] alpha_scope must"),
    (["gate", "--alpha-scope", "suites", "--record", "main", "true"], None, "--alpha-scope"),
])
def test_a_bad_alpha_scope_is_one_line_and_stores_nothing(tmp_path, cache_env, args, suite,
                                                          needle):
    if suite is not None:
        (tmp_path / "bench.toml").write_text(f'[gate]\nalpha_scope = {suite}\n\n[[benchmark]]\n'
                                             f'name = "t"\ncommand = "true"\n')
    res = _benchlab([str(tmp_path / a) if a == "bench.toml" else a for a in args], tmp_path,
                    cache_env)
    assert res.returncode == 2, res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not Path(cache_env["BENCHLAB_DB"]).exists()
