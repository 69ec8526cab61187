"""Builds real benchlab SQLite stores with known data for the report tests.

Sessions are written with the store's public writer API (``create_session``, ``add_benchmark``,
``add_run``) into a real SQLite file; the values are drawn from fixed-seed distributions so the
tests know the truth (which command is faster, where a level shift is).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchlab.store.db import Store

BASE_ENV: dict[str, Any] = {
    "host": {"hostname": "lab1"},
    "os": {"kernel": {"release": "6.1.0-18-amd64", "version": "#1 SMP", "machine": "x86_64"}},
    "cpu": {"model": "Intel Xeon E5-2680 v4", "frequency": {"governor": "performance"},
            "smt": {"active": False}},
    "benchlab": {"version": "0.9.0"},
    "python": {"version": "3.11.7"},
    "git": {"commit": "0" * 40, "dirty": False},
}


def environment(**changes: Any) -> dict[str, Any]:
    """BASE_ENV with dotted-path changes, e.g. ``environment(**{"os.kernel.release": "6.5"})``."""
    env = copy.deepcopy(BASE_ENV)
    for path, value in changes.items():
        cur = env
        *head, last = path.split(".")
        for part in head:
            cur = cur.setdefault(part, {})
        cur[last] = value
    return env


def add_session(store: Store, benchmarks: dict[str, np.ndarray], *, name: str | None = None,
                env: dict | None = None, commands: dict[str, str] | None = None,
                warmup: dict[str, Sequence[float]] | None = None,
                failed: dict[str, str] | None = None, instructions: dict[str, float] | None = None,
                program_metric: str | None = None) -> str:
    """One complete session: a run per value (wall time in ns) of each benchmark.

    ``program_metric``: store the values as that program-reported metric (one run with all
    values as samples) instead of one harness run per value — fast for large series.
    ``failed``: benchmark -> stderr tail of one failed run. Returns the session uid.
    """
    ref = store.create_session("run", name=name, command_line=["benchlab", "run", "..."],
                               protocol={"runs": 10, "warmup": 1, "order": "interleaved"},
                               environment=env or environment())
    seq = 0
    for pos, (bench, values) in enumerate(benchmarks.items()):
        bid = store.add_benchmark(ref.id, bench, position=pos,
                                  command=(commands or {}).get(bench, f"./{bench} --size 1000"))
        for w in (warmup or {}).get(bench, ()):
            store.add_run(ref.id, bid, seq=seq, iteration=0, warmup=True,
                          fields={"status": "ok", "wall_ns": int(w), "exit_code": 0})
            seq += 1
        if program_metric:
            store.add_metric(ref.id, program_metric, unit="ns", origin="stdout")
            store.add_run(ref.id, bid, seq=seq, iteration=0, fields={"status": "ok",
                          "wall_ns": int(values.sum()), "exit_code": 0},
                          samples={program_metric: values})
            seq += 1
        else:
            for i, v in enumerate(values):
                meas = ([{"source": "perf", "name": "instructions",
                          "value": instructions[bench], "unit": "count"}]
                        if instructions and bench in instructions else [])
                store.add_run(ref.id, bid, seq=seq, iteration=i,
                              fields={"status": "ok", "wall_ns": int(v), "exit_code": 0,
                                      "user_ns": int(v * 0.9), "sys_ns": int(v * 0.05)},
                              measurements=meas)
                seq += 1
        if failed and bench in failed:
            store.add_run(ref.id, bid, seq=seq, iteration=len(values),
                          fields={"status": "failed", "exit_code": 3, "wall_ns": 1000,
                                  "extra": {"stderr_tail": failed[bench]}})
            seq += 1
    store.finish_session(ref.id, "complete")
    return ref.uid


def two_command_store(path: Path, *, n: int = 400, seed: int = 7) -> tuple[str, str]:
    """A store whose session 'pair' has 'fast' (10 ms) and 'slow' (10.5 ms, a 5 % shift),
    log-normal noise, a level shift at run 300 in 'slow', a warm-up and one failed run.
    Returns (session uid of the pair, uid of a second session of 'fast' on another kernel)."""
    rng = np.random.default_rng(seed)
    fast = 10e6 * rng.lognormal(0, 0.01, n)
    slow = 10.5e6 * rng.lognormal(0, 0.01, n)
    slow[300:] *= 1.03
    with Store.open(path) as store:
        uid = add_session(store, {"fast": fast, "slow": slow}, name="pair",
                          warmup={"fast": [14e6, 12e6], "slow": [15e6]},
                          failed={"slow": "slow: error: cannot open input.dat"},
                          instructions={"fast": 2.0e7, "slow": 2.1e7})
        other = add_session(store, {"fast": 10e6 * rng.lognormal(0, 0.01, n)}, name="newer",
                            env=environment(**{"os.kernel.release": "6.5.0-1-amd64"}))
    return uid, other
