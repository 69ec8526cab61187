"""Import and export formats on real files and a real SQLite store.

hyperfine files come from the real hyperfine (/usr/bin/hyperfine); pyperf and Google Benchmark
files are written by hand following those tools' documented formats, because neither tool is
installed here (and pyperf must not become a dependency).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.store import Store
from benchlab.store.formats import export_sessions, import_path
from benchlab.store.formats.metric_spec import extract, parse_metric_spec
from tests.conftest import needs_tool

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
JAYBEAMS = SHARED / "data" / "jaybeams"
ANP = SHARED / "data" / "anp-tcp"
HYPERFINE = shutil.which("hyperfine")

needs_shared = pytest.mark.skipif(not (SHARED / "data").is_dir(),
                                  reason="../shared/data is absent: published data sets unavailable")
needs_hyperfine = needs_tool("hyperfine")


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "formats.db") as s:
        yield s


def _hyperfine(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "hyperfine.json"
    subprocess.run([HYPERFINE, "-N", "--style", "none", "--export-json", str(out), *args],
                   check=True, capture_output=True, timeout=120)
    return out


# -- --metric specs -------------------------------------------------------------------------

def test_metric_spec_parses_name_unit_and_regex_with_equals_and_colons():
    spec = parse_metric_spec(r"latency_ns:ns=<<BENCHMARK>> (\d+)")
    assert (spec.name, spec.unit, spec.regex) == ("latency_ns", "ns", r"<<BENCHMARK>> (\d+)")
    spec = parse_metric_spec(r"rate=a=b:c ([0-9.e+-]+)")
    assert (spec.name, spec.unit, spec.regex) == ("rate", "", r"a=b:c ([0-9.e+-]+)")
    text = "x\n<<BENCHMARK>> 12\nnoise 99\n<<BENCHMARK>> 7\n"
    assert extract(parse_metric_spec(r"l=^<<BENCHMARK>> (\d+)$"), text) == [12.0, 7.0]
    assert extract(spec, "nothing here") == []


@pytest.mark.parametrize("regex,groups", [(r"took \d+", 0), (r"(took) (\d+)", 2)])
def test_metric_regex_needs_exactly_one_group(regex, groups):
    with pytest.raises(UserError) as err:
        parse_metric_spec(f"t={regex}")
    msg = str(err.value)
    assert f"has {groups} groups; it needs exactly one (" in msg and "\n" not in msg


def test_metric_spec_rejects_bad_syntax_and_invalid_regex_and_non_numbers():
    for bad in ("no-equals-sign", "=(\\d+)", "1abc=(\\d+)", "x=(\\d+"):
        with pytest.raises(UserError):
            parse_metric_spec(bad)
    with pytest.raises(UserError, match="not a finite number"):
        extract(parse_metric_spec(r"x=value (\S+)"), "value abc")


# -- csv (JayBeams style) -------------------------------------------------------------------

def test_csv_keeps_comments_header_unit_and_one_run_per_label(store, tmp_path):
    f = tmp_path / "run-1.csv"
    f.write_text("# machine: box\n#   indented, kept verbatim\nbook_type,nanoseconds\n"
                 "map,10\narray,3\nmap,12\narray,4.5\n# trailer\n")
    [ref] = import_path(store, f, "csv")
    sess = store.get_session(ref.uid)
    assert (sess["kind"], sess["status"], sess["name"]) == ("import", "complete", "run-1")
    assert sess["source"] == str(f)
    assert sess["metadata"]["comments"] == ["# machine: box", "#   indented, kept verbatim",
                                            "# trailer"]
    assert sess["metadata"]["header"] == "book_type,nanoseconds"
    assert [b["name"] for b in store.benchmarks(ref.id)] == ["map", "array"]
    runs = store.runs(session_id=ref.id)
    assert len(runs) == 2 and {r["status"] for r in runs} == {"imported"}
    assert all(r["wall_ns"] is None for r in runs)  # no harness timings are invented
    series = store.resolve_series("run-1:array")
    assert series.values.tolist() == [3.0, 4.5] and series.unit == "ns"
    assert series.metric == "value"
    assert store.metrics(ref.id)[0]["unit"] == "ns"


def test_csv_unit_option_overrides_and_default_is_empty_without_header(store, tmp_path):
    f = tmp_path / "plain.csv"
    f.write_text("a,1\na,2\n")
    [r1] = import_path(store, f, "csv")
    [r2] = import_path(store, f, "csv", unit="us", name="other")
    assert store.metric_unit(r1.id, "value") == ""
    assert store.metric_unit(r2.id, "value") == "us"
    assert store.get_session(r2.uid)["name"] == "other"


@pytest.mark.parametrize("content,needle", [
    ("a,1\na,2\nb,zwei\na,3\n", "line 3"),           # non-numeric value
    ("# c\na,1\nlabel,value\n", "line 3"),           # header-like line after data
    ("a,1\na,2,3\n", "line 2: 3 fields"),            # wrong field count
    ("# only comments\n", "no label,value rows"),
    ('{"results": []}\n', "looks like JSON"),
])
def test_malformed_csv_is_one_line_error_and_imports_nothing(store, tmp_path, content, needle):
    good = tmp_path / "good.csv"
    good.write_text("x,1\n")
    import_path(store, good, "csv")
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    with pytest.raises(UserError) as err:
        import_path(store, bad, "csv")
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert len(store.sessions()) == 1  # nothing partial, the other session untouched
    assert store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0] == 1


def test_unreadable_and_missing_files_are_user_errors(store, tmp_path):
    with pytest.raises(UserError, match="no such file"):
        import_path(store, tmp_path / "missing.csv", "csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UserError, match="not UTF-8"):
        import_path(store, binary, "csv")
    with pytest.raises(UserError, match="directory"):
        import_path(store, tmp_path, "csv")
    assert store.sessions() == []


def test_failure_while_writing_removes_the_new_session_only(store, tmp_path):
    """A write that fails half-way (simulated by closing the connection's ability to add a
    run: a benchmark name clash inside one import is impossible from files, so we make the
    store's add_run fail for the second benchmark) leaves no trace of the import."""
    f = tmp_path / "two.csv"
    f.write_text("a,1\nb,2\n")
    import_path(store, f, "csv", name="kept")
    real_add_run = store.add_run
    calls = []

    def failing_add_run(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise UserError("disk full (simulated)")
        return real_add_run(*args, **kwargs)

    store.add_run = failing_add_run
    with pytest.raises(UserError, match="simulated"):
        import_path(store, f, "csv", name="lost", allow_duplicate=True)
    del store.add_run
    assert [s["name"] for s in store.sessions()] == ["kept"]
    assert store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    assert store.conn.execute("SELECT COUNT(*) FROM benchmarks").fetchone()[0] == 2


@needs_shared
def test_jaybeams_files_import_fast_and_export_as_long_csv(store):
    t0 = time.perf_counter()
    [ws] = import_path(store, JAYBEAMS / "workstation-results.csv", "csv")
    t1 = time.perf_counter()
    [vm] = import_path(store, JAYBEAMS / "vm-results.csv", "csv")
    t2 = time.perf_counter()
    # Generous: ~1 s of CPU here; the machine is shared, so only catch pathological slowness.
    assert t2 - t1 < 30 and t1 - t0 < 15
    for sel, n in (("workstation-results:array", 35000), ("workstation-results:map", 35000),
                   ("vm-results:array", 100000), ("vm-results:map", 100000)):
        assert len(store.resolve_series(sel).values) == n
    # the values are the file's, in file order
    first_map = next(l for l in (JAYBEAMS / "vm-results.csv").read_text().splitlines()
                     if l.startswith("map,"))
    assert store.resolve_series("vm-results:map").values[0] == float(first_map.split(",")[1])
    meta = store.get_session(vm.uid)["metadata"]
    assert meta["comments"][1].startswith("# Starting bm_order_book_generate")
    assert meta["comments"][-1].startswith("# Restore RT scheduling")

    text = export_sessions(store, ["workstation-results"], "csv")
    lines = text.splitlines()
    comment = [l for l in lines if l.startswith("#")]
    data = [l for l in lines if not l.startswith("#")]
    assert data[0] == "session,benchmark,run,iteration,warmup,status,metric,value,unit"
    assert len(data) - 1 == 70000
    assert len(comment) >= 3
    meta_line = next(l for l in comment if " metadata: " in l)
    assert json.loads(meta_line.split(" metadata: ", 1)[1])["comments"] == \
        store.get_session(ws.uid)["metadata"]["comments"]
    rows = list(csv.DictReader(io.StringIO("\n".join(data))))
    assert {r["metric"] for r in rows} == {"value"}
    assert {r["benchmark"] for r in rows} == {"map", "array"}
    assert sum(1 for r in rows if r["benchmark"] == "map") == 35000


# -- metric (program outputs) ---------------------------------------------------------------

@needs_shared
def test_metric_import_of_anp_outputs_matches_published_latencies(store):
    [ref] = import_path(store, ANP / "benchmark_results", "metric",
                        metrics=[r"latency_ns:ns=<<BENCHMARK>> (\d+)"])
    sess = store.get_session(ref.uid)
    assert sess["name"] == "benchmark_results"
    runs = store.runs(session_id=ref.id)
    assert len(runs) == 100
    files = [r["extra"]["file"] for r in runs]
    assert files == sorted(files)
    expected = dict(line.split(",") for line in (ANP / "latency_ns.csv").read_text().split())
    for run in runs:
        value = store.samples_of_run(run["id"])["latency_ns"]
        assert value.tolist() == [float(expected[run["extra"]["file"]])]
    series = store.resolve_series("benchmark_results")
    assert series.unit == "ns" and len(series.values) == 100


def test_metric_import_errors_and_partial_matches(store, tmp_path):
    d = tmp_path / "outs"
    d.mkdir()
    (d / "b.txt").write_text("took 5 ns\ntook 6 ns\n")
    (d / "a.txt").write_text("took 4 ns\n")
    (d / "c.txt").write_text("crashed\n")
    (d / ".hidden").write_text("took 999 ns\n")
    [ref] = import_path(store, d, "metric", metrics=[r"t:ns=took (\d+) ns"], name="mine")
    runs = store.runs(session_id=ref.id)
    assert [r["extra"]["file"] for r in runs] == ["a.txt", "b.txt", "c.txt"]
    assert [r["status"] for r in runs] == ["imported", "imported", "error"]
    assert store.resolve_series("mine:mine").values.tolist() == [4.0, 5.0, 6.0]

    with pytest.raises(UserError, match="matched nothing in the 3 files"):
        import_path(store, d, "metric", metrics=[r"t=never (\d+)"])
    with pytest.raises(UserError, match="has 2 groups"):
        import_path(store, d, "metric", metrics=[r"t=(took) (\d+)"])
    with pytest.raises(UserError, match="needs at least one --metric"):
        import_path(store, d, "metric")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no files"):
        import_path(store, empty, "metric", metrics=[r"t=(\d+)"])
    assert len(store.sessions()) == 1


# -- hyperfine ------------------------------------------------------------------------------

@needs_hyperfine
def test_hyperfine_import_keeps_times_codes_parameters_and_summary(store, tmp_path):
    out = _hyperfine(tmp_path, "--runs", "4", "--warmup", "1", "-i", "-P", "n", "0", "1",
                     "sh -c 'exit {n}'")
    doc = json.loads(out.read_text())
    [ref] = import_path(store, out, "hyperfine")
    benches = store.benchmarks(ref.id)
    assert [b["name"] for b in benches] == [r["command"] for r in doc["results"]]
    assert [b["parameters"] for b in benches] == [{"n": "0"}, {"n": "1"}]
    for bench, res in zip(benches, doc["results"]):
        runs = store.runs(benchmark_id=bench["id"])
        assert [r["wall_ns"] for r in runs] == [round(t * 1e9) for t in res["times"]]
        assert [r["exit_code"] for r in runs] == res["exit_codes"]
        assert all(r["user_ns"] is None and r["sys_ns"] is None for r in runs)
    statuses = [r["status"] for r in store.runs(session_id=ref.id)]
    assert statuses == ["ok"] * 4 + ["failed"] * 4
    summaries = store.get_session(ref.uid)["metadata"]["results"]
    assert summaries[0]["user"] == doc["results"][0]["user"]
    assert summaries[0]["mean"] == doc["results"][0]["mean"]


@needs_hyperfine
def test_hyperfine_export_round_trip_and_key_compatibility(store, tmp_path):
    out = _hyperfine(tmp_path, "--runs", "5", "true", "sleep 0.002")
    original = json.loads(out.read_text())
    [ref] = import_path(store, out, "hyperfine")
    exported = json.loads(export_sessions(store, [ref.uid], "hyperfine"))
    for ours, theirs in zip(exported["results"], original["results"]):
        assert set(ours) == set(theirs)
        assert ours["command"] == theirs["command"]
        assert np.allclose(ours["times"], theirs["times"], rtol=0, atol=1e-9)
        for key in ("mean", "median", "min", "max", "stddev"):
            assert ours[key] == pytest.approx(theirs[key], abs=1e-9)
        assert ours["user"] == theirs["user"] and ours["system"] == theirs["system"]
        assert ours["exit_codes"] == theirs["exit_codes"]
    # ...and back in: the same values
    again = tmp_path / "again.json"
    again.write_text(export_sessions(store, [ref.uid], "hyperfine"))
    [ref2] = import_path(store, again, "hyperfine")
    walls = lambda sid: [r["wall_ns"] for r in store.runs(session_id=sid)]  # noqa: E731
    assert walls(ref2.id) == walls(ref.id)


@needs_hyperfine
def test_markdown_export_matches_hyperfines_own_table(store, tmp_path):
    md = tmp_path / "h.md"
    js = tmp_path / "h.json"
    subprocess.run([HYPERFINE, "-N", "--style", "none", "--runs", "5", "--export-json", str(js),
                    "--export-markdown", str(md), "sleep 0.002", "sleep 0.01"],
                   check=True, capture_output=True, timeout=120)
    import_path(store, js, "hyperfine")
    assert export_sessions(store, [], "markdown").strip() == md.read_text().strip()


def test_hyperfine_export_of_measured_runs_uses_per_run_user_sys_and_skips_warmups(store):
    """A session written through the Store API exactly as the runner writes one."""
    sid = store.create_session("run", name="measured").id
    bid = store.add_benchmark(sid, "cmd", position=0, command="cmd --flag")
    store.add_run(sid, bid, seq=0, iteration=0, warmup=True,
                  fields={"status": "ok", "wall_ns": 99_000_000, "exit_code": 0})
    for i, (wall, user, sys_) in enumerate([(10_000_000, 4_000_000, 1_000_000),
                                            (12_000_000, 6_000_000, 3_000_000)]):
        store.add_run(sid, bid, seq=i + 1, iteration=i,
                      fields={"status": "ok", "wall_ns": wall + 500_000, "user_ns": user,
                              "sys_ns": sys_, "shell_overhead_ns": 500_000, "exit_code": 0})
    store.finish_session(sid, "complete")
    [res] = json.loads(export_sessions(store, ["measured"], "hyperfine"))["results"]
    assert res["times"] == [0.010, 0.012]
    assert res["mean"] == pytest.approx(0.011) and res["median"] == pytest.approx(0.011)
    assert res["user"] == pytest.approx(0.005) and res["system"] == pytest.approx(0.002)
    assert res["stddev"] == pytest.approx(np.std([0.010, 0.012], ddof=1))
    assert res["exit_codes"] == [0, 0] and "parameters" not in res


def test_hyperfine_export_refuses_unitless_samples(store, tmp_path):
    f = tmp_path / "u.csv"
    f.write_text("a,1\n")
    import_path(store, f, "csv")
    with pytest.raises(UserError, match="no wall times and no metric in a time unit"):
        export_sessions(store, [], "hyperfine")
    import_path(store, f, "csv", unit="ns", name="timed")
    [res] = json.loads(export_sessions(store, ["timed"], "hyperfine"))["results"]
    assert res["times"] == [1e-9]


# -- pyperf ---------------------------------------------------------------------------------

PYPERF_DOC = {
    "version": "1.0",
    "metadata": {"aslr": "Full randomization", "cpu_count": 2, "hostname": "box",
                 "perf_version": "2.6.2", "python_version": "3.11.7 (64-bit)",
                 "timer": "clock_gettime(CLOCK_MONOTONIC), resolution: 1.00 ns",
                 "unit": "second"},
    "benchmarks": [
        {"metadata": {"name": "sort", "loops": 1024, "inner_loops": 10},
         "runs": [
             {"metadata": {"calibrate_loops": 1024, "date": "2026-01-01 10:00:00.000000",
                           "duration": 0.5},
              "warmups": [[1, 2.0e-6], [2, 1.5e-6], [1024, 1.2e-6]]},
             {"metadata": {"date": "2026-01-01 10:00:01.000000", "duration": 0.4},
              "warmups": [[1024, 1.3e-6]], "values": [1.25e-6, 1.5e-6, 1.0e-6]},
             {"metadata": {"date": "2026-01-01 10:00:02.000000", "duration": 0.4},
              "warmups": [[1024, 1.4e-6]], "values": [1.75e-6, 1.0e-6, 1.25e-6]},
         ]},
        {"metadata": {"name": "json_dumps", "loops": 64},
         "runs": [{"metadata": {"date": "2026-01-01 10:00:03.000000"},
                   "values": [3.0e-5, 3.5e-5]}]},
    ],
}


@pytest.mark.parametrize("gz", [False, True])
def test_pyperf_runs_warmups_units_and_metadata(store, tmp_path, gz):
    text = json.dumps(PYPERF_DOC)
    if gz:
        path = tmp_path / "bench.json.gz"
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path = tmp_path / "bench.json"
        path.write_text(text)
    [ref] = import_path(store, path, "pyperf")
    sess = store.get_session(ref.uid)
    assert sess["name"] == "bench"
    assert sess["metadata"]["metadata"]["hostname"] == "box"
    assert sess["metadata"]["benchmarks"][0]["metadata"]["inner_loops"] == 10
    assert [b["name"] for b in store.benchmarks(ref.id)] == ["sort", "json_dumps"]
    assert store.metric_unit(ref.id, "value") == "ns"
    series = store.resolve_series(f"{ref.uid}:sort")
    assert np.allclose(series.values, [1250, 1500, 1000, 1750, 1000, 1250])
    sort_id = store.benchmarks(ref.id)[0]["id"]
    runs = store.runs(benchmark_id=sort_id)
    assert [(r["warmup"], r["iteration"]) for r in runs] == [(1, 0), (1, 1), (0, 1), (1, 2), (0, 2)]
    calib = store.samples_of_run(runs[0]["id"])["value"]
    assert np.allclose(calib, [2000, 1500, 1200])
    assert runs[0]["extra"]["warmup_loops"] == [1, 2, 1024]
    assert runs[2]["extra"]["loops"] == 1024 and runs[2]["extra"]["inner_loops"] == 10
    assert runs[2]["extra"]["metadata"]["duration"] == 0.4
    assert {r["status"] for r in runs} == {"imported"}


def test_pyperf_single_benchmark_file_with_name_in_file_metadata_and_old_format(store, tmp_path):
    """pyperf moves metadata common to all benchmarks (with one benchmark: its name, unit,
    loops) up to the file; format 6 stores raw warmup values."""
    doc = {"version": 6,
           "metadata": {"name": "bm_x", "unit": "second", "loops": 4, "inner_loops": 2},
           "benchmarks": [{"runs": [{"warmups": [[4, 8e-6]], "values": [1e-6, 2e-6]}]}]}
    f = tmp_path / "one.json"
    f.write_text(json.dumps(doc))
    [ref] = import_path(store, f, "pyperf")
    [bench] = store.benchmarks(ref.id)
    assert bench["name"] == "bm_x"
    warm, run = store.runs(benchmark_id=bench["id"])
    assert store.samples_of_run(warm["id"])["value"].tolist() == pytest.approx([1000.0])
    assert store.samples_of_run(run["id"])["value"].tolist() == pytest.approx([1000.0, 2000.0])
    doc["version"] = 3
    f.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="format version 3"):
        import_path(store, f, "pyperf")


def test_pyperf_wrong_and_damaged_files(store, tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"version": "1.0", "benchmarks": [{"runs": [{"values": [1, "x"]}]}]}')
    with pytest.raises(UserError, match=r"runs\[0\]: 'values' must be a list of numbers"):
        import_path(store, f, "pyperf")
    f.write_text('{"version": "1.0", "benchmarks": [\n  {"runs": [}\n]}')
    with pytest.raises(UserError, match="malformed JSON .* line 2 column 13"):
        import_path(store, f, "pyperf")
    assert store.sessions() == []


# -- Google Benchmark -----------------------------------------------------------------------

def _gb(name, rep, real, cpu, unit="us", **extra):
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
            "run_type": "iteration", "repetitions": 3, "repetition_index": rep, "threads": 1,
            "iterations": 1000, "real_time": real, "cpu_time": cpu, "time_unit": unit, **extra}


