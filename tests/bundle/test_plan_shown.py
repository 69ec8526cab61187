"""What ``reproduce --show-plan`` shows is what would run, and ``import`` refuses what
``reproduce`` calls damaged: control characters in a command are shown escaped (a newline shown
as a space showed another command), the program line says it is the bundle's own record and
whether the command runs it, a shell ``none`` is no shell, and a plan damaged in its shape is
refused by ``import`` as by ``reproduce``, in the same words. A real bundle, rewritten and
re-signed as a stranger would (tests/bundle/tamper.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bundle.tamper import resigned, with_protocol
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def _sessions(db: Path) -> int:
    if not db.exists():
        return 0
    return len(json.loads(run_cli("list", "--json", db=db, check=True).stdout))


@pytest.mark.parametrize("field,value", [("benchmarks", "x"), ("placement", [1]),
                                         ("metrics", [{"name": 3}]), ("shell", ["sh"])])
def test_import_refuses_a_plan_reproduce_calls_damaged(bundled, tmp_path, field, value):
    def edit(protocol: dict) -> None:
        protocol[field] = value

    bad = with_protocol(bundled, tmp_path / "plan.benchlab.tar.gz", edit)
    db = tmp_path / "mine.db"
    imported = run_cli("import", str(bad), db=db, cwd=tmp_path)
    assert_one_line_error(imported, "damaged", field)
    assert _sessions(db) == 0
    shown = run_cli("reproduce", str(bad), "--show-plan", db=db, cwd=tmp_path)
    assert_one_line_error(shown, "damaged", field)
    # the same rule, the same words
    assert imported.stderr.split("damaged", 1)[1] == shown.stderr.split("damaged", 1)[1]


def test_control_characters_in_a_command_are_shown_escaped(bundled, tmp_path):
    def edit(protocol: dict) -> None:
        protocol["shell"] = "sh"
        protocol["benchmarks"][0]["command"] = "true\nrm -f victim \x1b[1A\x1b[2K"
        protocol["benchmarks"][0]["prepare"] = "echo\tprepared"

    bundle = with_protocol(bundled, tmp_path / "ctl.benchlab.tar.gz", edit)
    text = run_cli("reproduce", str(bundle), "--show-plan", cwd=tmp_path, check=True).stdout
    assert "$'true\\nrm -f victim \\x1b[1A\\x1b[2K' (shown escaped" in text, text
    assert "prepare hook: $'echo\\tprepared'" in text, text
    assert "\x1b" not in text and "true rm -f" not in text


def test_a_shell_named_none_is_shown_and_run_as_no_shell(bundled, tmp_path):
    def edit(protocol: dict) -> None:
        protocol["shell"] = "none"

    bundle = with_protocol(bundled, tmp_path / "none.benchlab.tar.gz", edit)
    text = run_cli("reproduce", str(bundle), "--show-plan", cwd=tmp_path, check=True).stdout
    assert "without a shell" in text and "(-c COMMAND)" not in text, text
    plan = json.loads(run_cli("reproduce", str(bundle), "--show-plan", "--json",
                              cwd=tmp_path, check=True).stdout)
    assert plan["sessions"][0]["shell"] is None


def test_the_program_line_says_it_is_the_bundles_record_and_what_the_command_runs(
        bundled, tmp_path):
    def change(members: dict[str, bytes]) -> None:
        data = json.loads(members["data/sessions.json"])
        session = data["sessions"][0]
        session["protocol"]["benchmarks"][0]["command"] = "/bin/true"
        members["data/sessions.json"] = json.dumps(data).encode()
        entries = json.loads(members["provenance/executables.json"])
        for entry in entries:
            entry.pop("workload", None)
            entry["program"] = "/usr/bin/sort"
        members["provenance/executables.json"] = json.dumps(entries).encode()

    bundle = resigned(bundled, tmp_path / "prov.benchlab.tar.gz", change)
    text = run_cli("reproduce", str(bundle), "--show-plan", cwd=tmp_path, check=True).stdout
    lines = [line for line in text.splitlines() if "provenance" in line]
    assert lines and all("program recorded by the bundle's provenance: /usr/bin/sort" in line
                         for line in lines), text
    assert any("the command runs /bin/true" in line and "digest says nothing" in line
               for line in lines), text
