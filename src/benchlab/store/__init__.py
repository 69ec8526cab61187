"""benchlab.store: the SQLite store (schema, migrations) and import/export formats."""

from benchlab.store.db import HARNESS_METRICS, Series, SessionRef, Store, default_db_path

__all__ = ["Store", "Series", "SessionRef", "HARNESS_METRICS", "default_db_path"]
