"""Samples stored as blocks of little-endian doubles, and the migration that moved them there
(schema version 2 -> 3), on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from benchlab.store import Store
from benchlab.store.sample_blocks import BLOCK_VALUES, blocks_of, decode, join_blocks
from benchlab.store.schema import MIGRATIONS


def test_blocks_round_trip_bit_for_bit_and_split_at_the_block_size():
    values = np.array([-0.0, 5e-324, np.inf, 1 / 3] * (BLOCK_VALUES // 2 + 1))
    blocks = list(blocks_of(values, first_seq=7))
    assert [(first, n) for first, n, _ in blocks] == [
        (7, BLOCK_VALUES), (7 + BLOCK_VALUES, BLOCK_VALUES), (7 + 2 * BLOCK_VALUES, 4)]
    assert blocks[0][2][:8] == b"\x00" * 7 + b"\x80"  # -0.0, little-endian whatever the host
    back, seqs = join_blocks(blocks)
    assert back.tobytes() == values.tobytes()
    assert seqs.tolist() == list(range(7, 7 + len(values)))


def test_a_damaged_block_is_refused_not_misread():
    with pytest.raises(ValueError, match="doubles"):
        decode(b"\x00" * 12)
    with pytest.raises(ValueError, match="3 doubles"):
        decode(b"\x00" * 16, 3)
    with pytest.raises(ValueError, match="NaN"):
        list(blocks_of([1.0, float("nan")]))


def _version_2_store(url: str):
    """A store at schema version 2 (samples one row per value), written with the old SQL."""
    if url.startswith("postgresql://"):
        from benchlab.store.backends.pg_connection import connect

        conn = connect(url, False)
    else:
        conn = sqlite3.connect(url, isolation_level=None)
    for script in MIGRATIONS[:2]:
        for statement in (s.strip() for s in script.split(";")):
            if statement:
                conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    return conn


def test_version_2_samples_move_into_blocks_exactly(store_url, monkeypatch):
    """Two runs, two metrics, a gap in one metric's sequence numbers and a run without samples:
    after the upgrade every value is where it was (bit for bit, same seq) and ``samples`` is gone.
    Blocks of 1000 values here, so a few thousand rows (quick to write one by one to the
    server) span several blocks."""
    monkeypatch.setattr("benchlab.store.sample_blocks.BLOCK_VALUES", 1000)
    rng = np.random.default_rng(3)
    lat = rng.standard_normal(2_500) * 1e6  # three blocks
    tail = np.array([1.5, 2.5, 3.5])
    conn = _version_2_store(store_url)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO sessions (uid, kind, status, created_utc) VALUES"
                 " ('abcd1234', 'run', 'complete', '2026-11-22T00:00:00Z')")
    sid = conn.execute("SELECT id FROM sessions").fetchone()[0]
    conn.execute("INSERT INTO benchmarks (session_id, name, position) VALUES (?, 'b', 0)", (sid,))
    bid = conn.execute("SELECT id FROM benchmarks").fetchone()[0]
    for seq in range(3):
        conn.execute("INSERT INTO runs (benchmark_id, session_id, seq, iteration, status)"
                     " VALUES (?, ?, ?, ?, 'ok')", (bid, sid, seq, seq))
    r0, r1, r2 = [r[0] for r in conn.execute("SELECT id FROM runs ORDER BY seq").fetchall()]
    insert = "INSERT INTO samples (run_id, metric, seq, value) VALUES (?, ?, ?, ?)"
    conn.executemany(insert, [(r0, "lat", i, float(v)) for i, v in enumerate(lat)])
    conn.executemany(insert, [(r1, "ops", s, v) for s, v in zip((0, 1, 5), tail)])  # a gap
    conn.execute("COMMIT")
    conn.close()

    with Store.open(store_url) as store:
        assert store.schema_version() == len(MIGRATIONS) >= 3
        assert store.samples_of_run(r0)["lat"].tobytes() == lat.tobytes()
        assert store.conn.execute("SELECT COUNT(*) FROM sample_blocks WHERE run_id = ?",
                                  (r0,)).fetchone()[0] == 3
        assert store.samples_of_run(r1)["ops"].tolist() == tail.tolist()
        assert store.samples_of_run(r2) == {}
        blocks = store.conn.execute("SELECT first_seq, n FROM sample_blocks WHERE run_id = ?"
                                    " ORDER BY first_seq", (r1,)).fetchall()
        assert [tuple(b) for b in blocks] == [(0, 2), (5, 1)]
        assert store.conn.execute("SELECT SUM(n) FROM sample_blocks").fetchone()[0] == len(lat) + 3
        values, owners = store.sample_values(bid, "lat")
        assert values.tobytes() == lat.tobytes() and set(owners.tolist()) == {r0}
        with pytest.raises(sqlite3.Error):
            store.conn.execute("SELECT COUNT(*) FROM samples").fetchone()
