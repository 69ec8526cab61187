"""JMH's JSON (``-rf json``) read by its one parser, and ``run --harness jmh`` / ``import`` on
the real JMH.

The recorded files were written by JMH 1.37 (OpenJDK 17) from tests/harnesses/jmh_project,
heavy doing 3x light's work:
``java -jar target/benchmarks.jar -f 1 -wi 0 -i 2 -r 20ms -bm thrpt,avgt,ss -prof gc -tu us``
(jmh_modes.json) and ``... -i 2 -r 5ms -bm sample -tu us Work.light`` (jmh_sample.json).
"""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.formats import detect_format, parse_path
from benchlab.store.formats.reported import reported_of
from benchlab.units import higher_is_better
from tests.conftest import BENCHLAB
from tests.harnesses.toolchains import JMH_COMMAND, jmh_project

#: With tests/ci/test_ab_harness_jmh.py on one worker: JMH's lock (java.io.tmpdir/jmh.lock) is
#: machine-wide, and a second JMH started while one runs exits at once.
pytestmark = pytest.mark.xdist_group("jmh")

HERE = Path(__file__).resolve().parent
MODES = HERE / "jmh_modes.json"
SAMPLE = HERE / "jmh_sample.json"
HEAVY, LIGHT = "bench.Work.heavy/loops=1000", "bench.Work.light/loops=1000"


