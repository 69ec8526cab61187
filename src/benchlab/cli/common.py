"""Options and helpers shared by CLI modules."""

from __future__ import annotations

import click

from benchlab.store.db import Store, default_db_path

db_option = click.option(
    "--db", default=None, metavar="PATH",
    help="Database file (default: $BENCHLAB_DB, else ./benchlab.db when it exists, else "
         "~/.local/share/benchlab/benchlab.db).")


def open_store(db: str | None, *, readonly: bool = False) -> Store:
    """Open the store named by ``--db`` (or the default); errors are one-line UserErrors.

    An explicit empty ``--db ''`` is an error, not the default store.
    """
    return Store.open(default_db_path() if db is None else db, readonly=readonly)
