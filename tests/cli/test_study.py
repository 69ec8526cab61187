"""`benchlab study` and `benchlab study report` on real processes, cgroups and workers."""

from __future__ import annotations

import csv
import signal
import subprocess
import time
from pathlib import Path

import pytest

from benchlab.report.study import parallel_run_ratio
from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error

SUITE = """
[study]
name = "tiny"
runs = 4
warmup = 0
seed = 3

[[workload]]
name = "exp_float"
builtin = "exp_float"
args = ["100000"]

[[workload]]
name = "gray2bin"
builtin = "gray2bin"
args = ["100000"]

[matrix]
isolation = ["bare", "cgroup"]
workers = [1, 2]
"""


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def _long_runs(text: str) -> str:
    """``text`` with runs of ~0.1 s instead of ~5 ms, for the tests that interrupt a study:
    with ~5 ms runs the whole study took under 2 s, and a poller slowed by a loaded machine
    could miss the window between "enough runs stored" and "study complete"."""
    return text.replace('args = ["100000"]', 'args = ["3000000"]')


def test_builtin_study_runs_every_cell_and_reports_seed_000_tables(db_path, tmp_path):
    """The small built-in suite (2 workloads x bare/cgroup x 1/2 workers x two affinities)."""
    proc = run_cli("study", "--builtin", db=db_path, check=True, timeout=300)
    uid = proc.stdout.split()[1]
    with Store.open(db_path) as store:
        study = store.get_session(uid)
        assert study["kind"] == "study" and study["status"] == "complete"
        cells = study["metadata"]["cells"]
        assert len(cells) == 8
        order = study["metadata"]["order"]
        assert sorted(order) == sorted(cells) and order != sorted(order)
        for info in cells.values():
            sess = store.get_session(info["session"])
            runs = store.runs(session_id=sess["id"], include_warmup=False)
            assert len(runs) == 2 * 6 * info["cell"]["workers"]
            assert {r["worker"] for r in runs} == set(range(info["cell"]["workers"]))
            # both views of every run: harness rusage and the program's own timing line
            for r in runs:
                s = store.samples_of_run(r["id"])
                assert s["self_wall"][0] > 0 and s["self_cpu"][0] > 0
                assert r["wall_ns"] > s["self_wall"][0]
    out = tmp_path / "report"
    run_cli("study", "report", uid, "-o", str(out), "--resamples", "300", db=db_path, check=True)
    report = (out / "report.md").read_text()
    for heading in ("Mean and sd per group", "Comparisons per family", "Harness vs program",
                    "Parallel-run ratio", "Correlation with CPU time"):
        assert heading in report
    families = list(csv.DictReader(open(out / "families.csv")))
    fams = {row["family"] for row in families}
    assert fams == {"isolation: cgroup vs bare", "workers: 2 vs 1",
                    "affinity: cores-rr:0,1 vs none"}
    for row in families:
        # 2 workloads x 2 x 2 levels of the other two factors = 8 groups per family and metric
        assert sum(int(row[k]) for k in ("higher", "lower", "same", "overlap")) == 8
    groups = list(csv.DictReader(open(out / "groups.csv")))
    assert len(groups) == 8 * 2 * 4  # cells x workloads x (cpu, wall, self_cpu, self_wall)
    for g in groups:
        assert float(g["mean_lo"]) <= float(g["mean_ns"]) <= float(g["mean_hi"])
    ratios = list(csv.DictReader(open(out / "parallel.csv")))
    # 0 is a ratio too: on a loaded machine one worker can end its last run before the other
    # ends its first (no parallel time), and the outcome must not follow the load.
    assert len(ratios) == 4 and all(0 <= float(r["parallel_run_ratio"]) <= 1 for r in ratios)
    errors = list(csv.DictReader(open(out / "errors.csv")))
    assert {e["time"] for e in errors} == {"wall", "cpu"}
    assert all(float(e["relative_error"]) >= 0 for e in errors)
    assert all(p.stat().st_size > 1000 for p in out.glob("cpu_by_cell-*.png"))  # per workload
    assert len(list(out.glob("cpu_by_cell-*.png"))) == 2


def _scratch_of(pid: int) -> list[str]:
    """Scratch directories (/tmp/benchlab-*-p<pid>-*) of one benchlab process."""
    import glob
    import tempfile

    return glob.glob(f"{tempfile.gettempdir()}/benchlab-*-p{pid}-*")


