"""Program-reported samples on disk: blocks of little-endian doubles, written and read here.

A program can report a million values in one run (the JayBeams order book reports one per
operation). Stored one row per value, a million samples cost 2 s of ``INSERT`` and 467 MB of
memory in SQLite, and reading them back was most of a report's time. They are stored instead as
rows of table ``sample_blocks``: ``(run_id, metric, first_seq, n, data)``, where ``data`` holds
``n`` IEEE-754 doubles in little-endian byte order (numpy dtype ``<f8``), the values of sequence
numbers ``first_seq .. first_seq + n - 1``, at most :data:`BLOCK_VALUES` per row. The same bytes
go into PostgreSQL's ``BYTEA``; both stores hold the values bit for bit.

Every writer and reader of samples goes through this module, so the layout is known in one
place. :func:`sample_columns` unpacks every block into one entry per value (the notebook API's
``samples`` table); ``docs/notebook.md`` shows the unpacking for a reader with only ``sqlite3``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

if TYPE_CHECKING:
    import numpy as np

# numpy is imported inside the functions that use it: a run that stores no samples (most runs,
# and every `benchlab run` of a plain command) opens the store without numpy's ~80 ms.

#: Values per stored block (512 KiB of doubles): big enough that a million samples are 16 rows,
#: small enough that one row is never a large allocation.
BLOCK_VALUES = 65_536
#: The on-disk element type (a numpy dtype string): 8-byte IEEE-754 doubles, little-endian
#: whatever the machine.
DTYPE = "<f8"
#: Bytes per stored value.
ITEMSIZE = 8

#: The columns a block row is written with, in the order of the row tuples.
COLUMNS = ("run_id", "metric", "first_seq", "n", "data")
_INSERT = f"INSERT INTO sample_blocks ({', '.join(COLUMNS)}) VALUES (?,?,?,?,?)"


def to_array(values: Any) -> np.ndarray:
    """``values`` as a 1-D float64 array; raises ValueError for NaN (a value that is no number).

    Infinities are kept (they are numbers a program may report); NaN was refused by the
    row-per-value schema's ``NOT NULL`` and stays refused, so a reader never meets one.
    """
    import numpy as np

    arr = np.asarray(values, dtype=float).reshape(-1)
    if np.isnan(arr).any():
        raise ValueError("samples must be numbers: NaN cannot be stored")
    return arr


def blocks_of(values: Any, first_seq: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """``(first_seq, n, data)`` for each block of ``values`` (sequence numbers from
    ``first_seq``), ``data`` being ``n`` little-endian doubles."""
    arr = to_array(values).astype(DTYPE, copy=False)
    for start in range(0, len(arr), BLOCK_VALUES):
        chunk = arr[start:start + BLOCK_VALUES]
        yield first_seq + start, len(chunk), chunk.tobytes()


def insert_samples(conn: Any, run_id: int, metric: str, values: Any, first_seq: int = 0) -> int:
    """Write one run's ``values`` of ``metric`` through ``conn`` (sqlite3 or the PostgreSQL
    adapter) as blocks; returns how many values were written. The caller holds the transaction."""
    rows = [(run_id, metric, seq, n, data) for seq, n, data in blocks_of(values, first_seq)]
    insert_blocks(conn, rows)
    return sum(r[3] for r in rows)


def insert_blocks(conn: Any, rows: list[tuple[int, str, int, int, bytes]]) -> None:
    """Write block rows ``(run_id, metric, first_seq, n, data)`` as they are: with ``COPY`` on
    PostgreSQL (the adapter's ``copy_rows``), ``executemany`` on SQLite. The caller holds the
    transaction."""
    if not rows:
        return
    copy_rows = getattr(conn, "copy_rows", None)
    if copy_rows is not None:
        copy_rows("sample_blocks", COLUMNS, rows)
    else:
        conn.executemany(_INSERT, rows)


def decode(data: bytes | memoryview, n: int | None = None) -> np.ndarray:
    """The float64 values of one block's ``data`` (native byte order, a fresh array).

    Raises ValueError when the byte length is not a whole number of doubles or disagrees with
    ``n`` (a damaged row is never read as other numbers)."""
    import numpy as np

    raw = bytes(data)
    if len(raw) % ITEMSIZE or (n is not None and len(raw) != n * ITEMSIZE):
        raise ValueError(f"a sample block of {len(raw)} bytes does not hold "
                         f"{'whole doubles' if n is None else f'{n} doubles'}")
    return np.frombuffer(raw, dtype=DTYPE).astype(float)


def join_blocks(rows: Iterable[tuple[int, int, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(values, sequence numbers) of one run's metric from its blocks ``(first_seq, n, data)``
    in ``first_seq`` order."""
    import numpy as np

    values, seqs = [], []
    for first, n, data in rows:
        values.append(decode(data, n))
        seqs.append(np.arange(first, first + n, dtype=np.int64))
    if not values:
        return np.empty(0), np.empty(0, dtype=np.int64)
    return np.concatenate(values), np.concatenate(seqs)


def run_samples(conn: Any, run_id: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """One run's samples by metric (in metric-name order): (values, sequence numbers)."""
    cur = conn.cursor()
    cur.row_factory = None
    blocks: dict[str, list[tuple[int, int, Any]]] = {}
    for metric, first, n, data in cur.execute(
            "SELECT metric, first_seq, n, data FROM sample_blocks WHERE run_id = ?"
            " ORDER BY metric, first_seq", (run_id,)):
        blocks.setdefault(metric, []).append((first, n, data))
    return {metric: join_blocks(rows) for metric, rows in blocks.items()}


def sample_columns(conn: Any) -> dict[str, np.ndarray]:
    """Every stored sample as columns of equal length (one entry per value): ``session`` (uid),
    ``benchmark``, ``run`` (the run's seq), ``metric``, ``unit``, ``index`` (the value's seq)
    and ``value``, in session, run, metric and index order (the notebook API's table)."""
    import numpy as np

    cur = conn.cursor()
    cur.row_factory = None
    keys: list[tuple] = []
    counts: list[int] = []
    index: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for uid, bench, run_seq, metric, unit, first, n, data in cur.execute(
            "SELECT s.uid, bm.name, r.seq, b.metric, COALESCE(m.unit, ''), b.first_seq, b.n, b.data"
            " FROM sample_blocks b JOIN runs r ON r.id = b.run_id"
            " JOIN benchmarks bm ON bm.id = r.benchmark_id JOIN sessions s ON s.id = r.session_id"
            " LEFT JOIN metrics m ON m.session_id = r.session_id AND m.name = b.metric"
            " ORDER BY r.session_id, r.seq, b.metric, b.first_seq"):
        keys.append((uid, bench, int(run_seq), metric, unit))
        counts.append(int(n))
        index.append(np.arange(first, first + n, dtype=np.int64))
        values.append(decode(data, n))
    reps = np.array(counts, dtype=np.int64)
    columns: dict[str, np.ndarray] = {}
    for i, name in enumerate(("session", "benchmark", "run", "metric", "unit")):
        column = np.array([k[i] for k in keys], dtype=np.int64 if name == "run" else object)
        columns[name] = np.repeat(column, reps)
    columns["index"] = np.concatenate(index) if index else np.empty(0, dtype=np.int64)
    columns["value"] = np.concatenate(values) if values else np.empty(0)
    return columns