GBENCH_DOC = {
    "context": {"date": "2026-01-01T10:00:00+00:00", "host_name": "box",
                "executable": "./bench", "num_cpus": 2, "mhz_per_cpu": 3000,
                "cpu_scaling_enabled": False, "library_build_type": "release",
                "caches": [{"type": "Data", "level": 1, "size": 32768, "num_sharing": 1}],
                "load_avg": [0.1, 0.2, 0.3]},
    "benchmarks": [
        _gb("BM_sort/1024", 0, 12.5, 12.0, items_per_second=8.0e7),
        _gb("BM_sort/1024", 1, 13.0, 12.5, items_per_second=7.9e7),
        _gb("BM_sort/1024", 2, 12.0, 11.5, items_per_second=8.1e7),
        {**_gb("BM_sort/1024_mean", 0, 12.5, 12.0), "run_name": "BM_sort/1024",
         "run_type": "aggregate", "aggregate_name": "mean", "aggregate_unit": "time"},
        {**_gb("BM_sort/1024_stddev", 0, 0.5, 0.5), "run_name": "BM_sort/1024",
         "run_type": "aggregate", "aggregate_name": "stddev", "aggregate_unit": "time"},
        _gb("BM_copy", 0, 800, 790, unit="ns"),
        {**_gb("BM_fail", 0, 0, 0), "error_occurred": True, "error_message": "no input"},
        {**_gb("BM_skip", 0, 0, 0), "skipped": True, "skip_message": "needs AVX-512"},
    ],
}


