"""Store backends: one interface (:class:`StoreBackend`), one registry (:data:`BACKENDS`).

A backend is a kind of database a store lives in: an SQLite file on this machine, or a
PostgreSQL database a team shares. The store's SQL is written once, in SQLite's dialect; a
backend whose database speaks another presents a connection that translates it
(:mod:`benchlab.store.backends.pg_connection`). A backend says which ``--db`` values name one of
its databases (:meth:`StoreBackend.claims`), opens one (:meth:`StoreBackend.open`), names the
files on this machine that hold it (:meth:`StoreBackend.files`: the output guard refuses to
write over them, and an unused new store is removed) and gives deleted rows' space back
(:meth:`StoreBackend.vacuum`).

Adding a backend is one module in this package whose ``BACKEND`` is a :class:`StoreBackend`, one
line in :data:`BACKENDS` before ``sqlite``, and its tests: ``--db`` then reaches it from every
command. A backend's module is imported when a ``--db`` value is looked at, so it imports its
driver (psycopg, ...) inside :meth:`StoreBackend.open`, never at the top.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Protocol

#: Backend name -> ``"module:attribute"`` of its :class:`StoreBackend`, asked in this order
#: whether it claims a ``--db`` value; ``sqlite`` is last and takes every value the others
#: leave (a file path).
BACKENDS: dict[str, str] = {
    "postgres": "benchlab.store.backends.postgres:BACKEND",
    "sqlite": "benchlab.store.backends.sqlite:BACKEND",
}


class StoreBackend(Protocol):
    """What every store backend provides. ``store_class`` and ``store`` are a
    :class:`~benchlab.store.connection.StoreConnection` class and instance (typed ``Any``: that
    module reaches this registry, and a type import back would be a cycle)."""

    #: The backend's name (its key in :data:`BACKENDS`).
    name: str

    def claims(self, target: str) -> bool:
        """Whether the ``--db`` value ``target`` names a database of this backend."""

    def open(self, store_class: Any, target: str,
             readonly: bool) -> Any:
        """An open, migrated ``store_class`` over the database ``target``
        (:meth:`~benchlab.store.connection.StoreConnection.adopt` makes it from a connection);
        UserError, one line, when it cannot be opened."""

    def files(self, target: str) -> list[str]:
        """The absolute paths (links resolved) of the files on this machine that hold the
        store ``target``, existing or not; [] when a server holds it."""

    def vacuum(self, store: Any) -> tuple[int | None, int | None]:
        """Give deleted rows' space back; the store's size in bytes before and after (None,
        None when the backend cannot say: a server owns the files)."""


def backend(name: str) -> StoreBackend:
    """The backend registered as ``name`` (KeyError for another name)."""
    module, _, attribute = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def backend_for(target: str | os.PathLike) -> StoreBackend:
    """The first registered backend that claims the ``--db`` value ``target``."""
    text = os.fspath(target)
    for name in BACKENDS:
        found = backend(name)
        if found.claims(text):
            return found
    raise LookupError(f"no store backend claims {text!r}")  # sqlite claims every value
