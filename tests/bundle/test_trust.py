"""A stranger's bundle runs nothing unasked, and its paths never reach this file system.

The bundle is a real one (the JayBeams order book, measured here) rewritten as a stranger would:
its commands, its ``prepare`` hook and its shell would each create a marker file, and its
stdout, samples-file, stdin and working-directory fields name paths of this machine (a
samples file benchlab would delete before every run). Re-signed, it verifies as a bundle.

- ``reproduce`` without a terminal and without ``--trust``: one line, exit 2, nothing run;
- ``--show-plan`` lists every command, hook, the shell and the unused paths, and runs nothing;
- at a terminal (a real pty), answering "n" runs nothing;
- ``--analysis-only`` and ``import`` run nothing;
- a plan damaged in its shape (``"benchmarks": "x"``, ``"placement": [1]``) is one line;
- ``--trust`` runs it: the markers appear where the commands put them, and the victim file
  the samples field named is untouched, no stdout file appears at the bundle's path.
"""

from __future__ import annotations

import json
import os
import pty
import select
import time
from pathlib import Path

import pytest

from tests.bundle.tamper import with_protocol
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error


@pytest.fixture
def hostile(bundled, tmp_path) -> dict:
    """The rewritten bundle and the paths it aims at (none exists yet, but the victim)."""
    marks = {k: tmp_path / f"marker-{k}" for k in ("command", "prepare", "shell")}
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    outside = tmp_path / "outside"

    def edit(protocol: dict) -> None:
        protocol["shell"] = f"sh -c 'touch {marks['shell']}; exec sh \"$@\"' sh"
        protocol["runs"], protocol["warmup"], protocol["min_runs"] = 2, 0, 1
        for i, bench in enumerate(protocol["benchmarks"]):
            # the samples file by its relative name: where the reproduction reads it
            bench["command"] = f"true; touch {marks['command']}; echo lat,1 > victim.txt"
            bench["prepare"] = f"touch {marks['prepare']}"
        protocol["stdout"] = str(outside / "stdout.txt")
        protocol["samples_csv"] = str(victim)
        protocol["stdin_path"] = "/etc/hostname"
        protocol["cwd"] = str(outside)

    bundle = with_protocol(bundled, tmp_path / "hostile.benchlab.tar.gz", edit)
    return {"bundle": bundle, "marks": marks, "victim": victim, "outside": outside}


def _nothing_ran(h: dict) -> None:
    assert not any(m.exists() for m in h["marks"].values())
    assert h["victim"].read_text() == "precious\n"
    assert not h["outside"].exists()


def _sessions(db: Path) -> int:
    if not db.exists():
        return 0
    return len(json.loads(run_cli("list", "--json", db=db, check=True).stdout))


