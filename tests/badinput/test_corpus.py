"""The bad-input corpus: every case through the console script's code in
a process of its own.

A case passes when benchlab exits 2 with exactly one ``benchlab: error:`` line that names the
problem, no traceback, the store's content unchanged (digest of its SQL dump, or of its bytes
when it is corrupt on purpose), no session left ``running``, and no ``benchlab-*`` directory left
in its TMPDIR. The cases are data (tests/badinput/cases.py); the ones that fail today are marked
xfail(strict) with the area that must fix them (tests/badinput/known_failures.py), so a fix
shows up as an XPASS to remove from that list.

Where each case runs: every sixteenth case (a fixed sample spread over every command and area)
and any case whose environment differs in what a fresh process reads at start run the real
console script, ``.venv/bin/benchlab``; the others run the same console script file in a child
forked from a server that has imported the commands already (tests/badinput/forkserver.py says
what that skips and why each child still starts as a fresh process would). The sample's cases
run forked as well, and the two outcomes must agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.badinput.cases import CASES, Case
from tests.badinput.forkserver import ForkServer, differs_at_start
from tests.badinput.harness import (
    CASE_TIMEOUT_S,
    corrupt_page_two,
    make_input,
    run_case,
    store_state,
)
from tests.badinput.known_failures import KNOWN_FAILURES


def check_outcome(case: Case, proc, before: tuple[str, int], after: tuple[str, int],
                  leftovers: list[str]) -> list[str]:
    """Everything wrong with one case's outcome, one string per problem (empty: it passed)."""
    problems = []
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2:
        problems.append(f"exit {proc.returncode}, not 2")
    if "Traceback" in proc.stderr:
        problems.append("a traceback reached the user")
    if len(lines) != 1 or not lines[0].startswith("benchlab: error:"):
        problems.append(f"{len(lines)} stderr lines, not one 'benchlab: error:' line")
    elif case.expect.lower() not in lines[0].lower():
        problems.append(f"the error does not name {case.expect!r}")
    if before[0] != after[0] and not case.store_may_change:
        problems.append("the store's content changed")
    if after[1]:
        problems.append(f"{after[1]} session(s) left 'running'")
    if leftovers:
        problems.append(f"left behind: {leftovers}")
    return problems


#: Every CONSOLE_SCRIPT_EVERY-th case (by its place in CASES, so spread over every command and
#: area) runs the real console script; the others run forked from the fork server
#: (tests/badinput/forkserver.py), which skips only the interpreter's start-up, the imports and
#: the teardown of modules after the atexit handlers.
CONSOLE_SCRIPT_EVERY = 16


def _param(index: int, case: Case):
    marks = list(case.marks)
    if case.id in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(strict=True, reason=f"owner: {KNOWN_FAILURES[case.id]}"))
    console = index % CONSOLE_SCRIPT_EVERY == 0
    return pytest.param(case, console, id=case.id, marks=marks)


def run_and_judge(case: Case, root: Path, corpus, readonly_dir,
                  forks: ForkServer | None) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run one case in fresh directories under ``root`` and judge it: (process, problems).

    ``forks`` None runs the real console script; so does a fork server when the case's
    environment differs from the server's in what a fresh process reads at start."""
    casedir = root / "casedir"
    casedir.mkdir()
    scratch = root / "tmp"
    scratch.mkdir()
    storedir = casedir / "storedir"
    storedir.mkdir()
    db = storedir / "store.db"
    if case.store != "none":
        shutil.copyfile(corpus.template_db, db)
    if case.store == "corrupt":
        corrupt_page_two(db)
    input_path = make_input(case.input, case.id.replace("%", "pct"), casedir, corpus)
    values = {"{db}": str(db), "{dir}": str(casedir), "{in}": str(input_path or ""),
              "{big}": str(corpus.big_line), "{profile}": str(corpus.profile),
              "{variability}": str(corpus.variability), "{out}": str(casedir / "out.csv")}
    argv = []
    for arg in case.argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        argv.append(arg)
    if case.store == "readonly-dir" and not readonly_dir(storedir):
        pytest.skip("chattr +i is not available here: no read-only directory for root")
    raw = case.store == "corrupt"
    before = store_state(db, raw)
    entries_before = {p.name for p in casedir.iterdir()}
    env = dict(os.environ, COLUMNS="160", TMPDIR=str(scratch), BENCHLAB_DB=str(db))
    if forks is not None and not differs_at_start(env, forks.env, forks.import_reads):
        proc = forks.run(argv, str(casedir), env, CASE_TIMEOUT_S)
    else:
        proc = run_case(argv, casedir, env)
    after = store_state(db, raw)
    leftovers = sorted(p.name for p in scratch.iterdir() if p.name.startswith("benchlab"))
    # The case directory is the current directory: a refused command creates nothing there
    # (--db :memory: used to leave a file named ':memory:'); the measured program of a
    # samples-csv case writes out.csv itself.
    allowed = {"out.csv"} if case.store_may_change else set()
    leftovers += sorted(f"./{p.name}" for p in casedir.iterdir()
                        if p.name not in entries_before | allowed)
    return proc, check_outcome(case, proc, before, after, leftovers)