def test_gbench_repetitions_units_counters_aggregates_and_errors(store, tmp_path):
    f = tmp_path / "gb.json"
    f.write_text(json.dumps(GBENCH_DOC))
    [ref] = import_path(store, f, "gbench")
    sess = store.get_session(ref.uid)
    assert sess["metadata"]["context"]["host_name"] == "box"
    assert [a["aggregate_name"] for a in sess["metadata"]["aggregates"]["BM_sort/1024"]] == \
        ["mean", "stddev"]
    assert [b["name"] for b in store.benchmarks(ref.id)] == ["BM_sort/1024", "BM_copy", "BM_fail",
                                                             "BM_skip"]
    real = store.resolve_series(f"{ref.uid}:BM_sort/1024", metric="real_time")
    assert real.unit == "ns" and real.values.tolist() == [12500.0, 13000.0, 12000.0]
    cpu = store.resolve_series(f"{ref.uid}:BM_copy", metric="cpu_time")
    assert cpu.values.tolist() == [790.0]
    # hyperfine JSON: the two timed benchmarks; the failed and skipped ones have no time at all
    hf = json.loads(export_sessions(store, [ref.uid], "hyperfine"))["results"]
    assert [(r["command"], r["times"]) for r in hf] == [
        ("BM_sort/1024", [1.25e-5, 1.3e-5, 1.2e-5]), ("BM_copy", [8e-7])]
    items = store.resolve_series(f"{ref.uid}:BM_sort/1024", metric="items_per_second")
    assert items.values.tolist() == [8.0e7, 7.9e7, 8.1e7] and items.unit == "1/s"
    runs = store.runs(session_id=ref.id)
    assert len(runs) == 6  # aggregates are not runs
    failed, skipped = runs[-2:]
    assert failed["status"] == "error" and failed["error"] == "no input"
    assert skipped["status"] == "error" and skipped["error"] == "skipped: needs AVX-512"
    assert store.samples_of_run(skipped["id"]) == {}
    assert runs[0]["extra"]["iterations"] == 1000


