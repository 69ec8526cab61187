"""``benchlab list`` over many sessions: one line per session whatever the names hold, the
brief session rows equal to the full ones, and no import format (nor rich) loaded to list."""

from __future__ import annotations

import subprocess
import sys

from benchlab.store import SessionWriter, Store
from tests.conftest import run_cli

HOSTILE = ["plain", "two\nlines", "tab\there", "\x1b[31mred", "ünï  spaced", "x" * 80, ""]


def _store(path, n: int) -> list[str]:
    uids = []
    with Store.open(path) as store:
        for i in range(n):
            name = HOSTILE[i % len(HOSTILE)] or None
            w = SessionWriter.create(store, "run", name=name, environment=None)
            b = w.add_benchmark("b", command=f"sleep 0.{i}; echo '{HOSTILE[i % len(HOSTILE)]}'")
            w.add_run(b, iteration=0, fields={"status": "ok", "wall_ns": 1000})
            w.finish("done" if i % 3 else "failed")
            uids.append(w.ref.uid)
    return uids


def test_list_prints_one_line_per_session_newest_first_even_for_hostile_names(db_path):
    uids = _store(db_path, 300)
    out = run_cli("list", db=db_path, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == f"sessions in {db_path}" and lines[1].split()[:4] == ["uid", "name",
                                                                            "kind", "status"]
    assert [line.split()[0] for line in lines[2:]] == uids[::-1]  # one line each, in order
    assert "\x1b" not in out and "\t" not in out  # piped: no colour; names cannot steer a terminal
    assert all(("failed" if i % 3 == 0 else "complete") in lines[2 + 299 - i].split()
               for i in range(300))
    assert "x" * 80 not in out and "x" * 31 + "…" in out  # long names cut, not wrapped


def test_brief_rows_are_the_full_rows_listing_columns(db_path):
    _store(db_path, 20)
    with Store.open(db_path, readonly=True) as store:
        full, brief = store.sessions(), store.sessions(brief=True)
    assert len(full) == len(brief) == 20
    for f, b in zip(full, brief):
        assert {k: f[k] for k in b} == b
        assert b["n_runs"] == 1 and b["n_benchmarks"] == 1


def test_list_loads_no_import_format_and_no_rich(db_path):
    _store(db_path, 2)
    code = ("import sys\nfrom benchlab.cli.main import main\n"
            "try:\n    main(['list', '--db', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('rich', 'benchlab.machines',"
            " 'benchlab.store.bundle', 'pandas', 'scipy'))), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(db_path)], capture_output=True,
                          text=True, check=True)
    assert proc.stderr.strip() == "[]", proc.stderr
