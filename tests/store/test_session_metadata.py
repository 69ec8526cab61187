"""A session's metadata has one owner, :mod:`benchlab.store.session_metadata`: named updates,
each a read-modify-write in one write transaction, on a real SQLite store.

The race: two processes that each read the document, add their key and write it back lose one
another's keys unless the read and the write are one transaction. Here two processes add 40
keys each to the same session at once, and every key must be there at the end.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from benchlab.store import SessionWriter, Store, session_metadata

ROOT = Path(__file__).resolve().parents[2]
BENCHLAB = str(Path(sys.executable).parent / "benchlab")


def _session(db: Path, metadata: dict | None = None) -> int:
    with Store.open(db) as store:
        writer = SessionWriter.create(store, "run", name="n", metadata=metadata,
                                      environment={"host": {"hostname": "testhost"}})
        writer.finish("complete")
        return writer.ref.id


def test_named_updates_keep_what_they_do_not_name(db_path):
    sid = _session(db_path, {"kept": 1, "cells": {"a": 1}})
    with Store.open(db_path) as store:
        session_metadata.merge(store, sid, load={"cpu": 2})
        session_metadata.merge_under(store, sid, "cells", {"b": 2})
        session_metadata.append(store, sid, "lost_runs", {"seq": 3})
        session_metadata.append(store, sid, "lost_runs", {"seq": 4})
        stored = store.get_session(sid)["metadata"]
    assert stored == {"kept": 1, "cells": {"a": 1, "b": 2}, "load": {"cpu": 2},
                      "lost_runs": [{"seq": 3}, {"seq": 4}]}
    with Store.open(db_path) as store:
        copy = session_metadata.read(store, sid)
        copy["kept"] = 2  # a copy: changing it changes nothing stored
        assert store.get_session(sid)["metadata"]["kept"] == 1


def test_an_update_inside_a_failed_transaction_is_rolled_back(db_path):
    sid = _session(db_path, {"kept": 1})
    with Store.open(db_path) as store:
        try:
            with store.transaction():
                session_metadata.merge(store, sid, gone=True)
                raise RuntimeError("the caller's work failed")
        except RuntimeError:
            pass
        assert store.get_session(sid)["metadata"] == {"kept": 1}


_WRITER = textwrap.dedent("""
    import sys
    from benchlab.store import Store, session_metadata

    db, sid, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with Store.open(db) as store:
        for i in range(40):
            session_metadata.merge(store, sid, **{f"{tag}{i}": i})
            session_metadata.append(store, sid, "log", f"{tag}{i}")
""")


def test_two_processes_updating_at_once_lose_nothing(db_path):
    sid = _session(db_path)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(db_path), str(sid), tag],
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    with Store.open(db_path) as store:
        stored = store.get_session(sid)["metadata"]
    keys = {f"{tag}{i}" for tag in "ab" for i in range(40)}
    assert keys <= set(stored), sorted(keys - set(stored))[:5]
    assert sorted(stored["log"]) == sorted(keys)


def test_run_q_stores_the_verdict_it_does_not_print(tmp_path):
    """``run -q`` with two commands stores the same verdict ``run`` without ``-q`` stores: its
    settings and its result, so ``show`` and the exports read it later."""
    stored = {}
    for quiet in (True, False):
        db = tmp_path / f"q{quiet}.db"
        args = [BENCHLAB, "run", "-N", "-r", "4", "/bin/true", "/bin/echo", "--db", str(db)]
        proc = subprocess.run(args + (["-q"] if quiet else []), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        if quiet:
            assert proc.stdout == ""
        with Store.open(db) as store:
            (session,) = store.sessions()
            stored[quiet] = store.get_session(session["id"])["metadata"]["verdict"]
    assert set(stored[True]) == set(stored[False]) and "result" in stored[True]
    assert stored[True]["result"].keys() == stored[False]["result"].keys()