def _benchlab(*args, cwd=None):
    return subprocess.run([BENCHLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_every_mode_of_a_real_jmh_file():
    assert detect_format(MODES) == "jmh"
    imp = parse_path(MODES, "auto")[0]
    # one method and parameter set in three modes: the mode tells the benchmarks apart
    assert [b.name for b in imp.benchmarks] == [
        f"{name}/mode={mode}" for mode in ("thrpt", "avgt", "ss") for name in (HEAVY, LIGHT)]
    units = {m.name: m.unit for m in imp.metrics}
    assert units == {"thrpt": "ops/s", "avgt": "ns", "ss": "ns", "gc.alloc.rate": "MB/sec",
                     "gc.alloc.rate.norm": "B/op", "gc.count": "counts"}
    assert higher_is_better(units["thrpt"]) and not higher_is_better(units["avgt"])
    doc = json.loads(MODES.read_text())
    for entry, bench in zip(doc, imp.benchmarks):
        assert bench.parameters == {"loops": "1000"} and len(bench.runs) == 1  # one fork
        raw = entry["primaryMetric"]["rawData"][0]
        factor = 1e6 if entry["mode"] == "thrpt" else 1e3  # ops/us -> ops/s, us/op -> ns
        assert bench.runs[0].samples[entry["mode"]] == pytest.approx([v * factor for v in raw])
        assert len(bench.runs[0].samples["gc.alloc.rate.norm"]) == 2  # one per iteration
    assert imp.metadata["jvm"]["jmhVersion"] == "1.37"
    got = reported_of(imp).benchmarks
    assert len(got[f"{HEAVY}/mode=thrpt"]["thrpt"]) == 2 and "avgt" not in got[f"{HEAVY}/mode=thrpt"]
    score = {(e["benchmark"], e["mode"]): e["primaryMetric"]["score"] for e in doc}
    assert score["bench.Work.heavy", "thrpt"] < score["bench.Work.light", "thrpt"]


def test_sample_mode_iterations_are_the_means_of_their_histograms():
    imp = parse_path(SAMPLE, "jmh")[0]
    assert [b.name for b in imp.benchmarks] == [LIGHT]  # one mode: no /mode= in the name
    entry = json.loads(SAMPLE.read_text())[0]
    histogram = entry["primaryMetric"]["rawDataHistogram"][0]
    counts = [sum(c for _, c in it) for it in histogram]
    values = imp.benchmarks[0].runs[0].samples["sample"]
    assert len(values) == 2
    # JMH's score is the mean of every sample: the iterations' means weighted by their counts
    mean = sum(v * c for v, c in zip(values, counts)) / sum(counts)
    assert mean == pytest.approx(entry["primaryMetric"]["score"] * 1e3)
    units = {m.name: m.unit for m in imp.metrics}
    assert units["sample"] == "ns" and units["p0.50"] == "ns"


@pytest.mark.parametrize("doc, words", [
    ([], "holds no JMH results"),
    ([{"benchmark": "a.B.c"}], "not JMH JSON"),
    ([{"benchmark": "a.B.c", "mode": "fast", "primaryMetric": {}}], "mode 'fast'"),
    ([{"benchmark": "a.B.c", "mode": "avgt", "primaryMetric": {
        "scoreUnit": "us/op", "rawData": [[1.0, "NaN"]]}}], "'NaN' is not a finite number"),
    ([{"benchmark": "a.B.c", "mode": "avgt", "primaryMetric": {
        "scoreUnit": "furlongs", "rawData": [[1.0]]}}], "neither ops/TIME nor TIME/op"),
    ({"benchmarks": [], "context": {}}, "looks like gbench"),
])
def test_damaged_jmh_files_are_one_line_errors(tmp_path, doc, words):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=words):
        parse_path(path, "jmh")


def test_bad_jmh_input_exits_2_in_one_line(tmp_path, db_path):
    path = tmp_path / "r.json"
    path.write_text("[]")
    for args, words in ((["import", path, "--format", "jmh"], "no JMH results"),
                        (["run", "--harness", "jmh", "java -jar b.jar -rf csv"], "drop -rf")):
        proc = _benchlab(*args, "--db", db_path)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    if db_path.exists():  # nothing stored
        with Store.open(db_path, readonly=True) as store:
            assert store.sessions() == []


def _session(db, uid):
    """(benchmark names, metric -> unit, benchmark -> its avgt values) of a stored session."""
    with Store.open(db, readonly=True) as store:
        sess = store.get_session(uid)
        benches = {b["name"]: b for b in store.benchmarks(sess["id"])}
        units = {m: store.metric_unit(sess["id"], m) for b in benches.values()
                 for m in store.sample_metrics(b["id"])}
        avgt = {name: list(store.sample_values(b["id"], "avgt")[0])
                for name, b in benches.items()}
        return list(benches), units, avgt


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the first build fetches JMH and Maven's plugins (minutes)
def test_run_and_import_on_the_real_jmh(tmp_path, db_path):
    project = jmh_project()
    command = f"{JMH_COMMAND} -bm avgt -prof gc"
    proc = _benchlab("run", "--harness", "jmh", command, "-r", 1, "--json", "--db", db_path,
                     cwd=project)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)["session"]
    names, units, avgt = _session(db_path, run)
    assert names == [HEAVY, LIGHT]
    assert units["avgt"] == "ns" and units["gc.alloc.rate.norm"] == "B/op"
    assert len(avgt[HEAVY]) == len(avgt[LIGHT]) == 3  # every iteration is a sample
    # 3x the work; the median, as the first iteration (no warmup) runs while the JIT compiles
    assert statistics.median(avgt[HEAVY]) > statistics.median(avgt[LIGHT])
    show = _benchlab("show", run, "--db", db_path)
    assert show.returncode == 0 and HEAVY in show.stdout and "gc.alloc.rate.norm" in show.stdout
    # a file JMH wrote itself, of the command narrowed as a gate narrows it: light alone
    from benchlab.measure.harnesses import get_harness

    narrowed = get_harness("jmh").narrow(f"{JMH_COMMAND} -bm avgt", [LIGHT])
    out = tmp_path / "light.json"
    subprocess.run(f"{narrowed} -rf json -rff {out}", shell=True, cwd=project, check=True,
                   capture_output=True, timeout=600)
    imp = _benchlab("import", out, "--json", "--db", db_path)
    assert imp.returncode == 0, imp.stderr
    uid = json.loads(imp.stdout)["uid"]
    assert _session(db_path, uid)[0] == [LIGHT]
    cmp = _benchlab("compare", f"{run}:{LIGHT}/avgt", f"{uid}:{LIGHT}/avgt", "--db", db_path)
    assert cmp.returncode == 0, cmp.stderr


def test_a_jmh_benchmark_is_read_on_its_mode_by_default(tmp_path):
    """show, compare and history pick a JMH benchmark's own score (its mode's metric) among its
    profilers' metrics, as they pick Go's ns_per_op."""
    from benchlab.store.formats import import_path

    with Store.open(tmp_path / "b.db") as store:
        import_path(store, MODES)
        for mode, unit in (("thrpt", "ops/s"), ("avgt", "ns"), ("ss", "ns")):
            series = store.resolve_series(f"{LIGHT}/mode={mode}")
            assert (series.metric, series.unit, len(series.values)) == (mode, unit, 2)


