"""Every path benchlab writes goes through one guard: the store is never overwritten.

The enumeration walks the CLI's own Click definitions (every command and subcommand of
``benchlab.cli.main``), so an option added tomorrow that writes a file and forgets the guard
fails here: an option that looks like an output (``-o``, ``--output``, ``--export-*``,
``--report``, ``--plot(s)``, ``--state-file``, ``--samples-csv``, a FILE/DIR/PATH metavar, a
``click.Path``) must be an ``OutputPath``, or be listed below as an input with its reason.
Each guarded option is then run against a real SQLite store, its -wal file, a symbolic link and
a hard link to it, with ``--db`` before and after it: one line, exit 2, store bytes unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchlab.cli.main import cli
from benchlab.cli.output_path import OutputPath
from benchlab.store.paths import output_conflict
from tests.conftest import assert_one_line_error, run_cli

#: Options that name a file or directory benchlab only READS, with why they are not outputs.
INPUTS = {
    ("import", "path"): "the file or directory imported",
    ("run", "input_"): "the commands' stdin",
    ("run", "calibration"): "a calibration JSON read",
    ("report", "variability"): "variability documents read",
    ("report", "predict"): "application results read",
    ("reproduce", "bundle_path"): "the bundle read",
    ("run", "shell_path"): "the shell executable run",
    ("predict", "variability_path"): "a variability document read",
    ("store copy", "src"): "a store read",
    ("store copy", "dst"): "a store written as a store (sessions inserted), not overwritten",
}
#: The same, for a parameter every command that has it only reads.
INPUTS_ANYWHERE = {
    "tls_dir": "the team's certificates read (--tls-dir, on every --cluster command)",
}

OUTPUT_NAMES = {"-o", "--output", "--report", "--plot", "--plots", "--state-file",
                "--samples-csv", "--out", "--save", "--write", "--junit", "--markdown"}


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    found = []

    def walk(command: click.Command, path: list[str]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), path + [name])
        else:
            found.append((" ".join(path), command))

    walk(cli, [])
    return found


def _looks_like_output(param: click.Parameter) -> bool:
    if param.name == "db" or param.name in INPUTS_ANYWHERE or \
            isinstance(param, click.Option) and param.is_flag:
        return False
    opts = set(param.opts) | set(param.secondary_opts)
    if opts & OUTPUT_NAMES or any(o.startswith("--export-") or o.endswith(("-file", "-dir"))
                                  for o in opts):
        return True
    if isinstance(param.type, click.Path):
        return True
    metavar = (getattr(param, "metavar", None) or "").upper()
    return bool(re.search(r"\b(FILE|DIR|DIRECTORY|PATH)\b|\.(TAR|JSON|HTML|CSV|MD)\b",
                          metavar + " " + (param.name or "").upper().replace("_", " ")))


def _guarded() -> list[tuple[str, click.Command, click.Parameter]]:
    return [(name, command, p) for name, command in _commands() for p in command.params
            if isinstance(p.type, OutputPath)]


def test_every_output_option_is_guarded():
    unguarded = [f"{name} {'/'.join(p.opts)}" for name, command in _commands()
                 for p in command.params
                 if _looks_like_output(p) and not isinstance(p.type, OutputPath)
                 and (name, p.name) not in INPUTS]
    assert not unguarded, f"output options without the OutputPath guard: {unguarded}"
    params = {(name, p.name) for name, command in _commands() for p in command.params}
    assert set(INPUTS) <= params, f"stale INPUTS entries: {set(INPUTS) - params}"
    # Every output option: the enumeration really finds them.
    names = {(name, p.opts[-1]) for name, _, p in _guarded()}
    for expected in [("report", "--output"), ("report", "--plots"), ("compare", "--report"),
                     ("run", "--report"), ("run", "--output"), ("run", "--samples-csv"),
                     ("run", "--export-json"), ("run", "--export-csv"),
                     ("run", "--export-markdown"), ("run", "--export-asciidoc"),
                     ("run", "--export-orgmode"), ("export", "--output"),
                     ("bundle", "--output"), ("study report", "--output"),
                     ("profile", "--output"), ("calibrate", "--output"),
                     ("variability", "--plot"), ("system tune", "--state-file"),
                     ("cluster certs", "directory")]:
        assert expected in names, expected


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A real SQLite store in WAL mode (so -wal and -shm exist), with one row."""
    path = tmp_path / "x.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("CREATE TABLE t (v)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    (tmp_path / "x.db-wal").write_bytes(b"")  # as a live store has, while open
    (tmp_path / "link.db").symlink_to(path)
    os.link(path, tmp_path / "hard.db")
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _targets(store: Path) -> list[str]:
    return [str(store), str(store) + "-wal", str(store.parent / "link.db"),
            str(store.parent / "hard.db"), str(store) + "-journal"]


