"""The team store: the same store API on SQLite and on a real PostgreSQL server (tests/store/
conftest.py starts a throwaway cluster with initdb/pg_ctl), concurrent writer processes,
the resume claim, and ``benchlab store copy`` both ways verified by digests."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.store import SessionWriter, Store
from benchlab.store.copy import copy_sessions, session_content
from benchlab.store.formats import import_path
from benchlab.store.schema import SCHEMA_VERSION
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error

ENV = {"host": {"hostname": "testhost"}, "cpu": {"model": "x"}}


def _python(code: str, url: str, *args: str) -> subprocess.Popen:
    """A real Python process running ``code`` with ``DB`` bound to the store URL."""
    prog = "import sys, time\nDB = sys.argv[1]\n" + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", prog, url, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _fill(store: Store, name: str, n_runs: int = 3, n_samples: int = 5) -> SessionWriter:
    w = SessionWriter.create(store, "run", name=name, command_line=["benchlab", "run", "x"],
                             protocol={"runs": n_runs}, environment=ENV, metadata={"k": "100%"})
    setup = store.put_setup({"cpus": [0, 1], "workers": 1})
    b = w.add_benchmark("./bm/x:1", command="x --n 1", argv=["x", "--n", "1"],
                        parameters={"n": 1}, setup_id=setup)
    w.add_metric("lat", unit="ns", origin="test", pattern=r"lat (\d+)")
    rng = np.random.default_rng(len(name))
    for i in range(n_runs):
        w.add_run(b, iteration=i, warmup=i == 0, setup_id=setup,
                  fields={"status": "ok", "wall_ns": 2**40 + i, "user_ns": 5, "cpus": [0, 1],
                          "extra": {"note": "é\ttab"}},
                  samples={"lat": rng.random(n_samples) * 1e3},
                  measurements=[{"source": "cgroup", "name": "cpu_ns", "value": 1.25, "unit": "ns"},
                                {"source": "perf", "name": "cycles", "value": None,
                                 "status": "unsupported", "note": "no PMU"}])
    w.finish("done", load_after=[0.5, 0.25, 0.125])
    return w


def test_same_store_api_on_both_backends(store_url):
    with Store.open(store_url) as store:
        assert store.schema_version() == SCHEMA_VERSION and store.integrity_ok()
        w = _fill(store, "first")
        row = store.get_session(w.ref.uid)
        assert row["status"] == "complete" and row["metadata"] == {"k": "100%"}
        assert row["load_after"] == [0.5, 0.25, 0.125] and store.sessions()[0]["n_runs"] == 3
        runs = store.runs(session_id=w.ref.id)
        assert [r["seq"] for r in runs] == [0, 1, 2] and runs[0]["wall_ns"] == 2**40
        assert runs[0]["warmup"] == 1 and runs[0]["extra"] == {"note": "é\ttab"}
        assert store.samples_of_run(runs[1]["id"])["lat"].shape == (5,)
        ms = store.measurements_of_run(runs[1]["id"])
        assert [(m["source"], m["status"]) for m in ms] == [("cgroup", "ok"), ("perf", "unsupported")]
        # INSERT OR REPLACE of a metric is an upsert on both backends
        w2 = SessionWriter(store, w.ref)
        w2.add_metric("lat", unit="us", origin="test")
        assert store.metrics(w.ref.id)[0]["unit"] == "us"
        series = store.resolve_series("./bm/x:1/lat")
        assert series.values.shape == (10,) and series.unit == "us"  # warmup run left out
        assert store.find_session(w.ref.uid[:5])["uid"] == w.ref.uid
        assert store.find_session("fir%") is None  # LIKE wildcards are literal, as on SQLite
        # environments deduplicated by fingerprint
        _fill(store, "second")
        assert store.conn.execute("SELECT COUNT(*) FROM environments").fetchone()[0] == 1
        # a duplicate benchmark name is the same one-line UserError
        with pytest.raises(UserError, match="two benchmarks are named"):
            w2.add_benchmark("./bm/x:1")
        key = store.env_key()
        assert len(key) == 32 and store.env_key() == key  # the user's key file
    with Store.open(store_url, readonly=True) as store:
        assert [s["name"] for s in store.sessions()] == ["second", "first"]
        assert store.env_key() == key


def test_nested_transaction_rolls_back_on_both(store_url):
    with Store.open(store_url) as store:
        with pytest.raises(RuntimeError):
            with store.transaction():
                w = SessionWriter.create(store, "import", environment={"x": 1})
                w.add_run(w.add_benchmark("b"), iteration=0, fields={"status": "imported"},
                          samples={"v": np.arange(2000.0)})
                raise RuntimeError("mid-import failure")
        assert store.sessions() == []
        assert store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0] == 0


def test_import_of_a_csv_on_both(store_url, tmp_path):
    f = tmp_path / "r.csv"
    rows = [f"b{i % 2},{i}.5" for i in range(3000)]
    f.write_text("\n".join(rows) + "\n")
    with Store.open(store_url) as store:
        [ref] = import_path(store, f, "csv")
        with pytest.raises(UserError, match="already imported"):
            import_path(store, f, "csv")
        series = store.resolve_series(f"{ref.uid}:b1")
        assert len(series.values) == 1500 and series.values[0] == 1.5


def _concurrent_writers(url: str, same_session: bool, n_procs: int = 4, n_runs: int = 30) -> None:
    with Store.open(url) as store:
        w = SessionWriter.create(store, "run", name="shared", environment=ENV)
        bench = w.add_benchmark("b")
        uid, bench_id = w.ref.uid, bench
    code = f"""
        from benchlab.store import SessionWriter, Store
        from benchlab.store.db import SessionRef
        store = Store.open(DB)
        if {same_session!r}:
            s = store.get_session({uid!r})
            w, bench = SessionWriter(store, SessionRef(s["id"], s["uid"])), {bench_id}
        else:
            w = SessionWriter.create(store, "run", name="own", environment={ENV!r})
            bench = w.add_benchmark("b")
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range({n_runs}):
            w.add_run(bench, iteration=i, fields={{"status": "ok", "wall_ns": i}},
                      samples={{"v": [float(i)] * 3}})
        print("done", flush=True)
    """
    procs = [subprocess.Popen([sys.executable, "-c", "import sys\nDB = sys.argv[1]\n" +
                               textwrap.dedent(code), url], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n_procs)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:  # release them together
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            assert p.stdout.readline().strip() == "done", p.stderr.read()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    with Store.open(url, readonly=True) as store:
        if same_session:
            seqs = [r["seq"] for r in store.runs(session_id=store.get_session(uid)["id"])]
            assert sorted(seqs) == list(range(n_procs * n_runs))  # none lost, none twice
        else:
            own = [s for s in store.sessions() if s["name"] == "own"]
            assert len(own) == n_procs and all(s["n_runs"] == n_runs for s in own)
            for s in own:
                assert [r["seq"] for r in store.runs(session_id=s["id"])] == list(range(n_runs))
        total = store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0]
        assert total == 3 * n_procs * n_runs


@pytest.mark.slow
@pytest.mark.parametrize("same_session", [True, False], ids=["one-session", "own-sessions"])
def test_concurrent_writer_processes_lose_nothing(store_url, same_session):
    _concurrent_writers(store_url, same_session)


def test_many_concurrent_resumes_exactly_one_wins_on_postgres(pg_url):
    with Store.open(pg_url) as store:
        w = SessionWriter.create(store, "run", environment=None)
        w.finish("interrupted")
        uid = w.ref.uid
    code = f"""
        from benchlab.errors import UserError
        from benchlab.store import SessionWriter, Store
        store = Store.open(DB)
        try:
            SessionWriter.resume(store, {uid!r})
            print("won", flush=True)
            time.sleep(5)
        except UserError as e:
            print("lost " + str(e), flush=True)
    """
    procs = [_python(code, pg_url) for _ in range(4)]
    outcomes = []
    for p in procs:
        line = p.stdout.readline().strip()
        assert line, p.stderr.read()
        outcomes.append(line.split()[0])
    for p in procs:
        p.kill()
        p.wait()
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]


def test_store_copy_both_ways_verified_and_idempotent(pg_url, tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with Store.open(a) as store:
        parent = _fill(store, "parent")
        child = SessionWriter.create(store, "run", name="child", environment={"other": 1},
                                     parent=parent.ref)
        child.add_run(child.add_benchmark("c"), iteration=0, fields={"status": "ok"},
                      samples={"v": np.linspace(0, 1, 3000)})
        child.finish("done")
        digests = {s["uid"]: session_content(store, s["id"])[0] for s in store.sessions()}
    out = run_cli("store", "copy", str(a), pg_url, check=True).stdout
    printed = dict(re.findall(r"^(\w{8})\s+copied\s.*sha256 (\w{64})", out, re.M))
    assert printed == digests, out
    again = run_cli("store", "copy", str(a), pg_url, check=True).stdout
    assert "0 sessions copied, 2 already" in again
    with Store.open(pg_url, readonly=True) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2
        assert store.conn.execute("SELECT COALESCE(SUM(n), 0) FROM sample_blocks").fetchone()[0] == 3 * 5 + 3000
        kid = store.get_session("child")
        assert store.get_session(kid["parent_id"])["uid"] == parent.ref.uid
    # and back, one session chosen, into a fresh SQLite file
    out = run_cli("store", "copy", pg_url, str(b), "-s", "parent", check=True).stdout
    assert f"{parent.ref.uid}  copied" in out and digests[parent.ref.uid] in out
    with Store.open(b) as back:
        assert [s["uid"] for s in back.sessions()] == [parent.ref.uid]
        with Store.open(pg_url) as pg:
            assert [c.action for c in copy_sessions(pg, back)] == ["present", "copied"]
        assert {s["uid"]: session_content(back, s["id"])[0] for s in back.sessions()} == digests
        # a session that differs under the same uid is refused before anything is written
        back.update_session(back.get_session("child")["id"], name="renamed")
    proc = run_cli("store", "copy", str(a), str(b))
    assert_one_line_error(proc, "different content", child.ref.uid)


def test_unreachable_postgres_is_one_line(tmp_path):
    url = f"postgresql://nobody@/nodb?host={tmp_path}"
    proc = run_cli("list", db=url)
    assert_one_line_error(proc, "cannot connect to PostgreSQL", "BENCHLAB_DB")
    proc = run_cli("store", "copy", url, str(tmp_path / "x.db"))
    assert_one_line_error(proc, "cannot connect")
    assert not (tmp_path / "x.db").exists()


def test_cli_on_postgres_through_env_and_psycopg_only_when_asked(pg_url, tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("a,1\na,2\nb,3\n")
    proc = run_cli("import", str(f), "--format", "csv", env={"BENCHLAB_DB": pg_url})
    assert proc.returncode == 0, proc.stderr
    listed = run_cli("list", env={"BENCHLAB_DB": pg_url}, check=True).stdout
    assert "r" in listed and "import" in listed
    code = ("import sys; from benchlab.store import Store; Store.open(sys.argv[1]).close(); "
            "print('psycopg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.db")], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


def test_bulk_samples_are_bit_exact_on_both(store_url):
    """Sample blocks (BLOB on SQLite, BYTEA on PostgreSQL) keep every double bit for bit,
    -0.0, infinities and subnormals included, with a metric name holding a tab, a backslash
    and non-ASCII text; NaN is refused on both."""
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.standard_normal(150_000) * 1e300, rng.random(60_000) * 1e-310,
                             [5e-324, 0.0, -0.0, 1.7976931348623157e308, np.inf, -np.inf, 0.1, 1 / 3]])
    metric = "lat\tµs\\x"
    with Store.open(store_url) as store:
        w = SessionWriter.create(store, "run", environment=None)
        run = w.add_run(w.add_benchmark("b"), iteration=0, fields={"status": "ok"})
        store.add_samples_bulk(run, {metric: values, "second": values[:3]})
        back = store.samples_of_run(run)
        assert back[metric].tobytes() == values.tobytes()  # subnormals included
        assert back["second"].tobytes() == values[:3].tobytes()
        seqs = [seq for first, n in store.conn.execute(
            "SELECT first_seq, n FROM sample_blocks WHERE run_id = ? AND metric = ?"
            " ORDER BY first_seq", (run, metric)) for seq in range(first, first + n)]
        assert seqs == list(range(len(values)))  # across the 65,536-value blocks
        with pytest.raises(ValueError, match="NaN"):
            store.add_samples_bulk(run, {"bad": [1.0, float("nan")]})
        assert "bad" not in store.samples_of_run(run)
        if store.backend.name == "postgres":  # written by COPY, stored without pglz (doubles barely compress)
            (storage,) = store.conn.raw.execute(
                "SELECT attstorage FROM pg_attribute WHERE attrelid = 'sample_blocks'::regclass"
                " AND attname = 'data'").fetchone()
            assert storage == "e"


def test_run_show_export_on_postgres(pg_url, tmp_path):
    """The measuring path end to end into the team store: run, show, export, analyze."""
    env = {"BENCHLAB_DB": pg_url}
    proc = run_cli("run", "-r", "3", "-w", "1", "-n", "t", "true", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = run_cli("show", "--json", env=env, check=True).stdout
    assert '"name": "t"' in shown
    out = tmp_path / "e.csv"
    run_cli("export", "--format", "csv", "-o", str(out), env=env, check=True)
    assert out.read_text().count(",t,") >= 3
    run_cli("analyze", "t", env=env, check=True)
    with Store.open(pg_url, readonly=True) as store:
        [session] = store.sessions()
        runs = store.runs(session_id=session["id"])
        assert [r["seq"] for r in runs] == list(range(4)) and sum(r["warmup"] for r in runs) == 1
