"""A session's metadata: the one module that changes it after the session's row is made.

A session's ``metadata`` column is one JSON object whose top-level keys belong to different
parts of benchlab: ``verdict`` (the verdict's settings and, once decided, its ``result``),
``load`` and ``shell_overhead`` (what the execution measured beside the runs),
``until_decided`` (the sequential design's looks and decision), ``lost_runs`` (runs lost with a
cluster worker), ``cluster``, a study's ``cells`` and ``order``, an import's ``bundle`` or
``imported_from``. The first document is stored with the row
(:meth:`benchlab.store.writer.SessionWriter.create`); every later change is one of the named
updates below.

Each update is a read-modify-write inside one write transaction (``BEGIN IMMEDIATE`` on
SQLite, the store's advisory lock on PostgreSQL), so two updates of different keys, from two
threads or two processes, never lose each other, and a nested call joins its caller's
transaction. Readers (reports, ``show``, the exports) read the column through
:func:`read` or the session's row; they never write it. ``tests/test_concerns.py`` checks that
no other module writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchlab.store.db import Store


def read(store: Store, session_id: int | str) -> dict[str, Any]:
    """The session's metadata as a dict (a copy: changing it changes nothing stored); {} when
    it has none. A document that is not an object is returned under ``"previous"``."""
    meta = store.get_session(session_id).get("metadata")
    if meta is None:
        return {}
    return dict(meta) if isinstance(meta, dict) else {"previous": meta}


def _change(store: Store, session_id: int | str, change) -> dict[str, Any]:
    with store.transaction():
        row = store.get_session(session_id)
        meta = read(store, row["id"])
        change(meta)
        store.update_session(row["id"], metadata=meta)
    return meta


def merge(store: Store, session_id: int | str, **parts: Any) -> dict[str, Any]:
    """Set top-level keys (``merge(store, sid, load={...})``), keeping every other key;
    returns the stored document."""
    return _change(store, session_id, lambda meta: meta.update(parts))


def merge_under(store: Store, session_id: int | str, key: str,
                entries: Mapping[str, Any]) -> dict[str, Any]:
    """Set ``entries`` inside the object under top-level ``key`` (made when missing, or when
    it held something else), keeping its other entries: a study's ``cells``, the verdict's
    ``result`` beside its settings. Returns the stored document."""
    def change(meta: dict[str, Any]) -> None:
        inner = meta.get(key)
        meta[key] = {**(inner if isinstance(inner, dict) else {}), **entries}

    return _change(store, session_id, change)


def append(store: Store, session_id: int | str, key: str, item: Any) -> dict[str, Any]:
    """Add ``item`` at the end of the list under top-level ``key`` (made when missing): the
    runs a cluster lost, one by one. Returns the stored document."""
    def change(meta: dict[str, Any]) -> None:
        items = meta.get(key)
        meta[key] = [*(items if isinstance(items, list) else []), item]

    return _change(store, session_id, change)
