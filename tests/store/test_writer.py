"""The one session writer on a real SQLite file, with real processes as session owners."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store import SessionWriter, Store
from benchlab.store.owner import process_start

ENV = {"host": {"hostname": "testhost"}, "cpu": {"model": "x"}}


def _python(code: str, db: Path) -> subprocess.Popen:
    """A real Python process running ``code`` with ``DB`` bound to the database path."""
    prog = "import sys, time\nDB = sys.argv[1]\n" + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", prog, str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_line(proc: subprocess.Popen, timeout: float = 30) -> str:
    line = proc.stdout.readline()
    assert line, f"child said nothing; stderr: {proc.stderr.read()}"
    return line.strip()


def test_create_records_owner_environment_and_finish_statuses(db_path):
    with Store.open(db_path) as store:
        w = SessionWriter.create(store, "run", name="n", command_line=["benchlab", "run"],
                                 protocol={"runs": 3}, environment=ENV, checks=[{"ok": True}],
                                 load_before=[0.1, 0.2, 0.3], metadata={"k": 1})
        row = store.get_session(w.ref.uid)
        assert row["status"] == "running" and row["owner_pid"] == os.getpid()
        assert row["owner_start"] == process_start(os.getpid())
        assert row["protocol"] == {"runs": 3} and row["system_checks"] == [{"ok": True}]
        bench = w.add_benchmark("./bm/x")
        bench2 = w.add_benchmark("second")
        assert [b["position"] for b in store.benchmarks(w.ref.id)] == [0, 1]
        w.add_metric("lat", unit="ns", origin="test")
        assert w.add_run(bench, iteration=0, fields={"status": "ok", "wall_ns": 10},
                         samples={"lat": [1.0, 2.0]}) > 0
        w.add_run(bench2, iteration=0, fields={"status": "ok", "wall_ns": 20})
        assert [r["seq"] for r in store.runs(session_id=w.ref.id)] == [0, 1]
        w.finish("done", load_after=[1, 2, 3])
        row = store.get_session(w.ref.uid)
        assert row["status"] == "complete" and row["finished_utc"] and row["load_after"] == [1, 2, 3]
        with pytest.raises(ValueError):
            w.finish("ok")
        # one environment row per fingerprint: a snapshot's own digest key is the fingerprint
        SessionWriter.create(store, "run", environment=ENV).finish("failed")
        SessionWriter.create(store, "run", environment={**ENV, "digest": "d1"}).finish("interrupted")
        SessionWriter.create(store, "run", environment={"other": 1, "digest": "d1"})
        n_env = store.conn.execute("SELECT COUNT(*) FROM environments").fetchone()[0]
        assert n_env == 2
        assert [s["status"] for s in store.sessions()][1:3] == ["interrupted", "failed"]


def test_killed_owner_reads_as_crashed_and_can_be_resumed(db_path):
    Store.open(db_path).close()
    child = _python("""
        from benchlab.store import SessionWriter, Store
        store = Store.open(DB)
        w = SessionWriter.create(store, "run", name="victim", environment={"a": 1})
        print(w.ref.uid, flush=True)
        time.sleep(60)
    """, db_path)
    uid = _wait_line(child)
    with Store.open(db_path, readonly=True) as store:
        assert store.get_session(uid)["status"] == "running"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    with Store.open(db_path) as store:
        row = store.get_session(uid)
        assert row["status"] == "crashed" and row["stored_status"] == "running"
        assert [s["status"] for s in store.sessions()] == ["crashed"]
        w = SessionWriter.resume(store, uid)
        assert store.get_session(uid)["status"] == "running"
        assert store.get_session(uid)["owner_pid"] == os.getpid()
        w.finish("done")


def test_recycled_pid_is_not_a_live_owner(db_path):
    """A live process with the recorded pid but another start time is not the owner."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        with Store.open(db_path) as store:
            w = SessionWriter.create(store, "run", environment=None)
            store.update_session(w.ref.id, owner_pid=sleeper.pid,
                                 owner_start=process_start(sleeper.pid))
            assert store.get_session(w.ref.uid)["status"] == "running"
            store.update_session(w.ref.id, owner_start="other-boot:12345")
            assert store.get_session(w.ref.uid)["status"] == "crashed"
            SessionWriter.resume(store, w.ref.uid).finish("done")
    finally:
        sleeper.kill()
        sleeper.wait()


def test_second_concurrent_resume_gets_one_line_error(db_path):
    with Store.open(db_path) as store:
        w = SessionWriter.create(store, "run", name="shared", environment=None)
        w.finish("interrupted")
        uid = w.ref.uid
    holder = _python(f"""
        from benchlab.store import SessionWriter, Store
        store = Store.open(DB)
        SessionWriter.resume(store, {uid!r})
        print("claimed", flush=True)
        time.sleep(60)
    """, db_path)
    try:
        assert _wait_line(holder) == "claimed"
        with Store.open(db_path) as store:
            with pytest.raises(UserError) as err:
                SessionWriter.resume(store, uid)
            msg = str(err.value)
            assert "\n" not in msg and f"process {holder.pid}" in msg
            assert store.get_session(uid)["owner_pid"] == holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_many_concurrent_resumes_exactly_one_wins(db_path):
    with Store.open(db_path) as store:
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
            print("lost", flush=True)
    """
    procs = [_python(code, db_path) for _ in range(4)]
    outcomes = [_wait_line(p) for p in procs]
    for p in procs:
        p.kill()
        p.wait()
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]


def test_env_key_is_the_users_kept_outside_every_store(tmp_path, monkeypatch):
    """The key is one per user, in a 0600 file, never in a store."""
    monkeypatch.setenv("BENCHLAB_ENV_KEY_FILE", str(tmp_path / "cfg" / "env-key"))
    with Store.open(tmp_path / "a.db") as a:
        key = a.env_key()
        assert isinstance(key, bytes) and len(key) == 32 and a.env_key() == key
        assert a.conn.execute("SELECT COUNT(*) FROM store_meta WHERE key = 'env_key'"
                              ).fetchone()[0] == 0
    assert (tmp_path / "cfg" / "env-key").stat().st_mode & 0o777 == 0o600
    with Store.open(tmp_path / "a.db", readonly=True) as a:
        assert a.env_key() == key
    with Store.open(tmp_path / "b.db") as b:
        assert b.env_key() == key


def test_nested_transaction_commits_once_or_not_at_all(db_path):
    with Store.open(db_path) as store:
        with pytest.raises(RuntimeError):
            with store.transaction():
                w = SessionWriter.create(store, "import", environment={"x": 1})
                w.add_run(w.add_benchmark("b"), iteration=0, fields={"status": "imported"})
                raise RuntimeError("mid-import failure")
        assert store.sessions() == []
        assert store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
        with store.transaction():
            w = SessionWriter.create(store, "import", environment=None)
            w.finish("done")
        assert [s["status"] for s in store.sessions()] == ["complete"]


def test_schema_1_store_is_migrated_and_its_running_sessions_read_crashed(db_path):
    import sqlite3

    from benchlab.store.schema import MIGRATIONS

    conn = sqlite3.connect(db_path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("INSERT INTO sessions (uid, kind, status, created_utc) VALUES "
                 "('aaaa1111', 'run', 'running', '2026-01-01T00:00:00Z')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store.open(db_path) as store:
        assert store.schema_version() >= 2
        assert store.get_session("aaaa1111")["status"] == "crashed"
        SessionWriter.resume(store, "aaaa1111").finish("done")