@pytest.mark.parametrize("name,command,param", _guarded(),
                         ids=[f"{n}:{p.opts[-1]}" for n, _, p in _guarded()])
def test_each_guarded_option_refuses_the_store(name, command, param, store, monkeypatch):
    """In-process (CliRunner through the real group): the refusal comes while parsing, so the
    command's required arguments need not even be given: nothing runs."""
    monkeypatch.chdir(store.parent)
    before = _digest(store)
    has_db = any(p.name == "db" for p in command.params)
    positional = isinstance(param, click.Argument)
    if positional:  # only a command's first argument can be given alone
        assert [p for p in command.params if isinstance(p, click.Argument)][0] is param
    runner = CliRunner()
    for target in _targets(store):
        given = [target] if positional else [param.opts[-1], target]
        orders = ([[*given, "--db", str(store)], ["--db", str(store), *given]]
                  if has_db else [given])
        for tail in orders:
            result = runner.invoke(cli, [*name.split(), *tail],
                                   env={"BENCHLAB_DB": str(store)})
            assert result.exit_code == 2, (tail, result.output)
            assert "would destroy it" in result.stderr, (tail, result.stderr)
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert _digest(store) == before


def test_guard_detects_links_templates_and_other_stores(store, tmp_path):
    assert output_conflict(tmp_path / "fine.html", store) is None
    assert output_conflict(tmp_path / "x.db-shm", store) is not None
    assert output_conflict(tmp_path / "link.db", store) is not None
    assert output_conflict(tmp_path / "hard.db", store) is not None
    # A symbolic link to the -wal file that does not exist yet (resolved by name).
    (tmp_path / "later").symlink_to(tmp_path / "x.db-journal")
    assert output_conflict(tmp_path / "later", store) is not None
    # --samples-csv 'x{worker}...': worker 0's file would be the store
    (tmp_path / "s.db").write_bytes(b"")
    assert output_conflict(str(tmp_path / "s{worker}.db"), tmp_path / "s0.db") is not None
    assert output_conflict(str(tmp_path / "{worker}.csv"), store) is None
    # Any other SQLite store, even one the command does not use, or a server store.
    assert "SQLite" in output_conflict(store, "postgresql://u@h/db")
    assert output_conflict(tmp_path / "new.json", None) is None


def test_a_directory_where_a_file_goes_is_one_line(tmp_path):
    """Every file option refuses a directory while parsing (the state file, an export...)."""
    db = tmp_path / "x.db"
    for args in (["export", "-o", str(tmp_path)], ["run", "--export-json", str(tmp_path), "true"],
                 ["system", "tune", "--state-file", str(tmp_path)],
                 ["report", "-o", str(tmp_path)]):
        assert_one_line_error(run_cli(*args, env={"BENCHLAB_DB": str(db)}), "is a directory")
    assert not db.exists()


def test_run_export_onto_the_store_measures_nothing(tmp_path):
    """The end-to-end case of the issue, through the console script: the command would create a
    marker; it never runs, no session is stored, the store's bytes are unchanged."""
    db = tmp_path / "x.db"
    run_cli("run", "-N", "--runs", "2", "true", "-q", db=db, check=True)
    before = _digest(db)
    marker = tmp_path / "marker"
    for option in ("--export-json", "--export-csv", "--export-markdown", "--report"):
        proc = run_cli("run", "--runs", "2", option, str(db), f"touch {marker}", db=db,
                       cwd=tmp_path)
        assert_one_line_error(proc, "would destroy it")
        assert not marker.exists()
    for args in (["report", "-o", str(db)], ["report", "--format", "markdown", "-o", str(db)],
                 ["compare", "a", "b", "--report", str(db)], ["export", "-o", str(db)]):
        assert_one_line_error(run_cli(*args, db=db, cwd=tmp_path), "would destroy it")
    assert _digest(db) == before
