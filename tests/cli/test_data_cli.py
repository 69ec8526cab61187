"""`benchlab import/export/list/show` through Click's runner and the real console script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchlab.cli.main import cli
from benchlab.store import Store
from tests.conftest import assert_one_line_error, run_cli

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


@pytest.mark.skipif(HYPERFINE is None, reason="hyperfine is not installed")
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
        assert back.values.tolist() == orig.values.tolist()


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is absent")
def test_real_console_script_imports_jaybeams_and_resolves_series(db_path):
    proc = run_cli("import", str(SHARED_DATA / "jaybeams" / "workstation-results.csv"),
                   "--format", "csv", "--unit", "ns", "--json", db=db_path, check=True)
    info = json.loads(proc.stdout)
    assert info["samples"] == 70000 and info["runs"] == 2
    with Store.open(db_path) as store:
        assert len(store.resolve_series("workstation-results:array").values) == 35000