@pytest.mark.parametrize("case, console_script", [_param(i, c) for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(case: Case, console_script: bool,
                                                          corpus, tmp_path, readonly_dir,
                                                          forks):
    """One case, judged (see the module's docstring). A case of the console-script sample also
    runs forked, in directories of its own, and both ways must give the same outcome: exit
    status, stdout, stderr (with :func:`_neutral` names) and problems. That fails if a forked
    child carried state from the server or an earlier case (a cached $TMPDIR, a variable read at
    import, an open store) or ended differently from a process of its own."""
    root = tmp_path / "case"
    root.mkdir()
    proc, problems = run_and_judge(case, root, corpus, readonly_dir,
                                   None if console_script else forks)
    if os.environ.get("BADINPUT_LOG"):
        # One JSON line per case, for regenerating known_failures.py from a real run.
        with open(os.environ["BADINPUT_LOG"], "a") as log:
            log.write(json.dumps({"id": case.id, "area": case.area, "problems": problems,
                                  "stderr": proc.stderr[-300:]}) + "\n")
    assert not problems, (f"{case.id} [{case.area}]: {'; '.join(problems)}\n"
                          f"argv: {proc.args}\nstderr: {proc.stderr[-1500:]}")
    if console_script:
        twin_root = tmp_path / "forked"
        twin_root.mkdir()
        twin, twin_problems = run_and_judge(case, twin_root, corpus, readonly_dir, forks)
        console = (proc.returncode, _neutral(proc.stdout, root), _neutral(proc.stderr, root),
                   problems)
        forked = (twin.returncode, _neutral(twin.stdout, twin_root),
                  _neutral(twin.stderr, twin_root), twin_problems)
        assert forked == console, f"{case.id}: forked {forked!r} != console script {console!r}"


def _neutral(text: str, root: Path) -> str:
    """``text`` with the case's own directory as {root} and a new session's random uid as
    {uid}: the two ways run in two directories and each stores its own session."""
    return re.sub(r"session [0-9a-f]{8}\b", "session {uid}", text.replace(str(root), "{root}"))


def test_the_corpus_covers_every_reader_spoil_and_area():
    """The table itself: size, unique ids, every reader fed every spoil, known owners only."""
    from tests.badinput import cases, makers
    assert len(CASES) >= 300
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    for reader in cases.READERS:
        spoils = {c.input[2] for c in CASES if c.input and c.input[0] == "spoil"
                  and c.id.startswith(f"file-{reader}-")}
        expected = set(makers.SPOILS) - ({"directory", "missing"} if reader == "samples-csv"
                                         else set())
        assert spoils == expected, reader
    areas = {cases.RUN, cases.STORE, cases.CONTROL, cases.STATS, cases.MACHINES, cases.CLI}
    assert {c.area for c in CASES} <= areas
    assert set(KNOWN_FAILURES) <= set(ids), set(KNOWN_FAILURES) - set(ids)
    assert set(KNOWN_FAILURES.values()) <= areas
    assert makers.deep_json().count(b"[") == makers.DEEP_LEVELS

