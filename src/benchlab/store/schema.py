"""The store's schema and its migrations.

The schema version lives in SQLite's ``PRAGMA user_version``. ``MIGRATIONS[i]`` upgrades a
database from version ``i`` to ``i + 1``: an SQL script, or a function of the connection when
data must be rewritten. Each runs in one transaction, so a crash mid-migration leaves the
previous version intact. Never edit a released migration: append a new one.

Data model (one way: run -> store -> analyse -> report)::

    environments  one row per distinct machine+software fingerprint (deduplicated by digest)
    setups        one row per distinct execution setup: affinity, cgroup limits, isolation,
                  workers, load, shell (deduplicated by digest)
    sessions      one invocation of benchlab that measured or imported something: its protocol
                  (enough to resume it), status, full environment snapshot, system checks,
                  load before/after, metadata (e.g. '#' lines of an imported CSV)
    benchmarks    one command (or imported label) within a session, with its parameters
    runs          one execution of a benchmark: the harness's view (wall, user, sys, peak RSS,
                  faults, context switches, exit status), the worker and CPUs it ran on
    measurements  further per-run measurements by source: cgroup accounting, perf events,
                  an external isolator's meta file; unsupported values are stored as such
    sample_blocks values the program reported about itself during a run (its own view), as
                  blocks of little-endian doubles (see :mod:`benchlab.store.sample_blocks`);
                  until schema version 3, one row per value in table ``samples``
    metrics       name, unit and origin of each program-reported metric in a session
"""

from __future__ import annotations

from typing import Any, Callable

SCHEMA_V1 = """
CREATE TABLE environments (
    id        INTEGER PRIMARY KEY,
    digest    TEXT NOT NULL UNIQUE,
    hostname  TEXT,
    data      TEXT NOT NULL
);

CREATE TABLE setups (
    id      INTEGER PRIMARY KEY,
    digest  TEXT NOT NULL UNIQUE,
    data    TEXT NOT NULL
);

CREATE TABLE sessions (
    id              INTEGER PRIMARY KEY,
    uid             TEXT NOT NULL UNIQUE,
    name            TEXT,
    kind            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    created_utc     TEXT NOT NULL,
    finished_utc    TEXT,
    command_line    TEXT,
    protocol        TEXT,
    environment_id  INTEGER REFERENCES environments(id),
    environment     TEXT,
    system_checks   TEXT,
    load_before     TEXT,
    load_after      TEXT,
    metadata        TEXT,
    source          TEXT
);
CREATE INDEX sessions_name ON sessions(name);

CREATE TABLE benchmarks (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    command     TEXT,
    argv        TEXT,
    parameters  TEXT,
    position    INTEGER NOT NULL,
    setup_id    INTEGER REFERENCES setups(id),
    UNIQUE (session_id, name)
);
CREATE INDEX benchmarks_name ON benchmarks(name);

CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY,
    benchmark_id       INTEGER NOT NULL REFERENCES benchmarks(id) ON DELETE CASCADE,
    session_id         INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    iteration          INTEGER NOT NULL,
    warmup             INTEGER NOT NULL DEFAULT 0,
    worker             INTEGER NOT NULL DEFAULT 0,
    setup_id           INTEGER REFERENCES setups(id),
    status             TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'signaled', 'timeout', 'error', 'imported')),
    exit_code          INTEGER,
    signal             INTEGER,
    error              TEXT,
    start_unix_ns      INTEGER,
    start_mono_ns      INTEGER,
    end_mono_ns        INTEGER,
    wall_ns            INTEGER,
    user_ns            INTEGER,
    sys_ns             INTEGER,
    max_rss_kib        INTEGER,
    minflt             INTEGER,
    majflt             INTEGER,
    nvcsw              INTEGER,
    nivcsw             INTEGER,
    shell_overhead_ns  INTEGER,
    cpus               TEXT,
    spawn_method       TEXT,
    extra              TEXT,
    UNIQUE (session_id, seq)
);
CREATE INDEX runs_benchmark ON runs(benchmark_id, warmup, status);

CREATE TABLE measurements (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL,
    name     TEXT NOT NULL,
    value    REAL,
    unit     TEXT,
    status   TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'unsupported', 'unknown')),
    note     TEXT,
    PRIMARY KEY (run_id, source, name)
) WITHOUT ROWID;

CREATE TABLE metrics (
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    unit        TEXT,
    origin      TEXT NOT NULL,
    pattern     TEXT,
    PRIMARY KEY (session_id, name)
) WITHOUT ROWID;

CREATE TABLE samples (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric  TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    value   REAL NOT NULL,
    PRIMARY KEY (run_id, metric, seq)
) WITHOUT ROWID;
"""

MIGRATIONS: list[str | Callable[[Any], None]] = [SCHEMA_V1]

SCHEMA_VERSION = len(MIGRATIONS)

#: Version 2: who owns a running session (so a dead owner reads as ``crashed`` and a second
#: resume is refused), the parent of a child session (a study's runs), the digest of an
#: imported file's content (re-imports are refused unless asked), and per-store secrets.
SCHEMA_V2 = """
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
ALTER TABLE sessions ADD COLUMN owner_host TEXT;
ALTER TABLE sessions ADD COLUMN owner_start TEXT;
ALTER TABLE sessions ADD COLUMN parent_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL;
ALTER TABLE sessions ADD COLUMN input_digest TEXT;
CREATE INDEX sessions_input_digest ON sessions(input_digest);
CREATE TABLE store_meta (
    key    TEXT PRIMARY KEY,
    value  BLOB NOT NULL
) WITHOUT ROWID;
"""

MIGRATIONS.append(SCHEMA_V2)
SCHEMA_VERSION = len(MIGRATIONS)

#: Version 3: samples as blocks of little-endian doubles (one row per up to 65,536 values)
#: instead of one row per value: a million samples were 2 s of INSERT and 467 MB in SQLite.
SCHEMA_V3 = """
CREATE TABLE sample_blocks (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric     TEXT NOT NULL,
    first_seq  INTEGER NOT NULL,
    n          INTEGER NOT NULL CHECK (n > 0),
    data       BLOB NOT NULL,
    UNIQUE (run_id, metric, first_seq)
)
"""


def _migrate_to_blocks(conn: Any) -> None:
    """Version 2 -> 3: create ``sample_blocks``, move every sample into it (each run's metric
    split where its sequence numbers have a gap), drop ``samples``."""
    from benchlab.store.sample_blocks import insert_samples

    conn.execute(SCHEMA_V3)
    cur = conn.cursor()
    cur.row_factory = None
    key: tuple[int, str] | None = None
    seqs: list[int] = []
    values: list[float] = []

    def flush() -> None:
        if key is None or not seqs:
            return
        # pure Python: creating a fresh store walks this step too, and `run` imports no numpy
        breaks = [i for i in range(1, len(seqs)) if seqs[i] - seqs[i - 1] != 1]
        for lo, hi in zip([0, *breaks], [*breaks, len(seqs)]):
            insert_samples(conn, key[0], key[1], values[lo:hi], first_seq=int(seqs[lo]))

    for run_id, metric, seq, value in cur.execute(
            "SELECT run_id, metric, seq, value FROM samples ORDER BY run_id, metric, seq").fetchall():
        if (run_id, metric) != key:
            flush()
            key, seqs, values = (run_id, metric), [], []
        seqs.append(seq)
        values.append(value)
    flush()
    conn.execute("DROP TABLE samples")


MIGRATIONS.append(_migrate_to_blocks)
SCHEMA_VERSION = len(MIGRATIONS)