def test_json_formats_are_told_apart(store, tmp_path):
    gb = tmp_path / "gb.json"
    gb.write_text(json.dumps(GBENCH_DOC))
    with pytest.raises(UserError, match="looks like gbench JSON: use --format gbench"):
        import_path(store, gb, "hyperfine")
    with pytest.raises(UserError, match="use --format gbench"):
        import_path(store, gb, "pyperf")
    py = tmp_path / "py.json"
    py.write_text(json.dumps(PYPERF_DOC))
    with pytest.raises(UserError, match="use --format pyperf"):
        import_path(store, py, "gbench")
    [ref] = import_path(store, py)  # auto
    assert store.get_session(ref.uid)["metadata"]["format"] == "pyperf"
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(UserError, match="empty"):
        import_path(store, empty, "hyperfine")


# -- JSON export ----------------------------------------------------------------------------

def _validate(instance, schema, root, path="$"):
    """A small JSON Schema checker for the keywords docs/benchlab-export.schema.json uses
    (jsonschema is not a dependency)."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _validate(instance, target, root, path)
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "integer": int, "number": (int, float)}
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(isinstance(instance, types[t]) and not (t in ("integer", "number")
                 and isinstance(instance, bool)) for t in allowed)
        assert ok, f"{path}: {type(instance).__name__} is not {allowed}"
    if "const" in schema:
        assert instance == schema["const"], path
    if "enum" in schema:
        assert instance in schema["enum"], f"{path}: {instance!r}"
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            assert key in instance, f"{path}: missing {key}"
        props = schema.get("properties", {})
        for key, value in instance.items():
            if key in props:
                _validate(value, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                raise AssertionError(f"{path}: unexpected key {key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                _validate(value, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            _validate(item, schema["items"], root, f"{path}[{i}]")


def test_json_export_follows_the_documented_schema(store, tmp_path):
    schema = json.loads((REPO / "docs" / "benchlab-export.schema.json").read_text())
    gb = tmp_path / "gb.json"
    gb.write_text(json.dumps(GBENCH_DOC))
    import_path(store, gb, "gbench")
    py = tmp_path / "py.json"
    py.write_text(json.dumps(PYPERF_DOC))
    import_path(store, py, "pyperf")
    sid = store.create_session("run", name="measured", environment={"host": {"hostname": "h"}}).id
    bid = store.add_benchmark(sid, "cmd", position=0, command="cmd", argv=["cmd"])
    store.add_run(sid, bid, seq=0, iteration=0,
                  fields={"status": "ok", "wall_ns": 1000, "user_ns": 10, "sys_ns": 5,
                          "max_rss_kib": 1024, "exit_code": 0, "cpus": [0, 1]},
                  samples={"lat": [1.5, 2.5]},
                  measurements=[{"source": "cgroup", "name": "cpu.usage", "value": 7.0,
                                 "unit": "ns"},
                                {"source": "perf", "name": "cycles", "value": None,
                                 "status": "unsupported", "note": "no PMU"}])
    store.finish_session(sid, "complete")
    doc = json.loads(export_sessions(store, ["py", "gb", "measured"], "json"))
    _validate(doc, schema, schema)
    assert [s["name"] for s in doc["sessions"]] == ["py", "gb", "measured"]
    run = doc["sessions"][2]["benchmarks"][0]["runs"][0]
    assert run["samples"] == {"lat": [1.5, 2.5]} and run["wall_ns"] == 1000
    assert run["measurements"][1]["status"] == "unsupported"
    # a value the schema forbids is caught by the checker (the test can fail)
    doc["sessions"][0]["status"] = "weird"
    with pytest.raises(AssertionError):
        _validate(doc, schema, schema)


def test_export_of_empty_store_and_unknown_session(store):
    with pytest.raises(UserError, match="no sessions"):
        export_sessions(store, [], "csv")
    with pytest.raises(UserError, match="benchlab list"):
        export_sessions(store, ["nope"], "json")


# -- benchlab's own exports read back -------------------------------------------------------

def _measured_session(store: Store) -> int:
    """A session written through the Store API the way the runner writes one: warmups,
    interleaved runs, samples, measurements, a setup, an environment, a failed run."""
    env = {"host": {"hostname": "box"}, "cpu": {"model": "Test CPU"}}
    env_id = store.put_environment(env, "d1")
    setup_id = store.put_setup({"affinity": "core", "workers": 1})
    sid = store.create_session("run", name="measured", environment=env, environment_id=env_id,
                               protocol={"runs": 2, "warmup": 1}, command_line=["benchlab", "run"],
                               metadata={"note": "x"}, load_before=[0.1, 0.2, 0.3]).id
    store.add_metric(sid, "lat", unit="us", origin="regex", pattern=r"lat (\d+)")
    a = store.add_benchmark(sid, "a", position=0, command="./a", argv=["./a"],
                            parameters={"n": 1}, setup_id=setup_id)
    b = store.add_benchmark(sid, "b", position=1, command="./b", setup_id=setup_id)
    seq = 0
    for bench in (a, b):
        store.add_run(sid, bench, seq=seq, iteration=0, warmup=True, setup_id=setup_id,
                      fields={"status": "ok", "wall_ns": 5_000_000, "exit_code": 0})
        seq += 1
    for it in range(2):
        for bench, k in ((a, 1), (b, 2)):  # interleaved: a, b, a, b
            store.add_run(sid, bench, seq=seq, iteration=it, setup_id=setup_id,
                          fields={"status": "ok", "wall_ns": 1_000_000 * k + it + 300,
                                  "shell_overhead_ns": 300, "user_ns": 400_000 * k,
                                  "sys_ns": 100_000, "max_rss_kib": 2048, "minflt": 90,
                                  "majflt": 0, "nvcsw": 3, "nivcsw": 1, "exit_code": 0,
                                  "start_unix_ns": 1_700_000_000_000_000_000 + seq,
                                  "cpus": [0], "spawn_method": "exec-helper"},
                          samples={"lat": [10.5 * k, 11.0 * k]},
                          measurements=[{"source": "cgroup", "name": "cpu.usage_ns",
                                         "value": 123.0 * k, "unit": "ns"}])
            seq += 1
    store.add_run(sid, b, seq=seq, iteration=2,
                  fields={"status": "error", "error": "cannot exec ./b"})
    store.finish_session(sid, "complete", load_after=[0.3, 0.2, 0.1])
    return sid


def _comparable(doc: dict) -> list[dict]:
    """Session content without what legitimately differs in a copy (ids, times, provenance)."""
    out = []
    for s in doc["sessions"]:
        s = dict(s)
        for key in ("uid", "kind", "status", "created_utc", "finished_utc", "source",
                    "command_line"):
            s.pop(key)
        if isinstance(s.get("metadata"), dict):
            s["metadata"] = {k: v for k, v in s["metadata"].items() if k != "imported_from"}
        setups = s.pop("setups")
        for b in s["benchmarks"]:
            b["setup"] = setups.get(str(b.pop("setup_id")))
            for r in b["runs"]:
                r["setup"] = setups.get(str(r.pop("setup_id")))
        out.append(s)
    return out


def test_json_export_imports_back_as_an_identical_copy(store, tmp_path):
    _measured_session(store)
    first = export_sessions(store, ["measured"], "json")
    path = tmp_path / "copy.json"
    path.write_text(first)
    with Store.open(tmp_path / "other.db") as other:
        [ref] = import_path(other, path)  # auto-detected as json
        copy = other.get_session(ref.uid)
        assert copy["kind"] == "import" and copy["status"] == "complete"
        assert copy["metadata"]["imported_from"]["kind"] == "run"
        assert copy["environment_id"] is not None
        second = export_sessions(other, [ref.uid], "json")
        # interleaved execution order survives
        assert [r["seq"] for r in other.runs(session_id=ref.id)] == list(range(7))
    assert _comparable(json.loads(second)) == _comparable(json.loads(first))


def test_long_csv_export_imports_back_with_values_fields_and_measurements(store, tmp_path):
    sid = _measured_session(store)
    path = tmp_path / "long.csv"
    path.write_text(export_sessions(store, ["measured"], "csv"))
    with Store.open(tmp_path / "other.db") as other:
        [ref] = import_path(other, path, "csv")
        copy = other.get_session(ref.uid)
        assert copy["name"] == "measured" and copy["protocol"] == {"runs": 2, "warmup": 1}
        assert copy["environment"]["cpu"]["model"] == "Test CPU"
        orig_runs = [r for r in store.runs(session_id=sid) if r["status"] != "error"]
        new_runs = other.runs(session_id=ref.id)
        assert len(new_runs) == len(orig_runs) == 6  # the valueless error run cannot come back
        cols = ("seq", "iteration", "warmup", "status", "wall_ns", "shell_overhead_ns", "user_ns",
                "sys_ns", "max_rss_kib", "minflt", "majflt", "nvcsw", "nivcsw")
        assert [[r[c] for c in cols] for r in new_runs] == [[r[c] for c in cols] for r in orig_runs]
        for o, n in zip(orig_runs, new_runs):
            assert {k: v.tolist() for k, v in other.samples_of_run(n["id"]).items()} == \
                {k: v.tolist() for k, v in store.samples_of_run(o["id"]).items()}
            assert [(m["source"], m["name"], m["value"]) for m in other.measurements_of_run(n["id"])] == \
                [(m["source"], m["name"], m["value"]) for m in store.measurements_of_run(o["id"])]
        assert other.metric_unit(ref.id, "lat") == "us"


@needs_shared
def test_jaybeams_long_csv_round_trip_keeps_every_value(store, tmp_path):
    import_path(store, JAYBEAMS / "workstation-results.csv", "csv", unit="ns")
    path = tmp_path / "ws.csv"
    path.write_text(export_sessions(store, ["workstation-results"], "csv"))
    with Store.open(tmp_path / "other.db") as other:
        import_path(other, path, "csv")
        for label in ("map", "array"):
            a = store.resolve_series(f"workstation-results:{label}")
            b = other.resolve_series(f"workstation-results:{label}")
            assert np.array_equal(a.values, b.values) and b.unit == "ns"
        assert other.get_session("workstation-results")["metadata"]["comments"] == \
            store.get_session("workstation-results")["metadata"]["comments"]


def test_damaged_json_export_is_rejected_without_partial_sessions(store, tmp_path):
    _measured_session(store)
    doc = json.loads(export_sessions(store, ["measured"], "json"))
    doc["sessions"].append(json.loads(json.dumps(doc["sessions"][0])))
    del doc["sessions"][1]["benchmarks"][0]["runs"][0]["iteration"]
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    with Store.open(tmp_path / "other.db") as other:
        with pytest.raises(UserError, match=r"sessions\[1\] is damaged \(missing 'iteration'\)"):
            import_path(other, path, "json")
        assert other.sessions() == []
    doc["format_version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="format_version 99"):
        import_path(store, path, "json")


def test_failure_in_the_second_of_two_sessions_discards_the_first(store, tmp_path):
    _measured_session(store)
    path = tmp_path / "two.json"
    doc = json.loads(export_sessions(store, ["measured"], "json"))
    doc["sessions"] = [doc["sessions"][0], doc["sessions"][0]]
    path.write_text(json.dumps(doc))
    with Store.open(tmp_path / "other.db") as other:
        real_finish = other.finish_session
        finished = []

        def finish_then_fail(session_id, status, load_after=None):
            finished.append(session_id)
            if len(finished) == 2:
                raise UserError("database is locked (simulated)")
            return real_finish(session_id, status, load_after)

        other.finish_session = finish_then_fail
        with pytest.raises(UserError, match="simulated"):
            import_path(other, path, "json")
        assert len(finished) == 2 and other.sessions() == []
        assert other.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_old_gbench_without_run_type_and_csv_with_bom_and_crlf(store, tmp_path):
    old = {"context": {"date": "2017-01-01", "num_cpus": 2},
           "benchmarks": [{"name": "BM_a", "iterations": 10, "real_time": 2, "cpu_time": 1,
                           "time_unit": "ms"},
                          {"name": "BM_a", "iterations": 10, "real_time": 3, "cpu_time": 1,
                           "time_unit": "ms"},
                          {"name": "BM_a_mean", "iterations": 10, "real_time": 2.5,
                           "cpu_time": 1, "time_unit": "ms"}]}
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    [ref] = import_path(store, f, "gbench")
    assert store.resolve_series(f"{ref.uid}:BM_a", metric="real_time").values.tolist() == [2e6, 3e6]
    assert list(store.get_session(ref.uid)["metadata"]["aggregates"]) == ["BM_a"]
    c = tmp_path / "excel.csv"
    c.write_bytes("\ufeff# saved by a spreadsheet\r\nx,1\r\nx,2\r\n".encode())
    [ref] = import_path(store, c, "csv")
    assert store.get_session(ref.uid)["metadata"]["comments"] == ["# saved by a spreadsheet"]
    assert store.resolve_series("excel:x").values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("labels", [("café", "µs"), ("α-fast", "β-slow"), ("plain", "µs→ns")])
def test_label_value_csv_keeps_every_label_exactly_on_the_fast_path(store, tmp_path, labels):
    """The chunk parser reads labels as Latin-1 bytes: Latin-1 labels come back exact, others
    (Greek, arrows) take the line parser; either way labels, order and values are the file's."""
    rng = np.random.default_rng(5)
    values = {lab: np.round(rng.random(30_000) * 1000, 3) for lab in labels}
    path = tmp_path / "u.csv"
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(30_000):
            for lab in labels:
                fh.write(f"{lab},{float(values[lab][i])!r}\n")
    [ref] = import_path(store, path, "csv")
    names = [b["name"] for b in store.benchmarks(ref.id)]
    assert names == list(labels)
    for b in store.benchmarks(ref.id):
        got, _ = store.sample_values(b["id"], "value")
        assert got.tobytes() == values[b["name"]].tobytes()
