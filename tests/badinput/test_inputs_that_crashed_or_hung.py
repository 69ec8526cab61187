"""Inputs that ended in a traceback or never ended; each is now one
``benchlab: error:`` line and exit 2 (or the failure's own code), quickly.

Every case runs the real console script on a real store made by a real run.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with one session of 3 runs of ``true``, and its JSON export beside it."""
    d = tmp_path_factory.mktemp("s15")
    db = d / "s.db"
    run_cli("run", "-r", "3", "-w", "0", "true", db=db, check=True)
    export = run_cli("export", "--format", "json", db=db, check=True)
    (d / "export.json").write_text(export.stdout)
    return db


def _spoiled_export(store: Path, tmp_path: Path, spoil) -> Path:
    doc = json.loads((store.parent / "export.json").read_text())
    spoil(doc["sessions"][0]["benchmarks"][0]["runs"])
    out = tmp_path / "spoiled.json"
    out.write_text(json.dumps(doc))
    return out


def test_samples_csv_naming_a_directory(store, tmp_path):
    proc = run_cli("run", "-r", "1", "--samples-csv", str(tmp_path), "true", db=store)
    assert_one_line_error(proc, "is a directory")


@pytest.mark.parametrize("spoil, expect", [
    (lambda runs: runs[1].update(seq=runs[0]["seq"]), "seq"),        # UNIQUE (session, seq)
    (lambda runs: runs[1].update(status=7), "status"),                 # CHECK (status IN ...)
    (lambda runs: runs[1].update(status="exploded"), "status"),
    (lambda runs: runs[1].update(wall_ns=10 ** 20), "64-bit"),         # OverflowError in SQLite
    (lambda runs: runs[1].update(seq=2 ** 70), "64-bit"),
    (lambda runs: runs[1].update(measurements=[{"source": "x", "name": "y", "value": 1,
                                                "status": "weird"}]), "status"),
], ids=["duplicate-seq", "status-7", "status-text", "huge-wall", "huge-seq", "measurement"])
def test_import_json_the_store_would_refuse(store, tmp_path, spoil, expect):
    spoiled = _spoiled_export(store, tmp_path, spoil)
    fresh = tmp_path / "fresh.db"
    proc = run_cli("import", str(spoiled), db=fresh)
    assert_one_line_error(proc, expect)


def test_import_json_with_a_duplicate_benchmark_name(store, tmp_path):
    doc = json.loads((store.parent / "export.json").read_text())
    benches = doc["sessions"][0]["benchmarks"]
    benches.append(json.loads(json.dumps(benches[0])))
    for i, r in enumerate(benches[1]["runs"]):
        r["seq"] = 100 + i
    spoiled = tmp_path / "two.json"
    spoiled.write_text(json.dumps(doc))
    assert_one_line_error(run_cli("import", str(spoiled), db=tmp_path / "f.db"), "named")


@pytest.mark.parametrize("argv", [
    ("show", "99999999999999999999"),
    ("export", "99999999999999999999"),
    ("show", "a%" * 30000),
    ("export", "a%" * 30000),
    ("report", "-o", "{tmp}/r.md", "a%" * 30000),
], ids=["show-huge-id", "export-huge-id", "show-long", "export-long", "report-long"])
def test_selectors_sqlite_cannot_take(store, tmp_path, argv):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = run_cli(*argv, db=store)
    assert_one_line_error(proc)
    assert len(proc.stderr) < 400, "the error line repeats the whole selector"


@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/urandom", "fifo"])
@pytest.mark.parametrize("fmt", ["csv", "auto", "json"])
def test_import_of_a_file_that_never_ends(tmp_path, kind, fmt):
    """Hashing /dev/zero before parsing never ended (37 CPU-minutes); a FIFO blocked."""
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    t0 = time.monotonic()
    proc = run_cli("import", path, "--format", fmt, db=tmp_path / "i.db", timeout=30)
    assert_one_line_error(proc, "never end")
    assert time.monotonic() - t0 < 20


def test_samples_csv_that_is_a_fifo_is_refused_not_waited_for(tmp_path):
    """The program 'wrote' its samples into a FIFO: reading it would block forever."""
    fifo = tmp_path / "s.csv"
    prog = f"rm -f {fifo}; mkfifo {fifo}"
    proc = run_cli("run", "-r", "1", "-w", "0", "--samples-csv", str(fifo), prog,
                   db=tmp_path / "f.db", timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "FIFO" in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [1.0, 3.0])
