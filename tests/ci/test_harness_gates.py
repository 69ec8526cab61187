"""The harness in every gate, with the real Go toolchain: ``ab`` from a suite file that names the
harness (``[gate] harness = "go"``), whose decided benchmark stops being run while the other gets
the time; ``gate --harness go`` against a baseline recorded the same way; ``bisect --harness
go`` following the benchmark the bad end finds slower; and each harness's own filter
(``Harness.narrow``: go, gbench, criterion, pytest-benchmark) running only the benchmarks named.

The Go package has two benchmarks, Sum and Product; a commit makes Sum do 3x the work (Go's
ns/op is wall time, and single harness runs spread by tens of per cent beside the other test
processes: a 3x change is decided at the first look). One repository serves the module; each
test has its own build cache and database."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.ci.conftest import git
from tests.conftest import BENCHLAB
from tests.harnesses.toolchains import go_sum_product

pytestmark = pytest.mark.slow

#: Each tree's test binary, built once (``--build``): a harness run is then the benchmarks alone,
#: not a ``go test`` compile and link each time (7 s per run on a loaded machine).
BUILD = "go test -c -o tiny.test"
COMMAND = "{root}/tiny.test -test.run ^$ -test.bench . -test.benchtime 50ms"


@pytest.fixture(scope="module")
def gocache(tmp_path_factory) -> str:
    """Go's own build cache, which the private cache of each test (XDG_CACHE_HOME) would
    otherwise replace: the standard library is compiled once, not once per test (40 s)."""
    go_sum_product()  # go on PATH, or the test skips saying why
    found = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True)
    return found.stdout.strip() or str(tmp_path_factory.mktemp("gocache"))


@pytest.fixture
def env(cache_env, gocache) -> dict[str, str]:
    return {**cache_env, "GOCACHE": gocache}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """base (Sum 2000 loops), docs, slower (Sum 6000 loops), docs again: HEAD~2 is slower;
    each benchmark also reports its loops per operation (:func:`counted`)."""
    root = tmp_path_factory.mktemp("harness-gates") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@benchlab.invalid")
    git(root, "config", "user.name", "ci")
    for subject, files in (("base", counted(2000)), ("docs", {"README": "one\n"}),
                           ("slower", counted(6000)), ("docs again", {"README": "two\n"})):
        for name, text in files.items():
            (root / name).write_text(text)
        git(root, "add", ".")
        git(root, "commit", "-qm", subject)
    return root


def counted(sum_loops: int) -> dict[str, str]:
    """:func:`go_sum_product`'s files, each benchmark also reporting the loops it runs per
    operation (``b.ReportMetric``, stored as ``loops_per_op``): a count the code fixes, which
    no load on the machine changes, for gates whose two sides are measured at different
    moments."""
    files = go_sum_product(sum_loops)
    for bench, loops in (("Sum", sum_loops), ("Product", 2000)):
        files["tiny_test.go"] = files["tiny_test.go"].replace(
            f"func Benchmark{bench}(b *testing.B) {{\n",
            f"func Benchmark{bench}(b *testing.B) {{\n\tdefer b.ReportMetric({loops}, "
            f"\"loops/op\")\n", 1)
    assert files["tiny_test.go"].count("ReportMetric") == 2
    return files


def _benchlab(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _measured_runs(db: str) -> dict[str, int]:
    """Measured runs stored per benchmark name, over every session of ``db`` ({} while the
    store is being created)."""
    with contextlib.suppress(sqlite3.OperationalError), sqlite3.connect(db) as con:
        return dict(con.execute("SELECT b.name, count(*) FROM runs r JOIN benchmarks b ON "
                                "b.id = r.benchmark_id WHERE r.warmup = 0 GROUP BY b.name"))
    return {}


def test_the_go_filter_runs_only_the_benchmarks_named(repo, gocache, monkeypatch):
    from benchlab.measure.harnesses import get_harness
    from benchlab.measure.harnesses.runner import run_harness

    monkeypatch.setenv("GOCACHE", gocache)
    command = "go test -run ^$ -bench . -benchtime 20ms ./..."
    narrowed = get_harness("go").narrow(command, ["Product"])
    assert narrowed is not None and "-bench=" in narrowed
    # inside sh -c '...' the quoted pattern would end the string: not narrowed
    assert get_harness("go").narrow(f"sh -c '{command}'", ["Product"]) is None
    assert set(run_harness("go", narrowed, cwd=repo).reported.benchmarks) == {"Product"}
    assert set(run_harness("go", command, cwd=repo).reported.benchmarks) == {"Sum", "Product"}


def test_the_gbench_filter_runs_only_the_benchmarks_named(tmp_path):
    from benchlab.measure.harnesses import get_harness
    from benchlab.measure.harnesses.runner import run_harness
    from tests.harnesses.toolchains import gbench_binary

    command = f"{gbench_binary(tmp_path)} --benchmark_min_time=0.002 --benchmark_filter=BM_"
    narrowed = get_harness("gbench").narrow(command, ["BM_Sum/1000", "BM_Vec"])
    assert narrowed is not None and "=BM_ " not in narrowed + " "
    assert set(run_harness("gbench", narrowed).reported.benchmarks) == {"BM_Sum/1000",
                                                                         "BM_Vec"}


def test_a_harness_suite_file_gates_and_gives_the_undecided_the_time(repo, tmp_path, env):
    """Sum (3x) is decided slower at the first look; Product, held to 0.5 %, stays undecided
    on a busy machine: from then on only Product runs."""
    suite = tmp_path / "bench.toml"
    suite.write_text(f'[gate]\nharness = "go"\nthreshold = "0.5%"\n\n'
                     f'[[benchmark]]\ncommand = "{COMMAND}"\n')
    res = _benchlab(["ab", "--suite", str(suite), "--base", "HEAD~3", "--head", "HEAD~1",
                     "--build", BUILD, "--max-time", "20", "--min-pairs", "10",
                     "--look-every", "5", "--warmup", "0", "--junit", str(tmp_path / "j.xml")],
                    repo, env)
    assert res.returncode == 1, res.stderr
    cases = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert len(failed) == 1 and "Sum" in failed[0], failed
    runs = _measured_runs(env["BENCHLAB_DB"])
    assert "cannot be narrowed" not in res.stderr, res.stderr
    if "the harness runs only those" in res.stderr:
        assert runs["Sum@base"] < runs["Product@base"], runs
    else:  # Product was decided at Sum's look after all: nothing left to give time to
        assert runs["Sum@base"] == runs["Product@base"], (runs, res.stderr)


def test_a_command_that_cannot_be_narrowed_is_said_once(repo, tmp_path, env):
    """go's ``-bench`` inside ``sh -c '...'``: the harness cannot place its filter there, so
    once Sum (3x) is decided while Product (held to 0.1 %) is not, the gate says once that
    every benchmark still runs and how to write the command, and both keep running."""
    res = _benchlab(["ab", "--harness", "go", "--base", "HEAD~3", "--head", "HEAD~1",
                     "--build", BUILD, "--threshold", "0.1%", "--max-time", "9",
                     "--min-pairs", "10", "--look-every", "5", "--warmup", "0",
                     "--", f"sh -c '{COMMAND.replace('50ms', '20ms')}'"], repo, env)
    assert res.returncode == 1, res.stderr  # Sum slower
    said = [line for line in res.stderr.splitlines() if "cannot be narrowed" in line]
    assert len(said) == 1 and "go: 1 undecided" in said[0], res.stderr
    assert "not inside a quoted string such as sh -c" in said[0], said
    assert "the harness runs only those" not in res.stderr, res.stderr
    runs = _measured_runs(env["BENCHLAB_DB"])
    assert runs["Sum@base"] == runs["Product@base"] > 5, runs


def test_gate_harness_against_a_recorded_baseline(repo, tmp_path, env):
    """The baseline recorded with --harness in the base tree, the head gated from a suite
    file that names the harness (``{root}``: the current directory, as for gate's commands).

    The two sessions run at different moments of a shared machine, so the gated metric is
    ``loops_per_op``, a count the code fixes (Sum 2000 -> 6000, Product 2000): no load
    leaves it undecided by noise, and a count that reads the same in every run on both sides
    is exempt from the contention rule (no load moved it), so the gate always decides."""
    trees = {}
    for label, rev in (("base", "HEAD~3"), ("head", "HEAD")):
        trees[label] = tmp_path / label
        git(repo, "worktree", "add", "-q", "--detach", str(trees[label]), rev)
        subprocess.run(BUILD.split(), cwd=trees[label], env=env, check=True)
    suite = tmp_path / "bench.toml"
    suite.write_text(f'[gate]\nharness = "go"\n\n[[benchmark]]\ncommand = "{COMMAND}"\n'
                     f'metrics = ["loops_per_op"]\n')
    try:
        recorded = _benchlab(["gate", "-q", "--harness", "go", "-r", "5", "--record", "main",
                              COMMAND.replace("{root}", ".")], trees["base"], env)
        assert recorded.returncode == 0, recorded.stderr
        res = _benchlab(["gate", "--suite", str(suite), "-r", "5", "--baseline", "branch:main",
                         "--junit", str(tmp_path / "j.xml"), "--json", str(tmp_path / "g.json")],
                        trees["head"], env)
    finally:
        for tree in trees.values():
            git(repo, "worktree", "remove", "--force", str(tree))
    said = res.stdout + res.stderr
    assert res.stderr.startswith("benchlab: session "), res.stderr  # said as it begins
    decisions = {d["benchmark"]: d
                 for d in json.loads((tmp_path / "g.json").read_text())["benchmarks"]}
    assert {b: (d["metric"], d["ratio"]) for b, d in decisions.items()} == {
        "Sum": ("loops_per_op", pytest.approx(3.0, rel=1e-9)),
        "Product": ("loops_per_op", pytest.approx(1.0, rel=1e-9))}, decisions
    cases = list(ET.parse(tmp_path / "j.xml").getroot().iter("testcase"))
    assert sorted("Sum" in c.get("name") for c in cases) == [False, True], cases
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert res.returncode == 1, said
    assert decisions["Sum"]["outcome"] == "slower", said
    assert decisions["Product"]["outcome"] == "equivalent", said
    assert len(failed) == 1 and "Sum" in failed[0], [c.get("name") for c in cases]


def test_bisect_harness_follows_the_benchmark_that_got_slower(repo, env):
    res = _benchlab(["bisect", "--harness", "go", "--good", "HEAD~3", "--bad", "HEAD",
                     "--build", BUILD, "--max-time", "20", "--min-pairs", "10",
                     "--look-every", "5", "--warmup", "0", "--retries", "0", "--json", "-",
                     "--", COMMAND], repo, env)
    assert res.returncode == 0, res.stderr
    slower = git(repo, "rev-parse", "HEAD~1").strip()
    assert "following benchmark Sum" in res.stderr, res.stderr
    assert slower[:12] in res.stdout and "slower" in res.stdout, res.stdout


@pytest.mark.parametrize("args, needle", [
    (["gate", "--harness", "go", "--baseline", "x", "-n", "a", "go test -bench ."], "-n/--name"),
    (["gate", "--harness", "go", "--record", "main", "go test ./..."], "-bench"),
    (["bisect", "--harness", "go", "--good", "HEAD~1", "--bad", "HEAD", "--count",
      "instructions", "--", "go test -bench ."], "--count"),
    (["bisect", "--good", "HEAD~1", "--bad", "HEAD", "--benchmark", "Sum", "--", "./p"],
     "--benchmark NAME goes with --harness"),
    (["gate", "--suite", "go.toml", "--record", "main", "./p"], "one of them"),
    (["ab", "--suite", "go.toml", "./p"], "not both"),
    (["ab", "--suite", "go.toml", "-r", "3"], "-r/--runs"),
])
def test_what_does_not_go_with_a_harness_is_one_line_before_anything_runs(repo, env, args,
                                                                          needle, tmp_path):
    (tmp_path / "go.toml").write_text('[gate]\nharness = "go"\n\n[[benchmark]]\n'
                                      'command = "go test -bench ."\n')
    args = [str(tmp_path / a) if a == "go.toml" else a for a in args]
    res = _benchlab(args, repo, env)
    assert res.returncode == 2, res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not Path(env["BENCHLAB_DB"]).exists() or not _measured_runs(env["BENCHLAB_DB"])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_harness_interrupted_keeps_its_runs_and_exits_128_plus_the_signal(repo, env, sig):
    """Started with SIGINT ignored (a background job), stopped through its process group."""
    db = env["BENCHLAB_DB"]
    proc = subprocess.Popen([BENCHLAB, "run", "--harness", "go", "-r", "200",
                             "go test -run ^$ -bench . -benchtime 20ms ./..."], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not (
                Path(db).exists() and _measured_runs(db)):
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1]
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err
    assert err.strip().splitlines()[-1].startswith("benchlab: interrupted; "), err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM sessions").fetchall() == [("interrupted",)]


@pytest.mark.timeout(1800)  # the first build compiles criterion (minutes); later runs: seconds
def test_the_criterion_filter_runs_only_the_ids_named(tmp_path):
    """``fib 10`` and ``fib 12``: the filter is exact (``fib 1`` would match both), and it
    replaces a filter the command gives. As in a gate, one side's runs share a directory: a
    narrowed run reads none of the results an earlier run left there."""
    from benchlab.measure.harnesses import get_harness
    from benchlab.measure.harnesses.runner import run_prepared
    from tests.harnesses.toolchains import CRITERION_COMMAND, criterion_crate

    crate, harness = criterion_crate(), get_harness("criterion")

    def reported(command: str) -> set[str]:
        run = run_prepared("criterion", harness.prepare(command, tmp_path), command, tmp_path,
                           cwd=crate)
        return set(run.reported.benchmarks)

    assert reported(CRITERION_COMMAND) == {"fib 10", "fib 12"}
    for command, names in ((CRITERION_COMMAND, ["fib 12"]),
                           (CRITERION_COMMAND.replace(" -- ", " -- 'fib 1' "), ["fib 10"])):
        narrowed = harness.narrow(command, names)
        assert narrowed is not None, command
        assert reported(narrowed) == set(names), narrowed


def test_the_pytest_benchmark_filter_runs_only_the_benchmarks_named(tmp_path):
    """A parametrised benchmark alone (its brackets kept), and two names within the
    command's own ``-k``: only the one it also selects runs."""
    from benchlab.measure.harnesses import get_harness
    from benchlab.measure.harnesses.runner import run_harness
    from tests.harnesses.toolchains import pytest_benchmark_project

    command = pytest_benchmark_project(tmp_path / "proj")
    for given, names, ran in ((command, ["test_fibp[8]"], {"test_fibp[8]"}),
                              (f"{command} -k fibp", ["test_fib10", "test_fibp[5]"],
                               {"test_fibp[5]"})):
        narrowed = get_harness("pytest-benchmark").narrow(given, names)
        assert narrowed is not None, given
        reported = run_harness("pytest-benchmark", narrowed, cwd=tmp_path / "proj").reported
        assert set(reported.benchmarks) == ran, narrowed
