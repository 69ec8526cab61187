"""The one session writer: every session (run, study, profile, calibration, import) is
created, filled and finished through :class:`SessionWriter`.

It fingerprints the environment one way, records which process owns a running session (pid,
host and the process's start time, so a recycled pid is not taken for a live owner and a dead
owner's session reads as ``crashed``), and claims a session for resume atomically: the check
that no live process owns it and the claim are one ``BEGIN IMMEDIATE`` transaction, so of two
concurrent resumes exactly one wins and the other gets a one-line UserError.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchlab.errors import UserError
from benchlab.store.connection import digest_of
from benchlab.store.db import SessionRef, Store
from benchlab.store.owner import current_owner, owner_alive

#: Final statuses :meth:`SessionWriter.finish` accepts -> the stored status. ``done`` is the
#: writer's name for a session that ran to its end; the schema calls it ``complete``.
FINISH_STATUSES = {"done": "complete", "complete": "complete", "interrupted": "interrupted",
                   "failed": "failed"}


#: ``scheme://user:PASSWORD@host`` in any URL (``--db postgresql://...``, a proxy, a git URL).
_URL_PASSWORD = r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*):[^@\s]*@"
#: ``password=...`` in a libpq conninfo string or a URL's query (quoted or not).
_KEY_PASSWORD = r"(?i)(\b(?:password|passwd|pwd)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&;]+)"


def redact_secrets(text: str) -> str:
    """``text`` with credentials replaced by ``***``: the password of any URL's userinfo and
    ``password=`` values (libpq conninfo, URL query strings)."""
    lowered = text.casefold()  # as (?i) compares: "ſ" (long s) matches "s" there
    if "://" not in text and "password" not in lowered and "passwd" not in lowered \
            and "pwd" not in lowered:
        return text  # neither pattern can match: no regex is compiled (every run's command line)
    return re.sub(_KEY_PASSWORD, r"\1***", re.sub(_URL_PASSWORD, r"\1:***@", text))


def redact_command_line(argv: Sequence[str] | None) -> list[str] | None:
    """A command line with :func:`redact_secrets` applied to each argument: what a session
    stores, exports and bundles never holds a database password typed on the command line."""
    return None if argv is None else [redact_secrets(str(a)) for a in argv]


def redact_environment(environment: Mapping[str, Any]) -> Mapping[str, Any]:
    """``environment`` with :func:`redact_command_line` applied to its ``process.argv``."""
    process = environment.get("process")
    if not isinstance(process, Mapping) or not isinstance(process.get("argv"), list):
        return environment
    return {**environment, "process": {**process, "argv": redact_command_line(process["argv"])}}


def environment_fingerprint(environment: Mapping[str, Any]) -> str:
    """The digest identifying an environment snapshot (64 hex characters).

    ``benchlab.environment`` computes the fingerprint of what it probes and stores it in the
    snapshot's ``digest`` key (the store may not import that same-rank package, so the snapshot
    carries it); any other environment is identified by the SHA-256 of its canonical JSON.
    """
    digest = environment.get("digest")
    if isinstance(digest, str) and digest:
        return digest
    return digest_of(environment)


class SessionWriter:
    """Writes one session. Create with :meth:`create` or :meth:`resume`; end with :meth:`finish`.

    Every method commits at once (a run survives a crash of benchlab the moment ``add_run``
    returns), unless called inside ``store.transaction()``, where the whole block commits once:
    that is how an import writes a session atomically.
    """

    def __init__(self, store: Store, ref: SessionRef):
        self.store = store
        self.ref = ref

    @classmethod
    def create(cls, store: Store, kind: str, *, name: str | None = None,
               command_line: Sequence[str] | None = None,
               protocol: Mapping[str, Any] | None = None,
               environment: Mapping[str, Any] | None,
               checks: Any = None, load_before: Any = None, metadata: Any = None,
               parent: SessionRef | int | None = None, source: str | None = None,
               input_digest: str | None = None) -> "SessionWriter":
        """Create a session with status ``running``, owned by this process.

        Parameters
        ----------
        store : Store
            Open, writable store.
        kind : str
            ``run``, ``study``, ``profile``, ``calibration``, ``import`` ...
        environment : dict or None
            The environment snapshot (stored deduplicated by its fingerprint); None for imported
            results that carry no environment.
        checks, load_before, metadata : JSON-able, optional
            System checks, load averages (1/5/15 min) before the session, free-form metadata.
        parent : SessionRef or int, optional
            The session this one belongs to (a study's member sessions).
        source, input_digest : str, optional
            Imports: the absolute path read and the SHA-256 of its content.
        """
        environment_id = None
        command_line = redact_command_line(command_line)
        if environment is not None:
            if not isinstance(environment, Mapping):
                raise TypeError("environment must be a mapping or None")
            environment = redact_environment(environment)
            environment_id = store.put_environment(environment, environment_fingerprint(environment))
        parent_id = parent.id if isinstance(parent, SessionRef) else parent
        ref = store.create_session(kind, name=name, command_line=command_line, protocol=protocol,
                                   environment=environment, environment_id=environment_id,
                                   system_checks=checks, load_before=load_before,
                                   metadata=metadata, source=source, status="running",
                                   parent_id=parent_id, input_digest=input_digest,
                                   owner=current_owner())
        return cls(store, ref)

    @classmethod
    def resume(cls, store: Store, key: str) -> "SessionWriter":
        """Claim session ``key`` (uid, id or name) for this process and mark it ``running``.

        Raises UserError (one line) when another live process owns it: two concurrent resumes
        of one session never both write.
        """
        session = store.get_session(key)
        stored = store.conn.execute("SELECT COUNT(*) FROM benchmarks WHERE session_id = ?",
                                    (session["id"],)).fetchone()[0]
        planned = (session.get("protocol") or {}).get("benchmarks") \
            if isinstance(session.get("protocol"), dict) else None
        if session["kind"] == "run" and isinstance(planned, list) and stored < len(planned):
            # a session row whose benchmarks were not all written: killed between the two
            # (a store written before they became one transaction); nothing to continue
            raise UserError(f"session {session['uid']} stopped while it was being created "
                            f"({stored} of {len(planned)} benchmarks stored), so there is nothing "
                            f"to resume; run its command again")
        with store.transaction() as c:
            # re-read inside the write lock: another resume may have claimed it meanwhile
            row = c.execute("SELECT * FROM sessions WHERE id = ?", (session["id"],)).fetchone()
            row = dict(row)
            if row["status"] == "running" and owner_alive(row) is not False:
                where = f"process {row['owner_pid']} on {row['owner_host']}" \
                    if row.get("owner_pid") is not None else "another process"
                raise UserError(f"session {row['uid']} is being run by {where}; wait for it to "
                                f"finish (or stop it) before resuming")
            owner = current_owner()
            c.execute("UPDATE sessions SET status = 'running', finished_utc = NULL,"
                      " owner_pid = ?, owner_host = ?, owner_start = ? WHERE id = ?",
                      (owner["owner_pid"], owner["owner_host"], owner["owner_start"], row["id"]))
        return cls(store, SessionRef(int(session["id"]), str(session["uid"])))

    def add_benchmark(self, name: str, *, position: int | None = None,
                      command: str | None = None, argv: Sequence[str] | None = None,
                      parameters: Mapping[str, Any] | None = None,
                      setup_id: int | None = None) -> int:
        """Add a benchmark to the session; return its id. ``position`` defaults to the next."""
        if position is None:
            row = self.store.conn.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM benchmarks"
                                          " WHERE session_id = ?", (self.ref.id,)).fetchone()
            position = int(row[0])
        return self.store.add_benchmark(self.ref.id, name, position=position, command=command,
                                        argv=argv, parameters=parameters, setup_id=setup_id)

    def add_metric(self, name: str, *, unit: str | None, origin: str,
                   pattern: str | None = None) -> None:
        """Declare a program-reported metric of the session (its unit and where it comes from)."""
        self.store.add_metric(self.ref.id, name, unit=unit, origin=origin, pattern=pattern)

    def add_run(self, benchmark_id: int, *, seq: int | None = None, iteration: int,
                warmup: bool = False, worker: int = 0, setup_id: int | None = None,
                fields: Mapping[str, Any],
                samples: Mapping[str, Any] | None = None,
                measurements: Any = ()) -> int:
        """Write one finished run with its samples and measurements in one transaction; return
        its id. ``fields`` are harness columns (times in ns, RSS in KiB); ``seq`` defaults to
        the next free sequence number of the session."""
        if seq is not None:  # the store's add_run is one transaction (a run's own savepoint
            # inside an outer one was two more statements per run, ~15 % of its store time)
            return self.store.add_run(self.ref.id, benchmark_id, seq=seq, iteration=iteration,
                                      warmup=warmup, worker=worker, setup_id=setup_id,
                                      fields=fields, samples=samples, measurements=measurements)
        # the next seq is read inside the run's write transaction (SQLite's write lock, the
        # team store's advisory lock): concurrent writers of one session never take one number twice
        with self.store.transaction():
            seq = self.store.next_seq(self.ref.id)
            return self.store.add_run(self.ref.id, benchmark_id, seq=seq, iteration=iteration,
                                      warmup=warmup, worker=worker, setup_id=setup_id,
                                      fields=fields, samples=samples, measurements=measurements)

    def update(self, **fields: Any) -> None:
        """Set session columns (protocol, metadata, system_checks, source ...)."""
        self.store.update_session(self.ref.id, **fields)

    def finish(self, status: str, load_after: Any = None) -> None:
        """End the session: ``done`` (stored as ``complete``), ``interrupted`` or ``failed``,
        with its end time (UTC) and the load averages after it."""
        if status not in FINISH_STATUSES:
            raise ValueError(f"finish status must be one of {sorted(FINISH_STATUSES)}, not {status!r}")
        self.store.finish_session(self.ref.id, FINISH_STATUSES[status], load_after=load_after)
