"""The notebook API: ``benchlab.open(path)`` gives a store's contents as pandas DataFrames.

pandas is imported when a table is first asked for, never when ``benchlab`` is imported. The
store is opened read-only, so a notebook can look at results while benchlab writes them.

Tables (one row per ...; times in ns, sizes in KiB, as stored):

``sessions``      session: ``uid``, ``name``, ``kind``, ``status`` (``crashed`` for a session
                  whose process died while running), ``created_utc``, ``finished_utc``,
                  ``source``, ``command_line``, ``environment_digest``, counts of benchmarks
                  and runs
``runs``          run: ``session``, ``benchmark``, ``command``, ``seq``, ``iteration``,
                  ``warmup``, ``status``, ``exit_code``, ``wall_ns`` (shell start-up
                  subtracted), ``wall_raw_ns``, ``user_ns``, ``sys_ns``, ``max_rss_kib``,
                  faults, context switches, ``worker``, ``cpus``
``samples``       program-reported value: ``session``, ``benchmark``, ``run`` (seq),
                  ``metric``, ``unit``, ``index`` (order within the run), ``value``
``environments``  stored environment: ``digest``, ``hostname`` and the snapshot flattened
                  into dotted columns (``cpu.model``, ``os.kernel.release``, ...)
"""

from __future__ import annotations

import json
import os
from typing import Any

from benchlab.store.db import Store
from benchlab.store.owner import effective_status
from benchlab.store.rows import corrected_wall_sql


def _flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}{key}.", out)
    else:
        out[prefix[:-1]] = json.dumps(value) if isinstance(value, list) else value
    return out


class Results:
    """A store's sessions, runs, samples and environments as pandas DataFrames (read-only).

    Each table is read when first used and kept; :meth:`refresh` forgets them so the next use
    reads the store again. Close with :meth:`close` or use ``with``.
    """

    def __init__(self, path: str | os.PathLike):
        self.store = Store.open(path, readonly=True)
        self.path = self.store.path
        self._tables: dict[str, Any] = {}

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> "Results":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<benchlab results {self.path}>"

    def refresh(self) -> None:
        """Forget the tables read so far (the next use reads the store again)."""
        self._tables.clear()

    def _frame(self, name: str, sql: str) -> Any:
        if name not in self._tables:
            import pandas as pd

            cur = self.store.conn.execute(sql)
            names = [d[0] for d in cur.description]
            self._tables[name] = pd.DataFrame.from_records(cur.fetchall(), columns=names)
        return self._tables[name]

    @property
    def sessions(self) -> Any:
        """One row per session, oldest first (see the module docstring for columns)."""
        if "sessions" not in self._tables:
            import pandas as pd

            cur = self.store.conn.execute("""
                SELECT s.uid, s.name, s.kind, s.status, s.created_utc, s.finished_utc, s.source,
                       s.command_line, e.digest AS environment_digest,
                       s.owner_pid, s.owner_host, s.owner_start,
                       (SELECT COUNT(*) FROM benchmarks b WHERE b.session_id = s.id) AS n_benchmarks,
                       (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS n_runs
                FROM sessions s LEFT JOIN environments e ON e.id = s.environment_id
                ORDER BY s.id""")
            rows = []
            for row in cur:
                rec = dict(row)
                rec["status"] = effective_status(rec)
                for key in ("owner_pid", "owner_host", "owner_start"):
                    rec.pop(key)
                if isinstance(rec["command_line"], str):
                    rec["command_line"] = json.loads(rec["command_line"])
                rows.append(rec)
            columns = ["uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
                       "command_line", "environment_digest", "n_benchmarks", "n_runs"]
            frame = pd.DataFrame(rows, columns=columns)
            for col in ("created_utc", "finished_utc"):
                frame[col] = _timestamps(frame[col])
            self._tables["sessions"] = frame
        return self._tables["sessions"]

    @property
    def runs(self) -> Any:
        """One row per run, in execution order within each session."""
        frame = self._frame("runs", f"""
            SELECT s.uid AS session, b.name AS benchmark, b.command, r.seq, r.iteration,
                   r.warmup, r.status, r.exit_code, r.signal,
                   {corrected_wall_sql("r.")} AS wall_ns,
                   r.wall_ns AS wall_raw_ns, r.user_ns, r.sys_ns, r.max_rss_kib, r.minflt,
                   r.majflt, r.nvcsw, r.nivcsw, r.worker, r.cpus
            FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
                        JOIN sessions s ON s.id = r.session_id
            ORDER BY r.session_id, r.seq""")
        if frame["warmup"].dtype != bool:
            frame["warmup"] = frame["warmup"].astype(bool)
        return frame

    @property
    def samples(self) -> Any:
        """One row per program-reported value (the program's own view of each run): columns
        ``session``, ``benchmark``, ``run`` (the run's seq), ``metric``, ``unit``, ``index``
        (the value's position in its run) and ``value``."""
        if "samples" not in self._tables:
            import pandas as pd

            from benchlab.store.sample_blocks import sample_columns

            self._tables["samples"] = pd.DataFrame(sample_columns(self.store.conn))
        return self._tables["samples"]

    @property
    def environments(self) -> Any:
        """One row per stored environment, its snapshot flattened into dotted columns."""
        if "environments" not in self._tables:
            import pandas as pd

            rows = []
            for digest, hostname, data in self.store.conn.execute(
                    "SELECT digest, hostname, data FROM environments ORDER BY id"):
                try:
                    snapshot = json.loads(data)
                except json.JSONDecodeError:
                    snapshot = {}
                flat = _flatten(snapshot) if isinstance(snapshot, dict) else {}
                flat.pop("digest", None)
                rows.append({"digest": digest, "hostname": hostname, **flat})
            self._tables["environments"] = pd.DataFrame(rows, columns=None if rows else
                                                        ["digest", "hostname"])
        return self._tables["environments"]


def _timestamps(column: Any) -> Any:
    import pandas as pd

    return pd.to_datetime(column, utc=True, format="ISO8601", errors="coerce")


def open_results(path: str | os.PathLike | None = None) -> Results:
    """Open the store at ``path`` (default: the store ``benchlab`` itself would use) for
    reading as DataFrames; see :class:`Results`."""
    from benchlab.errors import require_extra
    from benchlab.store.db import default_db_path

    require_extra("pandas", "notebook", load=False)
    return Results(default_db_path() if path is None else path)
