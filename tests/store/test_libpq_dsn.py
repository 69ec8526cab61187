"""``--db 'host=... dbname=...'``: a libpq keyword string names a PostgreSQL database, as it does
for psql and psycopg. It used to become an SQLite file named after the whole string (password
included, mode 0644) while nothing reached PostgreSQL. Real console script, a real throwaway
PostgreSQL server (tests/store/conftest.py)."""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import pytest

from benchlab.store.backends.postgres import is_postgres_target
from tests.conftest import assert_one_line_error, run_cli


def _keywords(pg_url: str) -> str:
    """The keyword form of a fixture URL (postgresql://USER@/NAME?host=DIR)."""
    parts = urlsplit(pg_url)
    host = parts.query.split("host=", 1)[1]
    return f"host={host} dbname={parts.path.lstrip('/')} user={parts.username} password=S3cret"


def test_a_keyword_string_stores_in_postgresql_and_creates_no_file(pg_url, tmp_path):
    dsn = _keywords(pg_url)
    proc = run_cli("run", "-r", "2", "true", db=dsn, cwd=tmp_path, check=True)
    assert "S3cret" not in proc.stdout + proc.stderr
    assert os.listdir(tmp_path) == []  # no SQLite file named after the string
    listed = json.loads(run_cli("list", "--json", db=dsn, cwd=tmp_path, check=True).stdout)
    assert len(listed) == 1
    # the same database as its URL: what the keyword string stored is in PostgreSQL
    assert [s["uid"] for s in json.loads(run_cli("list", "--json", db=pg_url,
                                                 check=True).stdout)] == [listed[0]["uid"]]
    shown = run_cli("show", listed[0]["uid"], "--json", db=dsn, check=True).stdout
    assert "S3cret" not in shown  # the stored command line keeps no password


def test_the_reported_command_with_no_server_is_one_line_and_creates_nothing(tmp_path):
    dsn = "host=127.0.0.1 port=1 dbname=benchlab user=alice password=S3cret"
    proc = run_cli("run", "-q", "-r", "2", "true", db=dsn, cwd=tmp_path)
    assert_one_line_error(proc, "cannot connect to PostgreSQL", "password=***")
    assert "S3cret" not in proc.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["a=b c", "dbname=x nosuchkey=1", "host='unclosed"])
def test_a_malformed_keyword_string_is_refused_in_one_line(value, tmp_path):
    proc = run_cli("run", "-q", "-r", "2", "true", db=value, cwd=tmp_path)
    assert_one_line_error(proc, "not a usable PostgreSQL URL or connection string", "./NAME")
    assert os.listdir(tmp_path) == []


def test_a_file_with_such_a_name_is_reached_as_dot_slash(tmp_path):
    name = "./a=b c.db"
    run_cli("run", "-q", "-r", "2", "true", db=name, cwd=tmp_path, check=True)
    assert os.listdir(tmp_path) == ["a=b c.db"]


@pytest.mark.parametrize("value, postgres", [
    ("postgresql://u@h/db", True), ("postgres://h/db", True), ("host=h", True),
    ("dbname = x", True), ("service=team", True), ("a=b c", True),
    ("bench.db", False), ("run=3.db", False), ("./host=h", False), ("my file.db", False),
    ("/tmp/x=1 2.db", False), ("", False)])
def test_what_names_a_postgresql_database(value, postgres):
    assert is_postgres_target(value) is postgres
