"""A run's stored row is the same whatever INSERT wrote it (the INSERT leaves
out the columns whose value is None -- NULL by default -- because binding None costs Python's
sqlite3 two raised and cleared AttributeErrors a value). Each row is compared, column by column
(all but ``id``), with the row the old statement wrote: every column named, None bound as NULL.
And the rows a real ``benchlab run`` stores hold what the runs did. Real SQLite files.
"""

from __future__ import annotations

import sqlite3

import pytest

from benchlab.store import SessionWriter, Store
from benchlab.store.rows import RUN_COLUMNS
from tests.conftest import run_cli

FULL = {"status": "failed", "exit_code": 3, "signal": None, "error": None,
        "start_unix_ns": 1_700_000_000_000_000_000, "start_mono_ns": 5, "end_mono_ns": 905,
        "wall_ns": 900, "user_ns": 0, "sys_ns": 350_000, "max_rss_kib": 1536, "minflt": 71,
        "majflt": 0, "nvcsw": 1, "nivcsw": 0, "shell_overhead_ns": 120, "cpus": "0,1",
        "spawn_method": "exec-helper", "extra": {"descendants_killed": 2, "note": [1, "x"]}}
PLAIN = {**FULL, "status": "ok", "exit_code": 0, "shell_overhead_ns": None, "cpus": None,
         "extra": None}
ERROR = {"status": "error", "exit_code": None, "signal": None,
         "error": "exec failed: No such file or directory ('nope')", "wall_ns": 0,
         "spawn_method": "exec-helper", "extra": {"stderr_tail": ""}}
FIELD_SETS = [FULL, PLAIN, ERROR, {"status": "ok"}, {"status": "signaled", "signal": 9}]


def _old_insert(conn: sqlite3.Connection, session: int, bench: int, seq: int, setup_id, fields):
    """The INSERT every run was written with before: all columns named, None bound as NULL."""
    from benchlab.store.connection import canonical_json

    cols = ["benchmark_id", "session_id", "seq", "iteration", "warmup", "worker", "setup_id",
            *fields]
    vals = [bench, session, seq, seq, 0, 1, setup_id,
            *(canonical_json(v) if isinstance(v, (dict, list, tuple)) else v
              for v in fields.values())]
    conn.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                 vals)


def _row(conn: sqlite3.Connection, seq: int) -> tuple:
    names = ("benchmark_id", "session_id", "iteration", "warmup", "worker", "setup_id",
             *RUN_COLUMNS)
    return conn.execute(f"SELECT {', '.join(names)} FROM runs WHERE seq = ?", (seq,)).fetchone()


@pytest.mark.parametrize("setup", [True, False], ids=["setup", "no-setup"])
def test_each_row_is_the_one_the_old_insert_wrote(db_path, setup):
    with Store.open(str(db_path)) as store:
        w = SessionWriter.create(store, "run", environment=None)
        bench = w.add_benchmark("b")
        setup_id = store.put_setup({"affinity": None}) if setup else None
        for k, fields in enumerate(FIELD_SETS):
            ours, theirs, in_one = 3 * k, 3 * k + 1, 3 * k + 2
            store.add_run(w.ref.id, bench, seq=ours, iteration=ours, worker=1,
                          setup_id=setup_id, fields=fields)
            _old_insert(store.conn, w.ref.id, bench, theirs, setup_id, fields)
            store.conn.commit()
            # the transaction path (a run with samples) writes the same row
            store.add_run(w.ref.id, bench, seq=in_one, iteration=in_one, worker=1,
                          setup_id=setup_id, fields=fields, samples={"m": [1.0]})
            mine, old, samples_path = (_row(store.conn, s) for s in (ours, theirs, in_one))
            # iteration is the seq in both, so it differs by one: compare the rest
            assert mine[:2] + mine[3:] == old[:2] + old[3:] == samples_path[:2] + samples_path[3:]
            assert (mine[2], old[2]) == (ours, theirs)


def test_a_missing_status_fails_as_binding_null_did(db_path):
    with Store.open(str(db_path)) as store:
        w = SessionWriter.create(store, "run", environment=None)
        bench = w.add_benchmark("b")
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL constraint failed: runs.status"):
            store.add_run(w.ref.id, bench, seq=0, iteration=0, fields={"status": None})
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL constraint failed: runs.status"):
            _old_insert(store.conn, w.ref.id, bench, 0, None, {"status": None})


def test_a_real_session_stores_what_its_runs_did(db_path):
    run_cli("run", "-q", "-N", "-r", "2", "-w", "1", "-i", "/bin/true", "sh -c 'exit 3'",
            db=db_path, check=True)
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    rows = conn.execute("SELECT b.name, r.* FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id"
                        " ORDER BY r.seq").fetchall()
    conn.close()
    assert sorted((r["name"], -r["warmup"], r["iteration"]) for r in rows) == [
        ("/bin/true", -1, 0), ("/bin/true", 0, 0), ("/bin/true", 0, 1),
        ("sh -c 'exit 3'", -1, 0), ("sh -c 'exit 3'", 0, 0), ("sh -c 'exit 3'", 0, 1)]
    for r in rows:
        true = r["name"] == "/bin/true"
        assert (r["status"], r["exit_code"], r["signal"], r["error"]) == (
            ("ok", 0, None, None) if true else ("failed", 3, None, None))
        assert (r["worker"], r["shell_overhead_ns"], r["cpus"], r["spawn_method"], r["extra"]) \
            == (0, None, None, "exec-helper", None)
        assert r["setup_id"] is not None and r["session_id"] == rows[0]["session_id"]
        assert r["wall_ns"] > 0 and r["end_mono_ns"] - r["start_mono_ns"] == r["wall_ns"]
        assert r["start_unix_ns"] > 1_600_000_000 * 10**9 and 0 < r["max_rss_kib"] < 65536
        assert min(r["user_ns"], r["sys_ns"], r["minflt"], r["majflt"], r["nvcsw"],
                   r["nivcsw"]) >= 0 and r["minflt"] > 0