def test_a_gate_takes_each_jmh_benchmark_on_the_mode_it_ran_in():
    """Without --metric a gate decides each benchmark on the first of thrpt, avgt, sample, ss
    that its first run reported (JMH writes one mode per result; a method run in several modes
    is one benchmark per mode); the other harnesses on their one metric."""
    from benchlab.measure.harnesses import get_harness

    jmh = get_harness("jmh")
    readings = {**reported_of(parse_path(MODES, "jmh")[0]).benchmarks,
                **reported_of(parse_path(SAMPLE, "jmh")[0]).benchmarks}
    assert {bench: jmh.default_metric(metrics) for bench, metrics in readings.items()} == {
        **{f"{name}/mode={mode}": mode for mode in ("thrpt", "avgt", "ss")
           for name in (HEAVY, LIGHT)}, LIGHT: "sample"}
    assert jmh.default_metric(["gc.alloc.rate.norm", "avgt", "thrpt"]) == "thrpt"
    # none of the modes: thrpt, which the gate then says the benchmark does not report
    assert jmh.default_metric(["gc.alloc.rate.norm"]) == "thrpt"
    assert get_harness("go").default_metric(["B_per_op", "ns_per_op"]) == "ns_per_op"
    assert get_harness("go").default_metric(["B_per_op"]) == "ns_per_op"


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the first build fetches JMH and Maven's plugins (minutes)
def test_a_gate_of_an_average_time_suite_needs_no_metric(tmp_path, db_path):
    """``gate --harness jmh`` of a suite run in average-time mode (``-bm avgt``), recorded and
    then gated against that record without ``--metric``: it gates avgt, what JMH reported.
    Both sides run the same code, so the outcome is noise (undecided, equivalent, or at most
    alpha/2 of the time slower) and is not asserted: the test asserts the gate ran and named
    the metric."""
    project = jmh_project()
    command = f"{JMH_COMMAND} -bm avgt Work.light"
    recorded = _benchlab("gate", "-q", "--harness", "jmh", "-r", 3, "--record", "main",
                         command, "--db", db_path, cwd=project)
    assert recorded.returncode == 0, recorded.stderr
    out = tmp_path / "g.json"
    res = _benchlab("gate", "--harness", "jmh", "-r", 3, "--baseline", "branch:main",
                    "--json", out, command, "--db", db_path, cwd=project)
    assert res.returncode in (0, 1), res.stderr
    decisions = json.loads(out.read_text())["benchmarks"]
    assert [(d["benchmark"], d["metric"], d["n_base"], d["n_head"]) for d in decisions] == [
        (LIGHT, "avgt", 3, 3)], decisions


@pytest.mark.parametrize("command, narrowed", [
    ("java -jar b.jar -f 1 -wi 0", "java -jar b.jar -f 1 -wi 0 RE"),
    # the command's own regexps give way; the options and their values stay
    ("java -Xmx1g -jar {root}/b.jar 'Work\\.l' -p loops=1,2 -e heavy X -i 3",
     "java -Xmx1g -jar {root}/b.jar  -p loops=1,2 -e heavy  -i 3 RE"),
    ("java -cp a.jar:b.jar org.openjdk.jmh.Main -f=1 Work", "java -cp a.jar:b.jar "
                                                              "org.openjdk.jmh.Main -f=1  RE"),
    ("./gradlew jmh", None),  # JMH run another way: every run runs them all
    ("java -jar b.jar && echo done", None),
    ("java -jar b.jar > log", None),
])
def test_narrowing_replaces_the_benchmark_regexps(command, narrowed):
    from benchlab.measure.harnesses import get_harness

    names = [LIGHT, f"{HEAVY}/mode=avgt", "bench.Work.light/loops=2000"]
    pattern = "'^(bench\\.Work\\.heavy|bench\\.Work\\.light)$'"
    got = get_harness("jmh").narrow(command, names)
    assert got == (narrowed.replace("RE", pattern) if narrowed else None)
