"""A run faster than the shell's measured start-up cost: every reader gives 0, never a negative
time (hyperfine clamps the same way), and the raw wall time is kept.

Before one definition (store.rows.corrected_wall_ns / corrected_wall_sql), the analysis and the
notebook stored-series readers gave -200 ns here while the exports gave 0.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np

import benchlab
from benchlab.store import SessionWriter, Store
from benchlab.store.formats import export_sessions


def _session(db) -> tuple[str, int]:
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", name="fast", environment=None)
        b = w.add_benchmark("true", command="true")
        for i, wall in enumerate((100, 1300, 1000)):
            w.add_run(b, iteration=i, fields={"status": "ok", "wall_ns": wall,
                                              "shell_overhead_ns": 300})
        w.add_run(b, iteration=3, fields={"status": "error", "wall_ns": None,
                                          "shell_overhead_ns": 300})
        w.finish("done")
        return w.ref.uid, b


def test_every_reader_clamps_a_run_faster_than_the_shell_at_zero(tmp_path):
    db = tmp_path / "b.db"
    uid, bench = _session(db)
    with Store.open(db) as store:
        values, _ids = store.harness_values(bench, "wall")
        assert values.tolist() == [0, 1000, 700]
        raw, _ = store.harness_values(bench, "wall_raw")
        assert raw.tolist() == [100, 1300, 1000]
        hyperfine = json.loads(export_sessions(store, [uid], "hyperfine"))
        assert hyperfine["results"][0]["times"] == [0, 1e-6, 7e-7]
        text = export_sessions(store, [uid], "csv")
        table = [line for line in text.splitlines() if not line.startswith("#")]
        rows = [r for r in csv.DictReader(io.StringIO("\n".join(table))) if r["metric"] == "wall"]
        assert [r["value"] for r in rows] == ["0", "1000", "700"]
    with benchlab.open(db) as results:
        walls = results.runs.wall_ns.tolist()
        assert walls[:3] == [0, 1000, 700] and np.isnan(walls[3])