def test_sigterm_while_a_local_cluster_starts(tmp_path, delay_s):
    """SIGTERM 3 s into ``run --cluster local:2`` (workers still starting) ended in Dask's
    atexit ``AssertionError: Status.init`` traceback, 4 of 8 tries; now 'interrupted' and 143,
    and no worker process is left."""
    proc = subprocess.Popen([BENCHLAB, "run", "--cluster", "local:2", "-r", "50", "-w", "0",
                             "sleep 0.2", "--db", str(tmp_path / "c.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay_s)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    # -15: the signal came before benchlab handles SIGTERM (still importing): no output at all
    assert proc.returncode in (143, 130, -signal.SIGTERM), err
    assert "Traceback" not in err and "Error" not in err, err
    # one line at most: "benchlab: interrupted", with how to resume once the session exists
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [] or (len(lines) == 1 and lines[0].startswith("benchlab: interrupted")), err
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", leftover.stdout



def test_a_workload_named_with_a_slash(tmp_path):
    """A study workload named ``a/b`` (once a FileNotFoundError: the name became a path) runs
    and reports; its files are named ``a-b``."""
    suite = tmp_path / "s.toml"
    suite.write_text('[study]\nname = "x"\nruns = 2\nwarmup = 0\n'
                     '[[workload]]\nname = "a/b"\ncommand = "true"\n[matrix]\nworkers = [1]\n')
    db = tmp_path / "s.db"
    ran = run_cli("study", "run", str(suite), db=db, timeout=180)
    assert ran.returncode == 0, ran.stderr
    uid = ran.stdout.split("study ")[1].split()[0] if "study " in ran.stdout else None
    uid = uid or ran.stderr.split("study ")[1].split()[0]
    out = tmp_path / "rep"
    reported = run_cli("study", "report", uid, "-o", str(out), "--no-plots", db=db, timeout=180)
    assert reported.returncode == 0, reported.stderr
    assert "Traceback" not in reported.stderr
    assert not (out / "a").exists()


def _spoiled_csv(store: Path, tmp_path: Path, edit) -> Path:
    export = run_cli("export", "--format", "csv", db=store, check=True).stdout
    out = tmp_path / "spoiled.csv"
    out.write_text("\n".join(edit(line) for line in export.splitlines()) + "\n")
    return out


def _run_row(line: str, seq: int) -> bool:
    parts = line.split(",")
    return not line.startswith("#") and len(parts) == 9 and parts[2] == str(seq)


@pytest.mark.parametrize("edit, expect", [
    (lambda line: ",".join(p if i != 5 else "7" for i, p in enumerate(line.split(",")))
     if _run_row(line, 1) else line, "status"),
    (lambda line: ",".join(line.split(",")[:7]) + ",1e23,ns"
     if _run_row(line, 1) and ",wall," in line else line, "64-bit"),
    (lambda line: ",".join(p if i not in (1, 2) else ("other" if i == 1 else "0")
                           for i, p in enumerate(line.split(",")))
     if _run_row(line, 1) else line, "two benchmarks"),
], ids=["status-7", "huge-wall", "seq-in-two-benchmarks"])
def test_import_long_csv_the_store_would_refuse(store, tmp_path, edit, expect):
    spoiled = _spoiled_csv(store, tmp_path, edit)
    assert_one_line_error(run_cli("import", str(spoiled), db=tmp_path / "f.db"), expect)


@pytest.mark.parametrize("kind", ["chardev", "fifo"])
def test_samples_csv_naming_a_device_is_refused_and_kept(tmp_path, kind):
    """benchlab removes the samples file before each run: ``--samples-csv /dev/null`` deleted
    /dev/null (as root). A character device made here stands for it."""
    path = tmp_path / "dev"
    if kind == "chardev":
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        os.mkfifo(path)
    proc = run_cli("run", "-r", "1", "-w", "0", "--samples-csv", str(path), "true",
                   db=tmp_path / "d.db")
    assert_one_line_error(proc, "not a regular file")
    assert path.exists()