def test_study_resumes_after_kill_9(db_path, tmp_path):
    suite = _suite(tmp_path, _long_runs(SUITE.replace("runs = 4", "runs = 6")))
    proc = subprocess.Popen([BENCHLAB, "study", str(suite), "--db", str(db_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if not db_path.exists():
            continue
        try:
            with Store.open(db_path, readonly=True) as store:
                runs = sum(s["n_runs"] for s in store.sessions())
        except Exception:
            continue
        if runs >= 20:
            break
    proc.kill()
    proc.wait()
    with Store.open(db_path) as store:
        study = next(s for s in store.sessions() if s["kind"] == "study")
        before = sum(s["n_runs"] for s in store.sessions())
    # its process is gone: the study (and the cell it was running) reads as crashed
    assert study["status"] == "crashed" and before >= 20
    run_cli("study", "run", "--resume", study["uid"], db=db_path, check=True, timeout=300)
    assert not _scratch_of(proc.pid), "the resume left the killed study's scratch directory"
    with Store.open(db_path) as store:
        study = store.get_session(study["uid"])
        assert study["status"] == "complete"
        total = sum(len(store.runs(session_id=store.get_session(c["session"])["id"]))
                    for c in study["metadata"]["cells"].values())
    assert total == 2 * 6 * (1 + 2) * 2  # workloads x runs x (1 + 2 workers) x isolations


def test_parallel_run_ratio_follows_seed_000():
    # two workers, three iterations each, fully overlapped except a 10 ns stagger
    runs = [{"worker": w, "start_unix_ns": 100 * i + 10 * w, "wall_ns": 100}
            for w in (0, 1) for i in range(3)]
    # total = 310 - 0; parallel = first result of a last iteration (300) - last result of
    # a first iteration (110)
    assert parallel_run_ratio(runs) == pytest.approx(190 / 310)
    assert parallel_run_ratio([r for r in runs if r["worker"] == 0]) is None


@pytest.mark.parametrize("text,needle", [
    ("[study]\nruns = 3\n", "no [[workload]]"),
    ("[[workload]]\nname = 'x'\nbuiltin = 'nope'\n", "no bundled workload"),
    ("[[workload]]\nname = 'x'\ncommand = 'true'\n[matrix]\ncolour = ['red']\n", "colour"),
    ("not toml at all [", "not valid TOML"),
])
def test_bad_suites_are_one_line_errors(db_path, tmp_path, text, needle):
    proc = run_cli("study", str(_suite(tmp_path, text)), db=db_path)
    assert_one_line_error(proc, needle)


def test_report_of_a_non_study_session_is_refused(db_path):
    run_cli("run", "--runs", "2", "true", db=db_path, check=True)
    with Store.open(db_path) as store:
        uid = store.sessions()[0]["uid"]
    assert_one_line_error(run_cli("study", "report", uid, db=db_path), "not a study")


def test_sigterm_interrupts_a_study_which_then_resumes_to_every_cell(db_path, tmp_path):
    suite = _suite(tmp_path, _long_runs(SUITE.replace('isolation = ["bare", "cgroup"]',
                                                      'isolation = ["bare"]')
                                        .replace("runs = 4", "runs = 6")))
    proc = subprocess.Popen([BENCHLAB, "study", str(suite), "--db", str(db_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            with Store.open(db_path, readonly=True) as store:
                if sum(s["n_runs"] for s in store.sessions()) >= 6:
                    break
        except Exception:
            continue
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "study run --resume" in err and "Traceback" not in err
    with Store.open(db_path) as store:
        study = next(s for s in store.sessions() if s["kind"] == "study")
        assert study["status"] == "interrupted"
        assert all(s["status"] != "running" for s in store.sessions())
    assert not _scratch_of(proc.pid)
    # cells that ran here finish here: a cluster option on the resume is refused, unchanged
    for flag in (["--lost-after", "30s"], ["--cluster", "local:1"]):
        refused = run_cli("study", "run", "--resume", study["uid"], *flag, db=db_path)
        assert_one_line_error(refused, "did not run on a cluster", flag[0])
        with Store.open(db_path) as store:
            assert store.get_session(study["uid"])["status"] == "interrupted"
    run_cli("study", "run", "--resume", study["uid"], db=db_path, check=True, timeout=300)
    with Store.open(db_path) as store:
        study = store.get_session(study["uid"])
        assert study["status"] == "complete"
        total = sum(len(store.runs(session_id=store.get_session(c["session"])["id"]))
                    for c in study["metadata"]["cells"].values())
    assert total == 2 * 6 * (1 + 2)  # workloads x runs x (1 + 2 workers)
