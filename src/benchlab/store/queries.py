"""Reading the store: sessions, benchmarks, runs, samples, and the selectors users type.

Selectors match exactly: ``%`` and ``_`` are ordinary characters, benchmark names may contain
``/`` and ``:`` (every ``./bm`` and Google Benchmark name), and a session uid prefix that
matches several sessions is an error listing them.

Long because: every query of the store is here (the one reader), so that no SQL is written
outside ``benchlab.store`` (tests/test_concerns.py).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from benchlab.errors import UserError
from benchlab.records import record
from benchlab.store.owner import effective_status
from benchlab.store.rows import corrected_wall_sql
from benchlab.store.sample_blocks import decode, run_samples

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the methods that return arrays: the store is opened by every command,
# and `benchlab run` (which reads no series) must not pay numpy's ~80 ms import.

#: Harness-side series every run can provide, by name: (column expression, unit).
HARNESS_METRICS: dict[str, tuple[str, str]] = {
    "wall": (corrected_wall_sql(), "ns"),
    "wall_raw": ("wall_ns", "ns"),
    "user": ("user_ns", "ns"),
    "sys": ("sys_ns", "ns"),
    "cpu": ("user_ns + sys_ns", "ns"),
    "max_rss": ("max_rss_kib", "KiB"),
    "minflt": ("minflt", "count"),
    "majflt": ("majflt", "count"),
    "nvcsw": ("nvcsw", "count"),
    "nivcsw": ("nivcsw", "count"),
}

#: Program metrics an importing tool or a harness reports as its primary series (Google
#: Benchmark's ``real_time``, Go's ``ns_per_op``, criterion's and pytest-benchmark's ``time``,
#: pyperf's values, JMH's score named after its mode; store.formats' PRIMARY): the default of a
#: benchmark without wall times.
PRIMARY_METRICS = ("real_time", "ns_per_op", "time", "value", "thrpt", "avgt", "sample", "ss")

#: Shortest uid prefix accepted as a session selector.
MIN_UID_PREFIX = 4


@record
class Series:
    """One sample series selected for analysis (values in ``unit``)."""

    values: np.ndarray
    label: str
    unit: str
    metric: str
    session_uid: str
    session_id: int
    benchmark: str
    benchmark_id: int
    run_ids: np.ndarray


def escape_like(text: str) -> str:
    """``text`` as a literal LIKE pattern (use with ``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


#: Session columns :meth:`Queries.sessions` reads with ``brief=True`` (what ``list`` shows, and
#: the owner columns that tell a crashed session from a running one).
BRIEF_SESSION_COLUMNS = ("id", "uid", "name", "kind", "status", "created_utc", "finished_utc",
                         "source", "parent_id", "owner_pid", "owner_host", "owner_start")

_JSON_COLUMNS = {"command_line", "protocol", "environment", "system_checks", "load_before",
                 "load_after", "metadata", "argv", "parameters", "extra", "data"}


def decode_row(row: dict) -> dict:
    """Decode the JSON columns of a row dict in place (text that is not JSON stays text)."""
    for k in _JSON_COLUMNS & row.keys():
        if isinstance(row[k], str):
            try:
                row[k] = json.loads(row[k])
            except json.JSONDecodeError:
                pass
    return row


def _session_row(row: Any) -> dict:
    out = decode_row(dict(row))
    out["stored_status"] = out["status"]
    out["status"] = effective_status(out)
    return out


class Queries:
    """Read methods of :class:`~benchlab.store.db.Store` (mixed into it)."""

    def holds_nothing(self) -> bool:
        """True when the store holds no session and no machine description: a store just
        created by a command that was then refused, which that command removes again."""
        row = self.conn.execute("SELECT EXISTS (SELECT 1 FROM sessions) "
                                "OR EXISTS (SELECT 1 FROM environments)").fetchone()
        return not row[0]

    def sessions(self, limit: int | None = None, *, brief: bool = False) -> list[dict]:
        """Sessions, newest first, with counts of benchmarks and runs; ``status`` is
        ``crashed`` for a running session whose process died (``stored_status`` keeps the
        stored value).

        Every session column but ``environment`` (its machine snapshot, kilobytes of JSON
        each: decoding 10,000 of them made ``list`` take seconds); :meth:`get_session` has it.
        ``brief``: only the columns a listing shows (:data:`BRIEF_SESSION_COLUMNS`, no JSON
        to decode), a third of the time over 10,000 sessions.
        """
        names = [d[0] for d in self.conn.execute("SELECT * FROM sessions LIMIT 0").description]
        keep = BRIEF_SESSION_COLUMNS if brief else names
        cols = ", ".join(f"s.{n}" for n in names if n != "environment" and n in keep)
        q = (f"SELECT {cols}, (SELECT COUNT(*) FROM benchmarks b WHERE b.session_id = s.id) AS n_benchmarks,"
             " (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS n_runs"
             " FROM sessions s ORDER BY s.id DESC")
        if limit:
            q += f" LIMIT {int(limit)}"
        if not brief:
            return [_session_row(r) for r in self.conn.execute(q)]
        cur = self.conn.cursor()
        cur.row_factory = None
        rows = cur.execute(q)
        keys = [d[0] for d in rows.description]
        out = []
        for values in rows:
            row = dict(zip(keys, values))
            row["stored_status"] = row["status"]
            row["status"] = effective_status(row)
            out.append(row)
        return out

    def find_session(self, key: str | int) -> dict | None:
        """The session selected by ``key`` or None: an exact uid, a numeric id, an exact name
        (the newest session of that name), or a uid prefix of at least 4 characters.

        Raises UserError listing the candidates when a uid prefix matches several sessions.
        """
        key_s = str(key)
        row = self.conn.execute("SELECT * FROM sessions WHERE uid = ?", (key_s,)).fetchone()
        if row is None and key_s.isdigit() and int(key_s) < 2 ** 63:  # SQLite's INTEGER range
            row = self.conn.execute("SELECT * FROM sessions WHERE id = ?", (int(key_s),)).fetchone()
        if row is None:
            row = self.conn.execute("SELECT * FROM sessions WHERE name = ? ORDER BY id DESC LIMIT 1",
                                    (key_s,)).fetchone()
        # a uid is 32 hex digits: a longer key is no prefix of one (and a 60,000-character LIKE
        # pattern is "too complex" for SQLite)
        if row is None and MIN_UID_PREFIX <= len(key_s) <= 64:
            rows = self.conn.execute(
                "SELECT * FROM sessions WHERE uid LIKE ? ESCAPE '\\' ORDER BY id DESC LIMIT 11",
                (escape_like(key_s) + "%",)).fetchall()
            if len(rows) > 1:
                shown = ", ".join(f"{r['uid']} ({r['name'] or r['kind']})" for r in rows[:10])
                more = " ..." if len(rows) > 10 else ""
                raise UserError(f"session {key_s!r} is ambiguous: it starts {len(rows)}"
                                f"{'+' if more else ''} uids ({shown}{more}); type more of the uid")
            row = rows[0] if rows else None
        return None if row is None else _session_row(row)

    def get_session(self, key: str | int) -> dict:
        """Like :meth:`find_session`, but raises UserError naming how to list sessions when
        nothing matches."""
        row = self.find_session(key)
        if row is None:
            shown = str(key) if len(str(key)) <= 80 else str(key)[:80] + "..."
            raise UserError(f"no session {shown!r} in {self.path}; list them with `benchlab list`")
        return row

    def benchmarks(self, session_id: int) -> list[dict]:
        """The benchmarks of a session in their declared order."""
        return [decode_row(dict(r)) for r in self.conn.execute(
            "SELECT * FROM benchmarks WHERE session_id = ? ORDER BY position", (session_id,))]

    def runs(self, *, session_id: int | None = None, benchmark_id: int | None = None,
             include_warmup: bool = True) -> list[dict]:
        """Runs in execution order, filtered by session and/or benchmark."""
        where, args = [], []
        if session_id is not None:
            where.append("session_id = ?")
            args.append(session_id)
        if benchmark_id is not None:
            where.append("benchmark_id = ?")
            args.append(benchmark_id)
        if not include_warmup:
            where.append("warmup = 0")
        q = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY seq"
        return [decode_row(dict(r)) for r in self.conn.execute(q, args)]

    def metrics(self, session_id: int) -> list[dict]:
        """Program-reported metrics declared in a session."""
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM metrics WHERE session_id = ? ORDER BY name", (session_id,))]

    def sample_metrics(self, benchmark_id: int) -> list[str]:
        """Names of program-reported metrics that have samples in a benchmark's runs."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT metric FROM sample_blocks WHERE run_id IN"
            " (SELECT id FROM runs WHERE benchmark_id = ?) ORDER BY metric", (benchmark_id,))]

    def samples_of_run(self, run_id: int) -> dict[str, np.ndarray]:
        """All program-reported samples of one run, by metric (values in each metric's unit)."""
        return {metric: values for metric, (values, _) in run_samples(self.conn, run_id).items()}

    def measurements_of_run(self, run_id: int) -> list[dict]:
        """Further measurements (cgroup, perf, isolator) of one run."""
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM measurements WHERE run_id = ? ORDER BY source, name", (run_id,))]

    def harness_values(self, benchmark_id: int, metric: str = "wall", *,
                       with_failed: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Harness series of the benchmark's non-warmup ok runs (``with_failed``: and its failed
        or signaled ones, which ``-i`` keeps and hyperfine compares): (values, run ids)."""
        expr, _unit = HARNESS_METRICS[metric]
        statuses = "('ok', 'failed', 'signaled')" if with_failed else "('ok')"
        rows = self.conn.execute(
            f"SELECT id, {expr} FROM runs WHERE benchmark_id = ? AND warmup = 0 AND status IN"
            f" {statuses} AND wall_ns IS NOT NULL ORDER BY seq", (benchmark_id,)).fetchall()
        import numpy as np

        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vals = np.array([np.nan if r[1] is None else r[1] for r in rows], dtype=float)
        return vals, ids

    def sample_values(self, benchmark_id: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Program-reported samples of a benchmark's non-warmup ok runs, in order: (values, run ids)."""
        import numpy as np

        cur = self.conn.cursor()
        cur.row_factory = None
        values: list[np.ndarray] = []
        owners: list[int] = []
        counts: list[int] = []
        for run_id, n, data in cur.execute(
                "SELECT b.run_id, b.n, b.data FROM sample_blocks b JOIN runs r ON r.id = b.run_id"
                " WHERE r.benchmark_id = ? AND r.warmup = 0 AND r.status IN ('ok', 'imported')"
                " AND b.metric = ? ORDER BY r.seq, b.first_seq", (benchmark_id, metric)):
            values.append(decode(data, n))
            owners.append(run_id)
            counts.append(n)
        if not values:
            return np.empty(0), np.empty(0, dtype=np.int64)
        return (np.concatenate(values),
                np.repeat(np.array(owners, dtype=np.int64), np.array(counts, dtype=np.int64)))

    def metric_unit(self, session_id: int, metric: str) -> str:
        """Unit of a metric: harness units, or the declared unit of a program metric ('' if none)."""
        if metric in HARNESS_METRICS:
            return HARNESS_METRICS[metric][1]
        row = self.conn.execute("SELECT unit FROM metrics WHERE session_id = ? AND name = ?",
                                (session_id, metric)).fetchone()
        return (row[0] or "") if row else ""


    def _benchmark_named(self, name: str, session_id: int | None) -> dict | None:
        if session_id is not None:
            row = self.conn.execute("SELECT * FROM benchmarks WHERE session_id = ? AND name = ?",
                                    (session_id, name)).fetchone()
        else:
            row = self.conn.execute(
                "SELECT * FROM benchmarks WHERE name = ? ORDER BY session_id DESC, id DESC LIMIT 1",
                (name,)).fetchone()
        return None if row is None else decode_row(dict(row))

    def find_benchmark(self, name: str, session: str | int | None = None) -> tuple[dict, dict]:
        """The newest benchmark called exactly ``name`` (in ``session`` if given):
        (session, benchmark)."""
        if session is not None:
            sess = self.get_session(session)
            bench = self._benchmark_named(name, sess["id"])
            if bench is None:
                names = ", ".join(b["name"] for b in self.benchmarks(sess["id"])) or "none"
                raise UserError(f"session {sess['uid']} has no benchmark {name!r} (it has: {names})")
            return sess, bench
        bench = self._benchmark_named(name, None)
        if bench is None:
            raise UserError(f"no benchmark named {name!r} in {self.path}; "
                            f"see `benchlab list` for sessions and `benchlab show SESSION` for names")
        sess = _session_row(self.conn.execute("SELECT * FROM sessions WHERE id = ?",
                                              (bench["session_id"],)).fetchone())
        return sess, bench

    def _select_benchmark(self, body: str) -> tuple[dict, dict] | None:
        """``body`` as ``NAME`` or ``SESSION:NAME`` (the whole text as a name first, since
        Google Benchmark names contain ``:``)."""
        bench = self._benchmark_named(body, None)
        if bench is not None:
            return self.find_benchmark(body)
        pos = body.find(":")
        while pos > 0:
            sess = self.find_session(body[:pos])
            if sess is not None:
                bench = self._benchmark_named(body[pos + 1:], sess["id"])
                if bench is not None:
                    return sess, bench
            pos = body.find(":", pos + 1)
        return None

    def resolve_series(self, selector: str, metric: str | None = None) -> Series:
        """Select a sample series by ``[SESSION:]NAME[/METRIC]``.

        ``NAME`` is a benchmark name, matched exactly (names may contain ``/`` and ``:``; the
        newest session that has it), or, when no benchmark has that name, a session (uid, id or
        name) with exactly one benchmark. ``METRIC`` (or the ``metric`` argument) is a harness
        metric (wall, cpu, user, sys, max_rss, ...) or a program-reported one; by default the
        benchmark's only program metric when it has exactly one, else ``wall`` (for an import
        without wall times: its tool's primary series, :data:`PRIMARY_METRICS`). Only ok,
        non-warmup runs contribute (and failed ones of a session run with ``-i``). The whole
        selector is tried as a name before a trailing ``/METRIC`` is split off.
        """
        splits: list[tuple[str, str | None]] = [(selector, metric)]
        if metric is None and "/" in selector:
            head, tail = selector.rsplit("/", 1)
            splits.append((head, tail))
        found = None
        for body, met in splits:
            found = self._select_benchmark(body)
            if found is not None:
                metric = met
                break
        if found is None:
            sess = None
            for body, met in splits:
                sess = self.find_session(body)
                if sess is not None:
                    metric = met
                    break
            if sess is None:
                for body, _met in splits:
                    key, _, rest = body.partition(":")
                    owner = self.find_session(key) if rest else None
                    if owner is not None:
                        names = ", ".join(b["name"] for b in self.benchmarks(owner["id"])) or "none"
                        raise UserError(f"session {owner['uid']} has no benchmark {rest!r} "
                                        f"(it has: {names})")
                raise UserError(f"no benchmark or session named {selector!r} in {self.path}; "
                                f"see `benchlab list` and `benchlab show SESSION`")
            benches = self.benchmarks(sess["id"])
            if len(benches) != 1:
                names = ", ".join(b["name"] for b in benches) or "none"
                raise UserError(f"session {sess['uid']} has {len(benches)} benchmarks ({names}); "
                                f"select one as {sess['uid']}:NAME")
            found = (sess, benches[0])
        sess, bench = found
        program_metrics = self.sample_metrics(bench["id"])
        primary = [m for m in PRIMARY_METRICS if m in program_metrics]  # an import's own
        if metric is None:
            metric = (program_metrics[0] if len(program_metrics) == 1 else primary[0] if primary
                      and not self.harness_values(bench["id"])[0].size else "wall")
        if metric in HARNESS_METRICS and metric not in program_metrics:
            protocol = self.get_session(sess["uid"]).get("protocol")  # -i: failed runs count
            values, run_ids = self.harness_values(bench["id"], metric, with_failed=bool(
                isinstance(protocol, dict) and protocol.get("ignore_failure")))
        elif metric in program_metrics:
            values, run_ids = self.sample_values(bench["id"], metric)
        else:
            known = ", ".join(sorted(set(HARNESS_METRICS) | set(program_metrics)))
            raise UserError(f"benchmark {bench['name']!r} has no metric {metric!r}; "
                            f"choose one of: {known}")
        return Series(values=values, label=bench["name"], unit=self.metric_unit(sess["id"], metric),
                      metric=metric, session_uid=sess["uid"], session_id=sess["id"],
                      benchmark=bench["name"], benchmark_id=bench["id"], run_ids=run_ids)

    # -- summaries the command line and reports print (their SQL lives here, not there) --------

    def commands_of(self, session_ids: list[int]) -> dict[int, list[str]]:
        """Each session's benchmark commands (or names, for imported ones), in order, by id."""
        out: dict[int, list[str]] = {}
        if not session_ids:
            return out
        marks = ",".join("?" * len(session_ids))
        for sid, name, command in self.conn.execute(
                f"SELECT session_id, name, command FROM benchmarks WHERE session_id IN ({marks})"
                f" ORDER BY session_id, position", list(session_ids)):
            out.setdefault(sid, []).append(command or name)
        return out

    def run_status_counts(self, session_id: int) -> list[tuple[int, bool, str, int]]:
        """(benchmark id, warmup, status, runs) for every combination a session has."""
        return [(b, bool(w), s, n) for b, w, s, n in self.conn.execute(
            "SELECT benchmark_id, warmup, status, COUNT(*) FROM runs WHERE session_id = ?"
            " GROUP BY benchmark_id, warmup, status", (session_id,))]

    def failed_runs(self, session_id: int, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` runs of a session that did not end ok, oldest first: benchmark
        name, seq, status, exit code, signal, error and the stderr tail the run kept."""
        out = []
        for row in self.conn.execute(
                "SELECT r.seq, r.status, r.exit_code, r.signal, r.error, r.extra, b.name"
                " FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.session_id = ?"
                " AND r.status IN ('failed', 'signaled', 'timeout', 'error')"
                " ORDER BY r.seq DESC LIMIT ?", (session_id, limit)):
            extra = row[5]
            try:
                extra = json.loads(extra) if isinstance(extra, str) else extra
            except json.JSONDecodeError:
                extra = None
            tail = extra.get("stderr_tail") if isinstance(extra, dict) else None
            out.append({"benchmark": row[6], "seq": row[0], "status": row[1],
                        "exit_code": row[2], "signal": row[3], "error": row[4],
                        "stderr_tail": tail})
        return out[::-1]

    def session_totals(self, session_id: int) -> dict[str, Any]:
        """A session's uid, name and how many benchmarks, runs and samples it holds."""
        row = self.conn.execute(
            "SELECT uid, name, (SELECT COUNT(*) FROM benchmarks WHERE session_id = s.id),"
            " (SELECT COUNT(*) FROM runs WHERE session_id = s.id),"
            " (SELECT COALESCE(SUM(n), 0) FROM sample_blocks WHERE run_id IN"
            "   (SELECT id FROM runs WHERE session_id = s.id))"
            " FROM sessions s WHERE id = ?", (session_id,)).fetchone()
        return {"uid": row[0], "name": row[1], "benchmarks": row[2], "runs": row[3],
                "samples": row[4]}

    def harness_series(self, benchmark_id: int, metric: str, statuses: tuple[str, ...]
                       ) -> np.ndarray:
        """A harness series (``metric`` of :data:`HARNESS_METRICS`, in its unit) over the
        benchmark's measured runs whose status is in ``statuses``, in execution order; NaN where
        a run lacks the value."""
        import numpy as np

        return np.array(self.harness_list(benchmark_id, metric, statuses), dtype=float)

    def harness_list(self, benchmark_id: int, metric: str, statuses: tuple[str, ...]
                     ) -> list[float]:
        """:meth:`harness_series` as a list of floats (NaN where a run lacks the value), for a
        caller that needs no numpy (``run``'s summary of one command)."""
        expr, _unit = HARNESS_METRICS[metric]
        marks = ",".join("?" * len(statuses))
        rows = self.conn.execute(
            f"SELECT {expr} FROM runs WHERE benchmark_id = ? AND warmup = 0 AND wall_ns IS NOT"
            f" NULL AND status IN ({marks}) ORDER BY seq", (benchmark_id, *statuses)).fetchall()
        return [math.nan if r[0] is None else float(r[0]) for r in rows]

    def newest_uid(self) -> str:
        """The uid of the newest session of any kind; UserError (one line: run or import
        something, or pass --db) when the store holds none. What a command without a named
        session works on."""
        newest = self.sessions(limit=1)
        if not newest:
            raise UserError(f"no sessions in {self.path}; run or import something first "
                            f"(benchlab run ... / benchlab import ...), or pass --db PATH")
        return newest[0]["uid"]

    def newest_session_uid(self, kind: str) -> str | None:
        """The uid of the newest complete session of ``kind`` (e.g. ``profile``), or None."""
        row = self.conn.execute("SELECT uid FROM sessions WHERE kind = ? AND status = 'complete'"
                                " ORDER BY id DESC LIMIT 1", (kind,)).fetchone()
        return None if row is None else row[0]
