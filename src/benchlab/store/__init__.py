"""benchlab.store: the SQLite store (schema, migrations), the one session writer, queries,
and import/export formats."""

from benchlab.store.db import HARNESS_METRICS, Series, SessionRef, Store, default_db_path
from benchlab.store.writer import SessionWriter

__all__ = ["Store", "Series", "SessionRef", "SessionWriter", "HARNESS_METRICS", "default_db_path"]
