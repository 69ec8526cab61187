"""The team roles of docs/team-store.md, with their GRANTs run verbatim from
that page, on a real throwaway PostgreSQL server. "One login role per person" used to fail with
"permission denied for table benchlab_schema_version"; now a writer runs, resumes and imports,
a reader reads, and a role without the grants gets one line naming the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error

DOC = Path(__file__).resolve().parents[2] / "docs" / "team-store.md"


def _sql_blocks() -> tuple[str, str]:
    """(the superuser's block, the admin's GRANT block) of docs/team-store.md."""
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S)
    superuser = next(b for b in blocks if "CREATE ROLE" in b)
    grants = next(b for b in blocks if "GRANT" in b)
    return superuser, grants


@pytest.fixture(scope="module")
def team(pg_server, tmp_path_factory):
    """The documented setup: URL of each login role (admin, alice the writer, carol the
    reader, dave with no role), after the admin created the tables and ran the GRANTs."""
    import psycopg

    prefix, host = pg_server
    superuser, grants = _sql_blocks()
    with psycopg.connect(f"{prefix}postgres?host={host}", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS benchlab")
        for role in ("alice", "carol", "dave", "benchlab_writer", "benchlab_reader",
                     "benchlab_admin"):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
        for statement in filter(str.strip, superuser.split(";")):
            conn.execute(statement)
        conn.execute("CREATE ROLE dave LOGIN")
    url = {r: f"postgresql://{r}@/benchlab?host={host}"
           for r in ("benchlab_admin", "alice", "carol", "dave")}
    # the admin creates the tables, as the page says
    run_cli("run", "-r", "1", "-n", "store-created", "true", db=url["benchlab_admin"],
            check=True)
    with psycopg.connect(url["benchlab_admin"], autocommit=True) as conn:
        for statement in filter(str.strip, grants.split(";")):
            conn.execute(statement)
    return url


def test_a_writer_runs_shows_and_imports(team, tmp_path):
    proc = run_cli("run", "-r", "3", "-w", "0", "--session-name", "mine", "true", db=team["alice"])
    assert proc.returncode == 0, proc.stderr
    shown = run_cli("show", "mine", db=team["alice"])
    assert shown.returncode == 0, shown.stderr
    export = tmp_path / "e.json"
    export.write_text(run_cli("export", "--format", "json", "mine", db=team["alice"],
                              check=True).stdout)
    imported = run_cli("import", str(export), "--allow-duplicate", db=team["alice"])
    assert imported.returncode == 0, imported.stderr


def test_a_reader_reads_and_cannot_write(team):
    run_cli("run", "-r", "3", "-w", "0", "--session-name", "for-carol", "true", db=team["alice"], check=True)
    listed = run_cli("list", db=team["carol"])
    assert listed.returncode == 0 and "for-carol" in listed.stdout, listed.stderr
    assert run_cli("show", "for-carol", db=team["carol"]).returncode == 0
    refused = run_cli("run", "-r", "2", "true", db=team["carol"])
    assert_one_line_error(refused, "permission denied", "docs/team-store.md")


def test_a_role_without_grants_is_one_line_naming_the_page(team):
    proc = run_cli("list", db=team["dave"])
    assert_one_line_error(proc, "permission denied", "docs/team-store.md")


def test_the_store_holds_no_environment_key(team):
    run_cli("run", "-r", "1", "-w", "0", "true", db=team["alice"], check=True)
    import psycopg

    with psycopg.connect(team["carol"]) as conn:
        rows = conn.execute("SELECT key FROM store_meta").fetchall()
    assert ("env_key",) not in rows
