"""`benchlab analyze`, `benchlab compare` and `benchlab run --until-decided` end to end."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error


@pytest.fixture
def anp_db(db_path, shared):
    run_cli("import", "--format", "metric", "--metric", r"latency_ns:ns=<<BENCHMARK>> (\d+)",
            str(shared / "data" / "anp-tcp" / "benchmark_results"), "--name", "anp",
            db=db_path, check=True)
    return db_path


def test_analyze_reproduces_seed_003_table(anp_db):
    """The TCP-latency report: 74 kept of 100, median 52665 (of all values), average 51136 (of
    the kept values), uncertainty 461, p95 55601, p99 61627, min 43060, max 62051 (ns)."""
    proc = run_cli("analyze", "anp", "--json", db=anp_db, check=True)
    a = json.loads(proc.stdout)
    m = a["mad_filter"]
    assert (m["n_kept"], m["n_total"]) == (74, 100)
    assert round(m["median_all"]) == 52665
    assert int(m["uncertainty"]) == 461  # the seed prints it truncated (461.503)
    assert round(m["p95_kept"]) == 55601 and round(m["p99_kept"]) == 61627
    assert round(m["min_kept"]) == 43060 and round(m["max_kept"]) == 62051
    assert a["outliers"]["mad_rule"]["flagged"] == 26  # flagged, not dropped
    assert a["summary"]["n"] == 100
    text = run_cli("analyze", "anp", db=anp_db, check=True).stdout
    assert round(m["mean_kept"]) == 51136
    assert "kept 74 of 100" in text and "52.6650 µs" in text and "461.503 ns" in text
    assert "mean of kept 51.1356 µs" in text  # the report's "Average", in the text too
    for section in ("outliers", "independence", "steady state", "CDF"):
        assert section in text


def test_analyze_of_a_run_series_and_bad_names(db_path):
    # -N: no shell, so nothing is subtracted and a 5 ms nap cannot be timed under 5 ms (through
    # sh, the shell's cost measured on a loaded machine can exceed the cost in these runs).
    run_cli("run", "-N", "--runs", "12", "-n", "nap", "sleep 0.005", db=db_path, check=True)
    a = json.loads(run_cli("analyze", "nap", "--json", db=db_path, check=True).stdout)
    assert a["series"]["metric"] == "wall" and a["summary"]["n"] == 12
    assert a["summary"]["median"] >= 5e6
    assert_one_line_error(run_cli("analyze", "nosuch", db=db_path), "nosuch")
    assert_one_line_error(run_cli("analyze", "nap/nometric", db=db_path), "no metric")


def test_analyze_refuses_too_few_and_describes_constant_samples(db_path, tmp_path):
    f = tmp_path / "tiny.csv"
    f.write_text("a,1\na,2\nb,5\nb,5\nb,5\nb,5\n")
    run_cli("import", "--format", "csv", str(f), db=db_path, check=True)
    assert_one_line_error(run_cli("analyze", "a", db=db_path))
    # constant values are legal data: the median is exact, nothing else is claimed, a note
    # says why there is no spread; the JSON is standard (the undefined CV of a zero mean too)
    text = " ".join(run_cli("analyze", "b", db=db_path, check=True).stdout.split())
    assert "median 5.00000 (exact: every value is the same)" in text
    assert "note: all 4 values are the same" in text and "independence" not in text
    a = json.loads(run_cli("analyze", "b", "--json", db=db_path, check=True).stdout,
                   parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert a["median_ci"]["kind"] == "exact" and a["median_ci"]["low"] == 5
    assert "constant_note" in a


def test_analyze_of_a_builtin_faster_than_the_shell_says_what_to_do(db_path):
    """``true`` through sh is usually faster than the median empty shell: its corrected times
    are clamped at 0 (as hyperfine does), often every one of them; analyze degrades and says
    to use -N rather than refusing a constant series."""
    ran = " ".join(run_cli("run", "--runs", "12", "true", db=db_path, check=True).stdout.split())
    assert "(< 5 ms)" in ran and "run without a shell (-N)" in ran  # hyperfine's advice too
    proc = run_cli("analyze", "true", db=db_path, check=True)
    text = " ".join(proc.stdout.split())
    if "exact: every value is the same" in text:
        assert "run it with -N" in text
    else:  # some runs were slower than the shell's median: an ordinary analysis
        assert "CI" in text
    doc = json.loads(run_cli("analyze", "true", "--json", db=db_path, check=True).stdout,
                     parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert doc["summary"]["min"] >= 0
    exported = db_path.parent / "true.json"
    without_shell = run_cli("run", "-N", "--runs", "3", "true", "--export-json", str(exported),
                            db=db_path, check=True).stdout
    assert "(-N)" not in without_shell
    # The short-run warning follows the measured median: on a loaded machine exec'ing true can
    # take more than 5 ms, and then it must not be said.
    median_s = json.loads(exported.read_text())["results"][0]["median"]
    assert ("(< 5 ms)" in without_shell) == (median_s < 0.005), (median_s, without_shell)


@pytest.fixture
def jaybeams_db(db_path, shared):
    # The workstation data only: its one user compares nothing of the VM's 200,000 rows.
    run_cli("import", "--format", "csv",
            str(shared / "data" / "jaybeams" / "workstation-results.csv"), db=db_path, check=True)
    return db_path


@pytest.mark.slow
def test_compare_reproduces_seed_001_workstation_report(jaybeams_db):
    proc = run_cli("compare", "workstation-results:array", "workstation-results:map",
                   "--jaybeams-compatible", "--iterations", "20000", "--clock-ghz", "3",
                   db=jaybeams_db, check=True, timeout=600)
    out = " ".join(proc.stdout.split())
    assert "PASSED: the samples do not exhibit high auto-correlation" in out
    assert "197 µs" in out  # SD estimate
    assert "should be >= 36000" in out  # the post's 36000 samples for the minimum effect
    assert "5000 samples detect 10x the minimum effect" in out
    assert re.search(r"Monte-Carlo error of ±[\d.]+ (ns|µs) at 10000 resamples", out)
    assert re.search(r"-771\.5\d* µs", out)  # Hodges-Lehmann estimate
    assert re.search(r"\[-773\.7\d*, -769\.3\d*\]|\[-773\.8, -769\.3\]", out)
    assert "verdict: array is faster than map by 771.5" in out
    # the JSON's Hodges-Lehmann numbers and outcome do not use the SD bootstrap: 200 resamples
    # spare a second run of the 10,000 checked above (2 x 10,000 resamples of 35,000 values)
    data = json.loads(run_cli("compare", "workstation-results:array", "workstation-results:map",
                              "--jaybeams-compatible", "--iterations", "20000", "--clock-ghz",
                              "3", "--resamples", "200", "--json", db=jaybeams_db, check=True,
                              timeout=600).stdout)
    (c,) = data["comparisons"]
    assert c["hodges_lehmann"]["estimate"] == pytest.approx(-771550.1, abs=0.5)
    assert c["hodges_lehmann"]["ci_low"] == pytest.approx(-773770, abs=10)
    assert c["hodges_lehmann"]["ci_high"] == pytest.approx(-769320, abs=10)
    assert c["outcome"] == "faster"


def test_compare_many_against_a_baseline_is_holm_corrected(db_path):
    run_cli("run", "--runs", "15", "-n", "fast", "-n", "slow", "-n", "base", "sleep 0.002",
            "sleep 0.08", "sleep 0.03", db=db_path, check=True)  # wide gaps: a loaded CI machine adds ms of jitter
    data = json.loads(run_cli("compare", "fast", "slow", "--baseline", "base", "--json",
                              db=db_path, check=True).stdout)
    assert data["adjustment"] == "holm"
    outcomes = {c["name_a"]: c["outcome"] for c in data["comparisons"]}
    assert outcomes == {"fast": "faster", "slow": "slower"}
    for c in data["comparisons"]:
        assert c["p_adjusted"] >= c["p_value"]
    # the environments are the same machine: no differences listed between sessions
    assert data["environment_differences"] == {}


def test_compare_lists_environment_differences_between_sessions(db_path, tmp_path):
    run_cli("run", "--runs", "8", "-n", "x", "sleep 0.003", db=db_path, check=True)
    run_cli("run", "--runs", "8", "-n", "x", "sleep 0.004", db=db_path, check=True,
            env={"BENCHLAB_EXTRA_VAR": "1"})
    with Store.open(db_path) as store:
        a, b = [s["uid"] for s in store.sessions()]
    data = json.loads(run_cli("compare", f"{a}:x", f"{b}:x", "--json", db=db_path,
                              check=True).stdout)
    diffs = data["environment_differences"]
    assert diffs, "two sessions with different environment variables must differ"
    keys = " ".join(d[0] for v in diffs.values() for d in v)
    assert "BENCHLAB_EXTRA_VAR" in keys


@pytest.mark.parametrize("args,needle", [
    (["compare", "onlyone"], "two series"),
    (["compare", "a", "b", "--iterations", "5"], "--clock-ghz"),
])
def test_compare_bad_input(db_path, args, needle):
    run_cli("run", "--runs", "3", "-n", "a", "-n", "b", "true", "sleep 0.001", db=db_path,
            check=True)
    assert_one_line_error(run_cli(*args, db=db_path), needle)


def test_until_decided_stops_early_on_a_clear_difference(db_path):
    proc = run_cli("run", "--until-decided", "--max-runs", "300", "--look-every", "5",
                   "-n", "quick", "-n", "slow", "sleep 0.002", "sleep 0.02", "--json",
                   db=db_path, check=True, timeout=300)
    data = json.loads(proc.stdout)
    decision = data["until_decided"]["decision"]
    assert decision["action"] == "different" and decision["z"] < 0
    n = decision["n_a"]
    assert 20 <= n < 300, "a 10x difference must be decided long before the budget"
    runs = {b["name"]: b["wall"]["n"] for b in data["benchmarks"]}
    assert runs == {"quick": n, "slow": n}
    with Store.open(db_path) as store:
        meta = store.sessions()[0]["metadata"]["until_decided"]
        assert meta["options"]["looks"][-1] == n
        assert len(meta["design"]["looks"]) == len(meta["options"]["looks"])


def test_until_decided_runs_out_of_budget_when_it_cannot_tell(db_path):
    data = json.loads(run_cli("run", "--until-decided", "--max-runs", "25", "--look-every", "5",
                              "--equivalence-margin", "0", "-n", "a", "-n", "b", "sleep 0.001",
                              "sleep 0.001", "--json", db=db_path, check=True,
                              timeout=300).stdout)
    decision = data["until_decided"]["decision"]
    assert decision["action"] in ("budget_exhausted", "different")
    if decision["action"] == "budget_exhausted":
        assert {b["wall"]["n"] for b in data["benchmarks"]} == {25}


def test_until_decided_resumes_replaying_its_looks(db_path):
    # A/A with no equivalence margin runs to --max-runs: 100 each take at least 4 s of sleeps,
    # the kill comes after 2 looks (10 rounds); 400 made the resume alone 16 s of sleeping
    proc = subprocess.Popen([BENCHLAB, "run", "--until-decided", "--max-runs", "100",
                             "--look-every", "5", "--equivalence-margin", "0", "-n", "a",
                             "-n", "b", "sleep 0.02", "sleep 0.02", "-q", "--db", str(db_path)])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            with Store.open(db_path, readonly=True) as store:
                sess = store.sessions()[0]
                if len((sess["protocol"]["until_decided"] or {}).get("looks", [])) >= 2:
                    break
        except Exception:
            continue
    proc.kill()
    proc.wait()
    with Store.open(db_path) as store:
        uid = store.sessions()[0]["uid"]
        looks_before = list(store.sessions()[0]["protocol"]["until_decided"]["looks"])
    assert len(looks_before) >= 2
    data = json.loads(run_cli("run", "--resume", uid, "--json", db=db_path, check=True,
                              timeout=600).stdout)
    looks = data["until_decided"]["options"]["looks"]
    assert looks[:len(looks_before)] == looks_before
    assert data["until_decided"]["decision"]["look"] == len(looks)


@pytest.mark.parametrize("args,needle", [
    (["run", "--until-decided", "true"], "exactly two"),
    (["run", "--until-decided", "--runs", "5", "true", "sleep 0"], "--max-runs"),
])
def test_until_decided_bad_input(db_path, args, needle):
    assert_one_line_error(run_cli(*args, db=db_path), needle)


# --- compare never aborts on real data and always ends with a verdict -------

def _import_series(db_path, tmp_path, series: dict) -> None:
    """Write NAME,VALUE rows (ns) and import them as one session with the CSV importer."""
    import numpy as np

    f = tmp_path / "series.csv"
    f.write_text("".join(f"{name},{float(v)!r}\n" for name, values in series.items()
                         for v in np.asarray(values, dtype=float)))
    run_cli("import", "--format", "csv", str(f), db=db_path, check=True)


def _verdict(proc) -> str:
    line = next(l for l in proc.stdout.splitlines() if "verdict:" in l)
    return line.split("verdict:", 1)[1].strip()


def test_compare_and_analyze_on_a_clock_grid_fall_back_and_say_so(db_path, tmp_path):
    import numpy as np

    rng = np.random.default_rng(1)  # this pair made compare and analyze abort before
    a, b = (np.round(rng.lognormal(np.log(1.05e6), 0.004, 30), -3) for _ in range(2))
    _import_series(db_path, tmp_path, {"a": a, "b": b})
    proc = run_cli("compare", "a", "b", db=db_path, check=True)
    assert _verdict(proc).startswith("a and b are equivalent within ±1%")
    # beside the verdict no second ratio: "median ratio 0.8333, CI [0.8333, 1.2]" was printed
    # beside "ratio 1.000" on tied values; the JayBeams steps print it, with the fallback
    assert "median ratio" not in proc.stdout and "Mann-Whitney U" not in proc.stdout
    jaybeams = run_cli("compare", "a", "b", "--jaybeams-compatible", "--resamples", "200",
                       db=db_path, check=True)
    assert "percentile interval is used instead" in jaybeams.stdout
    ana = run_cli("analyze", "a", db=db_path, check=True)
    assert "percentile (BCa undefined on tied values) CI" in ana.stdout
    data = json.loads(run_cli("analyze", "a", "--json", db=db_path, check=True).stdout)
    assert data["median_ci"]["kind"] == "percentile" and data["median_ci"]["fallback"]


@pytest.mark.parametrize("a, b, args, start", [
    ([5] * 10, [7] * 10, [], "a ran 1.4× faster than b"),
    ([5] * 10, [5] * 10, [], "a and b took exactly the same time in every run"),
    ([0] * 10 + [1, 2], [0] * 10 + [3, 4], [], "cannot tell a and b apart yet"),
    ([0] * 10 + [1, 2], [0] * 10 + [3, 4], ["--min-effect", "5ns"],
     "a and b are equivalent within ±5"),
])
def test_compare_constants_and_zero_medians(db_path, tmp_path, a, b, args, start):
    _import_series(db_path, tmp_path, {"a": a, "b": b})
    proc = run_cli("compare", "a", "b", *args, db=db_path, check=True)
    assert _verdict(proc).startswith(start), proc.stdout
    assert "must be positive" not in proc.stdout + proc.stderr


def test_compare_verdict_comes_before_a_degraded_power_note(db_path, tmp_path):
    import numpy as np

    rng = np.random.default_rng(2)
    a, b = rng.normal(1000, 10, 50), rng.normal(1030, 10, 50)
    a[3] = 1e9
    _import_series(db_path, tmp_path, {"a": a, "b": b})
    assert _verdict(run_cli("compare", "a", "b", db=db_path, check=True)).startswith(
        "a ran 1.0")
    seed = run_cli("compare", "a", "b", "--jaybeams-compatible", "--resamples", "200",
                   db=db_path, check=True)
    assert "1e15" in seed.stdout and "the JayBeams analysis stops here" in _verdict(seed)


def test_compare_small_ms_samples_decides_and_says_how_many_more_runs(db_path, tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    _import_series(db_path, tmp_path, {
        "fast": rng.lognormal(np.log(1e6), 0.05, 20), "slow": rng.lognormal(np.log(1.14e6), 0.05, 20),
        "near": rng.lognormal(np.log(1.02e6), 0.05, 20)})
    decided = _verdict(run_cli("compare", "fast", "slow", db=db_path, check=True))
    assert decided.startswith("fast ran 1.") and "faster than slow, 95% CI" in decided
    assert "need" not in decided
    near = run_cli("compare", "fast", "near", "--conf-level", "0.99", db=db_path, check=True)
    verdict = _verdict(near)
    assert verdict.startswith("cannot tell fast and near apart yet") and re.search(
        r"about \d+ more runs? each would decide", verdict)
    assert "99% CI" in verdict  # the level asked for, in the verdict's own interval
    # a real 4 % difference inside a 300 µs (30 %) margin: decided, and said to be inside it
    eq = run_cli("compare", "fast", "near", "--min-effect", "300us", db=db_path, check=True)
    assert "faster than near" in _verdict(eq)
    assert "the difference is real but inside ±300" in eq.stdout


@pytest.mark.parametrize("args,needle", [
    (["--min-effect", "1000"], "--min-effect"),
    (["--min-effect", "nan%"], "--min-effect"),
    (["--min-effect", "-1ms"], "--min-effect"),
    (["--conf-level", "1"], "--conf-level"),
])
def test_compare_bad_effects_and_levels(db_path, tmp_path, args, needle):
    _import_series(db_path, tmp_path, {"a": [1, 2, 3], "b": [2, 3, 4]})
    assert_one_line_error(run_cli("compare", "a", "b", *args, db=db_path), needle)