def test_nothing_runs_without_consent(hostile, tmp_path):
    db = tmp_path / "mine.db"
    proc = run_cli("reproduce", str(hostile["bundle"]), db=db, cwd=tmp_path)
    assert_one_line_error(proc, "--show-plan", "--trust")
    _nothing_ran(hostile)
    assert _sessions(db) == 0

    shown = run_cli("reproduce", str(hostile["bundle"]), "--show-plan", db=db, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    for needle in (f"touch {hostile['marks']['command']}", f"prepare hook: touch "
                   f"{hostile['marks']['prepare']}", str(hostile["marks"]["shell"]),
                   str(hostile["victim"]), "/etc/hostname", "as root" if os.geteuid() == 0
                   else "as this user"):
        assert needle in text, (needle, text)
    sandboxed = run_cli("reproduce", str(hostile["bundle"]), "--show-plan", "--isolation",
                        "bwrap", db=db, cwd=tmp_path).stdout
    assert "isolation bwrap" in sandboxed and "hooks (and the shell that runs them) run " \
        "outside --isolation bwrap" in sandboxed, sandboxed
    as_data = json.loads(run_cli("reproduce", str(hostile["bundle"]), "--show-plan", "--json",
                                 db=db, cwd=tmp_path).stdout)
    (session,) = as_data["sessions"]
    assert session["benchmarks"][0]["hooks"] == {"prepare": f"touch {hostile['marks']['prepare']}"}
    assert session["ignored"]["samples_csv"] == str(hostile["victim"])
    _nothing_ran(hostile)

    assert_one_line_error(run_cli("reproduce", str(hostile["bundle"]), "--trust",
                                  "--isolation", "nonsense", db=db, cwd=tmp_path),
                          "--isolation 'nonsense'")
    run_cli("reproduce", str(hostile["bundle"]), "--analysis-only", db=db, cwd=tmp_path)
    imported = run_cli("import", str(hostile["bundle"]), db=db, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    _nothing_ran(hostile)
    assert _sessions(db) == 1  # the import, and no reproduction


def _at_a_terminal(args: list[str], answer: bytes, cwd: Path, timeout: float = 120) -> tuple[int, str]:
    """Run benchlab with a pty as its terminal; type ``answer`` at the question."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the pty
        os.chdir(cwd)
        os.execv(BENCHLAB, [BENCHLAB, *args])
    out = b""
    answered = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the pty
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"Run these commands here?" in out:
                os.write(fd, answer)
                answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_at_a_terminal_no_runs_nothing(hostile, tmp_path):
    db = tmp_path / "mine.db"
    code, out = _at_a_terminal(["reproduce", str(hostile["bundle"]), "--db", str(db)], b"n\n",
                               tmp_path)
    assert "Run these commands here?" in out and f"touch {hostile['marks']['command']}" in out
    assert code == 2 and "nothing was run" in out, out
    _nothing_ran(hostile)
    assert _sessions(db) == 0


@pytest.mark.slow
def test_trusted_runs_confined_to_scratch(hostile, tmp_path):
    db = tmp_path / "mine.db"
    proc = run_cli("reproduce", str(hostile["bundle"]), "--trust", "--json", db=db,
                   cwd=tmp_path, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    marks = hostile["marks"]
    assert marks["command"].exists() and marks["prepare"].exists() and marks["shell"].exists()
    assert hostile["victim"].read_text() == "precious\n"  # never deleted as a samples file
    assert not hostile["outside"].exists()  # neither the cwd nor the stdout file
    warnings = json.loads(proc.stdout)["warnings"]
    assert any("/etc/hostname" in w and "not read" in w for w in warnings), warnings


@pytest.mark.parametrize("field,value", [("benchmarks", "x"), ("placement", [1]),
                                         ("metrics", 7), ("shell", ["sh"])])
def test_damaged_plan_is_one_line(bundled, tmp_path, field, value):
    def edit(protocol: dict) -> None:
        protocol[field] = value

    bad = with_protocol(bundled, tmp_path / "plan.benchlab.tar.gz", edit)
    for extra in ((), ("--show-plan",), ("--trust",)):
        assert_one_line_error(run_cli("reproduce", str(bad), *extra, cwd=tmp_path),
                              "damaged", field)


@pytest.mark.slow
def test_trusted_runs_in_a_bwrap_sandbox(bundled, tmp_path):
    """``--isolation bwrap`` reaches every run: what a command writes to /tmp, /var/tmp and
    /dev/shm stays in the sandbox's own (a host file of the same name keeps its content), a
    write elsewhere is refused by the read-only root (its run fails, one line), and no file
    appears on the host."""
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bwrap (bubblewrap) is not installed here; scripts/setup.sh installs it")
    name = f"benchlab-bwrap-victim-{os.getpid()}"
    victim = Path("/tmp") / name
    victim.write_text("the host's\n")
    private = [Path("/var/tmp") / name, Path("/dev/shm") / name]
    marker = Path.home() / f".benchlab-bwrap-marker-{os.getpid()}"
    marker.unlink(missing_ok=True)

    def edit(protocol: dict) -> None:
        protocol["shell"] = "sh"
        protocol["runs"], protocol["warmup"], protocol["min_runs"] = 2, 0, 1
        for bench in protocol["benchmarks"]:
            bench["command"] = "; ".join([*(f"echo bundle > {p}" for p in [victim, *private]),
                                          f"touch {marker}"])

    bad = with_protocol(bundled, tmp_path / "escape.benchlab.tar.gz", edit)
    try:
        proc = run_cli("reproduce", str(bad), "--trust", "--isolation", "bwrap",
                       db=tmp_path / "mine.db", cwd=tmp_path, timeout=300)
        assert proc.returncode == 2 and f"touch {marker}" in proc.stderr, proc.stderr
        assert not marker.exists()
        assert victim.read_text() == "the host's\n"
        assert not [p for p in private if p.exists()]
    finally:
        for p in (victim, *private, marker):
            p.unlink(missing_ok=True)
