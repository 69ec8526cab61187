"""`benchlab import/export/list/show` through Click's runner and the real console script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchlab.cli.main import cli
from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, needs_tool

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / ".." / "shared" / "data"
HYPERFINE = shutil.which("hyperfine")


def invoke(*args: str, db: Path):
    result = CliRunner().invoke(cli, [*args, "--db", str(db)], catch_exceptions=False)
    return result


@pytest.fixture
def csv_file(tmp_path: Path) -> Path:
    f = tmp_path / "results.csv"
    f.write_text("# host: box\nbook_type,nanoseconds\nmap,100\narray,40\nmap,120\narray,50\n")
    return f


def test_import_list_show_export_with_click_runner(db_path, csv_file, tmp_path):
    res = invoke("import", str(csv_file), "--format", "csv", db=db_path)
    assert res.exit_code == 0, res.output
    assert "2 benchmarks, 2 runs, 4 samples" in res.output
    uid = res.output.split("session ")[1].split()[0]

    res = invoke("list", "--json", db=db_path)
    [row] = json.loads(res.output)
    assert (row["uid"], row["name"], row["kind"], row["status"]) == (uid, "results", "import",
                                                                     "complete")
    assert (row["n_benchmarks"], row["n_runs"]) == (2, 2)
    res = invoke("list", db=db_path)
    assert res.exit_code == 0 and uid in res.output and "results" in res.output

    res = invoke("show", "results", db=db_path)
    assert res.exit_code == 0
    assert "imported 1" in res.output and "import:csv" in res.output
    info = json.loads(invoke("show", uid, "--json", db=db_path).output)
    assert info["metadata"]["comments"] == ["# host: box"]
    assert [b["runs"] for b in info["benchmarks"]] == [{"imported": 1}, {"imported": 1}]
    assert info["metrics"] == [{"name": "value", "unit": "ns", "origin": "import:csv",
                                "pattern": None}]

    out = tmp_path / "out.csv"
    res = invoke("export", "--format", "csv", "-o", str(out), db=db_path)  # newest session
    assert res.exit_code == 0 and res.output == ""
    rows = [l for l in out.read_text().splitlines() if not l.startswith("#")]
    assert rows[1:] == [f"{uid},map,0,0,0,imported,value,100,ns",
                        f"{uid},map,0,0,0,imported,value,120,ns",
                        f"{uid},array,1,0,0,imported,value,40,ns",
                        f"{uid},array,1,0,0,imported,value,50,ns"]
    doc = json.loads(invoke("export", uid, "--format", "json", db=db_path).output)
    assert doc["format"] == "benchlab-export" and doc["sessions"][0]["uid"] == uid
    md = invoke("export", "--format", "markdown", db=db_path).output
    assert "| `map` | 110.0 ± 14.1 | 100.0 | 120.0 | 2.44 ± 0.50 |" in md
    hf = json.loads(invoke("export", "--format", "hyperfine", db=db_path).output)
    assert [r["command"] for r in hf["results"]] == ["map", "array"]
    assert hf["results"][1]["times"] == [4e-8, 5e-8]


def test_metric_import_via_cli_names_the_benchmark(db_path, tmp_path):
    d = tmp_path / "outputs"
    d.mkdir()
    for i, v in enumerate([30, 10, 20]):
        (d / f"run{i}.log").write_text(f"starting\nRESULT {v} us\ndone\n")
    res = invoke("import", str(d), "--format", "metric", "--metric", r"lat:us=RESULT (\d+) us",
                 "--name", "client", db=db_path)
    assert res.exit_code == 0, res.output
    with Store.open(db_path) as store:
        series = store.resolve_series("client")
        assert series.values.tolist() == [30.0, 10.0, 20.0] and series.unit == "us"


def test_bad_input_through_click_runner_is_exit_2_without_traceback(db_path, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,1\na,x\n")
    res = CliRunner().invoke(cli, ["import", str(bad), "--format", "csv", "--db", str(db_path)])
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0 and "line 2" in res.stderr
    assert "Traceback" not in res.output + res.stderr
    res = CliRunner().invoke(cli, ["import", str(bad), "--format", "csv", "--metric", "x=(1)",
                                   "--db", str(db_path)])
    assert res.exit_code == 2 and "--metric applies to --format metric only" in res.stderr
    with Store.open(db_path) as store:
        assert store.sessions() == []


@pytest.mark.parametrize("kind", ["malformed_csv", "missing", "json", "groups", "never"])
def test_real_console_script_bad_input_single_line_exit_2(db_path, tmp_path, kind):
    bad = tmp_path / "input.csv"
    if kind == "malformed_csv":
        bad.write_text("# comment\nmap,1\nmap,oops\n")
        args, needles = [str(bad), "--format", "csv"], ["line 3", "not a number"]
    elif kind == "missing":
        args, needles = [str(tmp_path / "nope.json"), "--format", "hyperfine"], ["no such file"]
    elif kind == "json":
        bad.write_text('{"results": [\n{"command": "x", "times": [1,]}]}')
        args, needles = [str(bad), "--format", "hyperfine"], ["malformed JSON", "line 2"]
    elif kind == "groups":
        args, needles = [str(tmp_path), "--format", "metric", "--metric", "x=(a)(b)"], \
            ["has 2 groups; it needs exactly one ("]
    else:
        (tmp_path / "out.log").write_text("nothing to see\n")
        args, needles = [str(tmp_path), "--format", "metric", "--metric", r"x=value (\d+)"], \
            ["matched nothing"]
    proc = run_cli("import", *args, db=db_path)
    assert_one_line_error(proc, *needles)
    if db_path.exists():
        with Store.open(db_path) as store:
            assert store.sessions() == []


def test_real_console_script_export_errors(db_path, tmp_path):
    proc = run_cli("list", db=db_path)
    assert_one_line_error(proc, "no database")
    csv_file = tmp_path / "r.csv"
    csv_file.write_text("a,1\n")
    run_cli("import", str(csv_file), "--format", "csv", db=db_path, check=True)
    proc = run_cli("export", "--format", "csv", "-o", str(tmp_path / "no" / "dir" / "x.csv"),
                   db=db_path)
    assert_one_line_error(proc, "cannot write")
    proc = run_cli("export", "ghost", db=db_path)
    assert_one_line_error(proc, "no session 'ghost'")
    proc = run_cli("export", "--format", "hyperfine", db=db_path)
    assert_one_line_error(proc, "hyperfine JSON holds seconds")


@needs_tool("hyperfine")
def test_export_of_a_real_benchlab_run_reads_back_as_hyperfine_json(db_path, tmp_path):
    run_cli("run", "--runs", "3", "-n", "t", "true", db=db_path, check=True)
    out = tmp_path / "h.json"
    run_cli("export", "--format", "hyperfine", "-o", str(out), db=db_path, check=True)
    doc = json.loads(out.read_text())
    [res] = doc["results"]
    assert res["command"] == "t" and len(res["times"]) == 3
    assert res["user"] is not None and res["exit_codes"] == [0, 0, 0]
    run_cli("import", str(out), "--format", "hyperfine", "--name", "back", db=db_path, check=True)
    with Store.open(db_path) as store:
        orig = store.resolve_series(f"{store.sessions()[1]['uid']}:t")
        back = store.resolve_series("back:t")
        # the export clamps a shell-corrected time at 0, as hyperfine does (`true` is a shell
        # builtin and can finish faster than the median empty shell measured before)
        assert back.values.tolist() == [max(v, 0.0) for v in orig.values.tolist()]


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is absent")
def test_real_console_script_imports_jaybeams_and_resolves_series(db_path):
    proc = run_cli("import", str(SHARED_DATA / "jaybeams" / "workstation-results.csv"),
                   "--format", "csv", "--unit", "ns", "--json", db=db_path, check=True)
    info = json.loads(proc.stdout)
    assert info["samples"] == 70000 and info["runs"] == 2
    with Store.open(db_path) as store:
        assert len(store.resolve_series("workstation-results:array").values) == 35000


# -- seeing results again -----------------------------------------------------

def _measured(db: Path, names_and_walls: dict[str, list[float]], *, name: str = "measured",
              failed_stderr: str | None = None, finish: str | None = "done") -> str:
    """A session written through the real session writer (walls in ns)."""
    from benchlab.store import SessionWriter

    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", name=name, environment=None,
                                 command_line=["benchlab", "run", *names_and_walls])
        for bench, walls in names_and_walls.items():
            bid = w.add_benchmark(bench, command=bench)
            for i, wall in enumerate(walls):
                w.add_run(bid, iteration=i, fields={"status": "ok", "wall_ns": int(wall)})
            if failed_stderr is not None:
                w.add_run(bid, iteration=len(walls), fields={
                    "status": "failed", "exit_code": 3, "wall_ns": 1000,
                    "extra": {"stderr_tail": failed_stderr}})
        if finish:
            w.finish(finish)
        return w.ref.uid


@pytest.mark.slow
def test_show_defaults_to_newest_with_timings_verdict_and_failed_stderr(db_path):
    import numpy as np

    rng = np.random.default_rng(3)
    _measured(db_path, {"old": [5e6] * 5}, name="older")
    uid = _measured(db_path, {"./bm/fast": rng.normal(10e6, 1e5, 30),
                              "./bm/slow": rng.normal(13e6, 1e5, 30)},
                    failed_stderr="line one\nsegfault in frobnicate()")
    proc = run_cli("show", db=db_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert uid in out and "older" not in out
    assert "./bm/fast" in out and "median" in out and "ms" in out
    assert "./bm/fast ran 1.3" in out and "faster than ./bm/slow" in out
    assert "segfault in frobnicate()" in out and "exit code 3" in out
    data = json.loads(run_cli("show", uid, "--json", db=db_path, check=True).stdout)
    assert [s["name"] for s in data["summaries"]] == ["./bm/fast", "./bm/slow"]
    assert data["summaries"][0]["wall"]["n"] == 30
    assert data["failed_runs"][0]["stderr_tail"].endswith("frobnicate()")
    assert data["verdict_lines"] and "faster" in data["verdict_lines"][1]
    assert data["verdict"]["baseline"] == "./bm/fast"  # the structured verdict (docs/verdict.md)
    assert data["verdict"]["candidates"][0]["outcome"] == "slower"


def test_list_shows_commands_and_crashed_sessions_with_resume_command(db_path):
    import signal
    import subprocess
    import sys

    _measured(db_path, {"sleep 0.1": [1e8] * 3, "sleep 0.2": [2e8] * 3})
    code = ("import sys, time\nfrom benchlab.store import SessionWriter, Store\n"
            "s = Store.open(sys.argv[1])\n"
            "w = SessionWriter.create(s, 'run', name='dies', environment=None)\n"
            "w.add_benchmark('true', command='true')\nprint(w.ref.uid, flush=True)\ntime.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(db_path)], stdout=subprocess.PIPE,
                             text=True)
    uid = child.stdout.readline().strip()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    proc = run_cli("list", db=db_path, check=True)
    assert "sleep 0.1; sleep 0.2" in proc.stdout
    assert f"session {uid} crashed" in proc.stdout
    assert f"benchlab run --resume {uid} --db {db_path}" in proc.stdout
    rows = json.loads(run_cli("list", "--json", db=db_path, check=True).stdout)
    assert rows[0]["status"] == "crashed" and rows[0]["resume"].startswith("benchlab run --resume")
    assert rows[1]["commands"] == ["sleep 0.1", "sleep 0.2"] and rows[1]["resume"] is None
    show = run_cli("show", uid, db=db_path, check=True)
    assert "crashed" in show.stdout and f"--resume {uid}" in show.stdout


@pytest.mark.parametrize("name", ["a%b", "a_b", "100%", "null", "BM_x/8/threads:2", "./bm/x"])
def test_selectors_match_names_exactly(db_path, name):
    """Wildcard characters are literal, `null` is a name, `/` and `:` may be in names."""
    _measured(db_path, {name: [1e6] * 3, "decoy-" + name: [2e6] * 3,
                        name.replace("%", "X").replace("_", "Y") + "z": [3e6] * 3},
              name=name)
    with Store.open(db_path, readonly=True) as store:
        series = store.resolve_series(name)
        assert series.benchmark == name and list(series.values) == [1e6] * 3
        assert store.resolve_series(f"{name}/wall").benchmark == name
        uid = store.get_session(name)["uid"]
        assert store.resolve_series(f"{uid}:{name}").benchmark == name
        assert store.resolve_series(f"{uid}:{name}/cpu").metric == "cpu"
    proc = run_cli("show", name, "--json", db=db_path, check=True)
    assert json.loads(proc.stdout)["name"] == name


def test_wildcards_do_not_match_other_sessions(db_path):
    _measured(db_path, {"x": [1.0] * 3}, name="abc")
    with Store.open(db_path, readonly=True) as store:
        for key in ("a%", "a_c", "%", "____"):
            assert store.find_session(key) is None
    assert_one_line_error(run_cli("show", "a%", db=db_path), "no session 'a%'")


def test_ambiguous_uid_prefix_lists_the_candidates(db_path):
    from benchlab.store import SessionWriter

    with Store.open(db_path) as store:
        uids = []
        for i in range(2):
            w = SessionWriter.create(store, "run", name=f"s{i}", environment=None)
            uids.append(w.ref.uid)
        # give both the same 4-character prefix
        for i, uid in enumerate(uids):
            store.conn.execute("UPDATE sessions SET uid = ? WHERE uid = ?", (f"beef{i}000", uid))
    proc = run_cli("show", "beef", db=db_path)
    assert_one_line_error(proc, "ambiguous", "beef0000 (s0)", "beef1000 (s1)")
    assert run_cli("show", "beef1", "--json", db=db_path, check=True).returncode == 0


@pytest.mark.slow
def test_default_store_is_per_user_unless_a_project_store_exists(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    for d in (home, project, elsewhere):
        d.mkdir()
    env = {"HOME": str(home), "XDG_DATA_HOME": "", "BENCHLAB_DB": ""}
    csv = tmp_path / "r.csv"
    csv.write_text("a,1\n")
    proc = run_cli("import", str(csv), cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    user_db = home / ".local" / "share" / "benchlab" / "benchlab.db"
    assert user_db.is_file() and not (project / "benchlab.db").exists()
    # found from any directory
    assert '"name": "r"' in run_cli("list", "--json", cwd=elsewhere, env=env, check=True).stdout
    # a project-local store takes precedence when present
    Store.open(project / "benchlab.db").close()
    assert run_cli("list", "--json", cwd=project, env=env, check=True).stdout.strip() == "[]"
    # XDG_DATA_HOME moves the per-user store; BENCHLAB_DB and --db override everything
    xdg = tmp_path / "xdg"
    run_cli("import", str(csv), "--name", "x", cwd=elsewhere, check=True,
            env={**env, "XDG_DATA_HOME": str(xdg)})
    assert (xdg / "benchlab" / "benchlab.db").is_file()
    other = tmp_path / "other.db"
    run_cli("import", str(csv), cwd=project, env={**env, "BENCHLAB_DB": str(other)}, check=True)
    assert other.is_file()
