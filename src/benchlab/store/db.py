"""The SQLite store: every session, run and sample benchlab measures or imports.

:class:`Store` is three parts, one module each: opening and transactions
(:mod:`.connection`), row writes (:mod:`.rows`) and reads and selectors (:mod:`.queries`).
Sessions are written through :class:`benchlab.store.writer.SessionWriter`. This module keeps
the names other layers import (``Store``, ``SessionRef``, ``Series``, ``default_db_path`` ...).
"""

from __future__ import annotations

from benchlab.store.connection import (
    BUSY_TIMEOUT_MS,
    DEFAULT_DB,
    StoreConnection,
    canonical_json,
    default_db_path,
    digest_of,
    user_db_path,
    utc_now,
)
from benchlab.store.queries import HARNESS_METRICS, Queries, Series
from benchlab.store.rows import RUN_COLUMNS, RowWriter, SessionRef


class Store(StoreConnection, RowWriter, Queries):
    """A benchlab database file. Use :meth:`open`; close with :meth:`close` or ``with``."""

__all__ = ["Store", "SessionRef", "Series", "HARNESS_METRICS", "RUN_COLUMNS", "DEFAULT_DB",
           "BUSY_TIMEOUT_MS", "canonical_json", "digest_of", "default_db_path", "user_db_path",
           "utc_now"]
