"""The notebook API on a real store: docs/notebook.md is executed as written (its shell lines
run the real console script), and the DataFrames are checked against the store's rows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.store import SessionWriter, Store
from tests.conftest import BENCHLAB

DOC = Path(__file__).resolve().parents[2] / "docs" / "notebook.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_import_benchlab_stays_light():
    code = ("import sys, benchlab; "
            "print(sorted(m for m in sys.modules if m.startswith(('pandas', 'benchlab.store'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    missing = subprocess.run([sys.executable, "-c", "import benchlab; benchlab.nothing"],
                             capture_output=True, text=True)
    assert "has no attribute 'nothing'" in missing.stderr


@pytest.mark.slow
def test_docs_notebook_example_runs(tmp_path):
    shell, python = _blocks("sh"), _blocks("python")
    assert shell and len(python) == 3
    env = dict(os.environ, PATH=f"{Path(BENCHLAB).parent}{os.pathsep}{os.environ['PATH']}")
    for line in "\n".join(shell).splitlines():
        if line.strip():
            subprocess.run(shlex.split(line), cwd=tmp_path, env=env, check=True,
                           capture_output=True, timeout=300)
    for block in python:
        proc = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr


def test_tables_match_the_store(tmp_path):
    import benchlab

    db = tmp_path / "n.db"
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", name="nb", environment={"cpu": {"model": "X"},
                                                                        "host": {"hostname": "h"}})
        w.add_metric("lat", unit="us", origin="test")
        b = w.add_benchmark("./bm/a", command="./bm/a --fast")
        w.add_run(b, iteration=0, warmup=True, fields={"status": "ok", "wall_ns": 900})
        w.add_run(b, iteration=1, fields={"status": "ok", "wall_ns": 1000, "shell_overhead_ns": 100},
                  samples={"lat": [1.5, 2.5]})
        w.add_run(b, iteration=2, fields={"status": "failed", "exit_code": 3, "wall_ns": 50})
        w.finish("done")
        SessionWriter.create(store, "import", name="empty", environment=None).finish("failed")
    with benchlab.open(db) as results:
        s = results.sessions
        assert list(s.uid) == [w.ref.uid, s.uid.iloc[1]] and list(s.status) == ["complete", "failed"]
        assert s.n_runs.tolist() == [3, 0] and str(s.created_utc.dtype).startswith("datetime64")
        r = results.runs
        assert r.wall_ns.tolist() == [900, 900, 50] and r.wall_raw_ns.tolist() == [900, 1000, 50]
        assert r.warmup.tolist() == [True, False, False] and r.exit_code.iloc[2] == 3
        assert set(r.benchmark) == {"./bm/a"} and set(r.command) == {"./bm/a --fast"}
        smp = results.samples
        assert smp[["run", "metric", "unit", "index", "value"]].values.tolist() == [
            [1, "lat", "us", 0, 1.5], [1, "lat", "us", 1, 2.5]]
        e = results.environments
        assert e["cpu.model"].tolist() == ["X"] and e.hostname.tolist() == ["h"]
        assert s.environment_digest.iloc[0] == e.digest.iloc[0]
        # a new session shows up after refresh()
        with Store.open(db) as store:
            SessionWriter.create(store, "run", environment=None).finish("done")
        assert len(results.sessions) == 2
        results.refresh()
        assert len(results.sessions) == 3


def test_open_refuses_a_missing_store(tmp_path):
    import benchlab
    from benchlab.errors import UserError

    with pytest.raises(UserError, match="no database"):
        benchlab.open(tmp_path / "none.db")
