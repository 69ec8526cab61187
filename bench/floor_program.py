"""The least a Python tool of benchlab's design can do to measure ``/bin/true`` N times: a floor.

The goal is that ``benchlab run -q -N -r 100 /bin/true`` take at most twice as long as
``hyperfine -N -r 100 /bin/true``. This program does only what any tool of benchlab's design
must do, and nothing benchlab does beyond it (no options, environment, checks, cgroup tracking,
session rows, verdict): a fresh interpreter; the CLI library (``--no-click`` leaves it out); a
SQLite store in WAL mode; each run started with ``os.posix_spawn`` (glibc's
clone(CLONE_VM|CLONE_VFORK), as hyperfine's Rust and benchlab's helper start targets), waited
for with ``os.wait4`` (its rusage is the run's user/sys/max RSS), its wall time from
``perf_counter_ns``, and committed as one row the moment it ends (``--batch`` commits all the
rows at the end instead, the design's crash safety given up). ``--numpy`` also imports numpy
and takes the median of the wall times with it: the least a verdict between two commands costs
beyond the runs (its statistics are numpy's). ``bench/startup.py`` times it interleaved with
hyperfine and benchlab: its ratio to hyperfine is the lowest benchlab could reach.

Usage:  python bench/floor_program.py RUNS STORE [--no-click] [--batch] [--numpy]
"""

import os
import sys
import time

if "--no-click" not in sys.argv:
    import click  # noqa: F401 - the import is the cost being measured

import sqlite3


def main() -> None:
    runs, store = int(sys.argv[1]), sys.argv[2]
    batch = "--batch" in sys.argv
    con = sqlite3.connect(store, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE IF NOT EXISTS run (id INTEGER PRIMARY KEY, wall_ns INTEGER, "
                "user_us INTEGER, sys_us INTEGER, max_rss_kib INTEGER, status INTEGER)")
    devnull = os.open(os.devnull, os.O_RDWR)
    to_devnull = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
    argv = ["/bin/true"]
    rows = []
    if batch:
        con.execute("BEGIN")
    for _ in range(runs):
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=to_devnull)
        _, status, usage = os.wait4(pid, 0)
        wall_ns = time.perf_counter_ns() - start
        row = (wall_ns, round(usage.ru_utime * 1e6), round(usage.ru_stime * 1e6),
               usage.ru_maxrss, status)
        con.execute("INSERT INTO run VALUES (NULL, ?, ?, ?, ?, ?)", row)
        rows.append(row)
    if batch:
        con.execute("COMMIT")
    if "--numpy" in sys.argv:
        import numpy as np

        np.median(np.array([row[0] for row in rows], dtype=float))
    con.close()
    sys.stdout.flush()
    os._exit(0 if all(row[-1] == 0 for row in rows) else 1)


if __name__ == "__main__":
    main()
