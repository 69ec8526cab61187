"""The PostgreSQL backend: a team store many machines share (``--db postgresql://...`` or a
libpq keyword string ``host=db1 dbname=bench user=ci``).

The connection that speaks the store's SQLite dialect to PostgreSQL is
:mod:`benchlab.store.backends.pg_connection`; it and psycopg are imported only when such a
store is opened.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: The keywords of a libpq connection string (``host=... dbname=...``), PostgreSQL 17's list.
LIBPQ_KEYWORDS = frozenset("""
    host hostaddr port dbname user password passfile require_auth channel_binding
    connect_timeout client_encoding options application_name fallback_application_name
    keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication
    gssencmode sslmode requiressl sslcompression sslcert sslkey sslpassword sslcertmode
    sslrootcert sslcrl sslcrldir sslsni requirepeer ssl_min_protocol_version
    ssl_max_protocol_version krbsrvname gsslib gssdelegation service target_session_attrs
    load_balance_hosts sslnegotiation""".split())
#: ``WORD=`` at the start of a keyword string (a file name has no ``=``).
KEYWORD_START = r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*="


def is_postgres_target(db: str | os.PathLike | None) -> bool:
    """Whether ``--db`` names a PostgreSQL database rather than an SQLite file: a
    ``postgresql://`` (or ``postgres://``) URL, or a libpq keyword string such as
    ``host=db1 port=5432 dbname=bench user=ci``.

    A value that begins ``WORD=`` is taken as a keyword string when WORD is a libpq keyword or
    the value holds white space: an SQLite file named ``host=... password=...`` (world
    readable, named after the password) is never created by mistake; such a value that libpq
    cannot parse is refused when it is opened. A file with such a name is still reachable as
    ``./NAME``.
    """
    if db is None:
        return False
    text = os.fspath(db)
    if text.startswith(("postgresql://", "postgres://")):
        return True
    if "=" not in text:
        return False
    match = re.match(KEYWORD_START, text)
    return match is not None and (match.group(1) in LIBPQ_KEYWORDS
                                  or any(c.isspace() for c in text.strip()))


class PostgresBackend:
    """A store in a PostgreSQL database (see the module docstring)."""

    name = "postgres"

    def claims(self, target: str) -> bool:
        """A URL or a libpq keyword string (:func:`is_postgres_target`)."""
        return is_postgres_target(target)

    def open(self, store_class: Any, target: str,
             readonly: bool) -> Any:
        """Connect (psycopg is imported here, never before) and migrate; the store's ``path``
        is the target with any password redacted."""
        from benchlab.errors import require_extra

        require_extra("psycopg", "postgres", load=False)
        from benchlab.store.backends.pg_connection import connect, redact

        return store_class.adopt(connect(target, readonly), redact(target), readonly, self)

    def files(self, target: str) -> list[str]:
        """None: the server owns the files."""
        return []

    def vacuum(self, store: Any) -> tuple[int | None, int | None]:
        """``VACUUM ANALYZE`` of benchlab's tables (outside a transaction, as it must run)."""
        raw = store.conn.raw
        previous = raw.autocommit
        raw.autocommit = True  # VACUUM cannot run inside a transaction block
        try:
            raw.execute("VACUUM ANALYZE")
        finally:
            raw.autocommit = previous
        return None, None


BACKEND = PostgresBackend()
