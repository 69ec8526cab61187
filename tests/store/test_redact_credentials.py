"""A database password typed in ``--db postgresql://user:PW@...`` was
stored in ``sessions.command_line`` (and the environment's argv), then exported and bundled.
It is redacted before anything is stored. Runs against a real throwaway PostgreSQL server
(``trust`` authentication, so the typed password is accepted and ignored)."""

from __future__ import annotations

import pytest

from benchlab.store.db import Store
from benchlab.store.writer import redact_command_line, redact_secrets
from tests.cli.forked import run_cli

SECRET = "hunter2xyz"


@pytest.mark.parametrize("text, expect", [
    ("postgresql://bob:hunter2@db:5432/x", "postgresql://bob:***@db:5432/x"),
    ("--db=postgres://bob:p%40ss@h/x?sslmode=require", "--db=postgres://bob:***@h/x?sslmode=require"),
    ("host=db user=bob password=hunter2 dbname=x", "host=db user=bob password=*** dbname=x"),
    ("password='a b' host=x", "password=*** host=x"),
    ("postgresql://h/x?password=zz&sslmode=require", "postgresql://h/x?password=***&sslmode=require"),
    ("postgresql://bob@h/x", "postgresql://bob@h/x"),
    ("./bench --size 10:20", "./bench --size 10:20"),
])
def test_redact_secrets(text, expect):
    assert redact_secrets(text) == expect


def test_redact_command_line_keeps_everything_else():
    assert redact_command_line(["benchlab", "run", "--db", "postgresql://u:pw@h/d", "true"]) == \
        ["benchlab", "run", "--db", "postgresql://u:***@h/d", "true"]
    assert redact_command_line(None) is None


def test_password_in_db_url_is_never_stored_exported_or_bundled(pg_url, tmp_path):
    # pg_url is postgresql://benchlab-test@/DB?host=...: put a password in it
    url = pg_url.replace("benchlab-test@", f"benchlab-test:{SECRET}@")
    proc = run_cli("run", "-r", "3", "-w", "0", "-n", "t", "true", "--db", url, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    with Store.open(pg_url, readonly=True) as store:
        [session] = store.sessions()
        row = store.get_session(session["uid"])
        assert SECRET not in repr(row["command_line"]) and "***" in repr(row["command_line"])
        assert SECRET not in repr(row.get("environment"))
        dumped = [repr(tuple(r)) for table in ("sessions", "environments")
                  for r in store.conn.execute(f"SELECT * FROM {table}").fetchall()]
    assert not any(SECRET in d for d in dumped)
    export = run_cli("export", "--format", "json", "--db", pg_url, check=True)
    assert SECRET not in export.stdout
    bundle = tmp_path / "b.benchlab.tar.gz"
    made = run_cli("bundle", session["uid"], "-o", str(bundle), "--db", pg_url, cwd=tmp_path,
                   timeout=300)
    assert made.returncode == 0, made.stderr
    import tarfile

    with tarfile.open(bundle) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        assert members
        for member in members:
            assert SECRET.encode() not in tar.extractfile(member).read(), member.name


def test_an_older_stores_password_is_not_exported(tmp_path):
    """A session stored before redaction holds the password: export (JSON, long CSV) and
    bundle redact it on the way out."""
    import json
    import sqlite3

    db = tmp_path / "old.db"
    run_cli("run", "-r", "3", "-w", "0", "true", db=db, check=True)
    argv = ["benchlab", "run", "--db", f"postgresql://bob:{SECRET}@db/x", "true"]
    with sqlite3.connect(db) as conn:
        env = json.loads(conn.execute("SELECT environment FROM sessions").fetchone()[0])
        env["process"]["argv"] = argv
        conn.execute("UPDATE sessions SET command_line = ?, environment = ?",
                     (json.dumps(argv), json.dumps(env)))
    for fmt in ("json", "csv"):
        out = run_cli("export", "--format", fmt, db=db, check=True).stdout
        assert SECRET not in out and "bob:***@db" in out, fmt
