"""What another connection (another process's, as far as SQLite can tell) sees of a store."""

from __future__ import annotations

import sqlite3


def count_rows(db: str, table: str) -> int:
    """Rows of ``table`` in the SQLite file ``db`` as a fresh connection sees them: committed
    rows only."""
    other = sqlite3.connect(db)
    try:
        return other.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        other.close()
