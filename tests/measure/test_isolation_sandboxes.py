"""Sandboxes as isolation levels, run for real: bubblewrap and firejail (Debian packages,
installed by scripts/setup.sh); isolate's meta file parsed from recorded files (isolate is not
packaged in Debian and is not installed here)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.measure.isolation import levels, parse_isolate_meta, parse_isolation
from benchlab.measure.sandboxes import kept_dirs
from benchlab.store import Store
from tests.conftest import (
    BENCHLAB,
    assert_one_line_error,
    needs_tool,
    run_cli,
    sigint_as_in_a_terminal,
)

needs_bwrap = needs_tool("bwrap")  # skipped without it here, failed in CI
needs_firejail = needs_tool("firejail")
METAS = Path(__file__).parent / "isolate_meta"


def _setups(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        return [json.loads(r[0]) for r in conn.execute("SELECT data FROM setups")]


def _pid_in_sandbox(db: Path, level: str) -> list[float]:
    """Runs ``sh -c 'echo pid=$$'`` under ``level``; the pids the shell saw."""
    run_cli("run", "--runs", "2", "-N", "--isolation", level, "--metric", r"pid=pid=(\d+)",
            "/bin/sh -c 'echo pid=$$'", db=db, check=True)
    store = Store.open(db)
    sess = store.sessions()[0]
    runs = store.runs(session_id=sess["id"], include_warmup=False)
    return [v for r in runs for v in store.samples_of_run(r["id"])["pid"]]


@needs_bwrap
def test_bwrap_runs_each_run_in_a_fresh_pid_namespace_and_records_its_start_up_cost(tmp_path):
    db = tmp_path / "b.db"
    pids = _pid_in_sandbox(db, "bwrap")
    # in its own PID namespace the shell is pid 1 or 2 (bwrap's init); on the host it is not
    assert pids and all(p <= 3 for p in pids)
    (setup,) = [s for s in _setups(db) if s["isolation"]["mode"] == "sandbox"]
    iso = setup["isolation"]
    assert iso["tool"] == "bwrap" and iso["level"] == "bwrap"
    assert iso["startup"]["wall_ns"] > 0 and iso["startup"]["runs"] >= 3
    assert iso["startup"]["command"].startswith("bwrap ")
    assert iso["versions"]["bwrap"].startswith("bubblewrap ")
    # each run carries its level's start-up cost (the offset the study report compares)
    store = Store.open(db)
    run = store.runs(session_id=store.sessions()[0]["id"], include_warmup=False)[0]
    rows = {m["name"]: m for m in store.measurements_of_run(run["id"]) if m["source"] == "isolation"}
    assert rows["startup_wall"]["value"] == iso["startup"]["wall_ns"]


@needs_bwrap
def test_bwrap_root_is_read_only_and_tmp_writable(tmp_path):
    iso = parse_isolation("bwrap")
    argv = iso.wrap(["/bin/sh", "-c", "touch /benchlab-ro-probe 2>/dev/null && echo rw || echo ro;"
                     " touch /tmp/benchlab-rw-probe-$$ && rm /tmp/benchlab-rw-probe-$$ && echo tmp-rw"])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.split()
    assert out == ["ro", "tmp-rw"]
    assert not Path("/benchlab-ro-probe").exists()


@pytest.mark.parametrize("tool", [pytest.param("bwrap", marks=needs_bwrap),
                                  pytest.param("firejail", marks=needs_firejail)])
def test_sandbox_tmp_var_tmp_and_dev_shm_are_its_own(tool, tmp_path):
    """The program writes /tmp/X, /var/tmp/X and /dev/shm/X: the host has none of them (a
    file of the host's at /tmp/X keeps its content), while the run's working directory, kept
    at its path inside /tmp, is the host's and writable."""
    name = f"benchlab-private-probe-{os.getpid()}-{tool}"
    host = Path("/tmp") / name
    host.write_text("the host's\n")
    elsewhere = [Path("/var/tmp") / name, Path("/dev/shm") / name]
    script = (f"echo sandbox > /tmp/{name} && echo sandbox > /var/tmp/{name} && "
              f"echo sandbox > /dev/shm/{name} && cat /tmp/{name} && pwd && echo kept > here && "
              f"ls -A /tmp")
    try:
        argv = parse_isolation(tool).wrap(["/bin/sh", "-c", script], keep=(str(tmp_path),))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.split()
        assert lines[:2] == ["sandbox", str(tmp_path)], proc.stdout
        # the sandbox's /tmp: its own file and the path down to the kept directory, no more
        assert sorted(lines[2:]) == sorted([name, tmp_path.relative_to("/tmp").parts[0]])
        assert host.read_text() == "the host's\n"
        assert not [p for p in elsewhere if p.exists()], elsewhere
        assert (tmp_path / "here").read_text() == "kept\n"
    finally:
        host.unlink(missing_ok=True)
        for p in elsewhere:
            p.unlink(missing_ok=True)


def test_kept_directories_are_those_a_private_tmp_hides(tmp_path):
    private = ("/tmp", "/var/tmp", "/dev/shm")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "ab").mkdir()
    a, ab = str(tmp_path / "a"), str(tmp_path / "ab")
    # the private directories themselves, paths outside them and missing ones are not kept
    assert kept_dirs(("/tmp", "/var/tmp/", "/dev/shm", "/", "/usr", a + "/nope"), private) == []
    # one bind per tree: a directory inside a kept one is not bound again
    assert kept_dirs((a + "/b", a, ab, ab), private) == [a, ab]
    assert kept_dirs((a + "/b/..",), private) == [a]


@needs_firejail
def test_firejail_runs_in_its_own_pid_namespace(tmp_path):
    pids = _pid_in_sandbox(tmp_path / "f.db", "firejail")
    assert pids and all(p <= 5 for p in pids)
    (setup,) = [s for s in _setups(tmp_path / "f.db") if s["isolation"]["mode"] == "sandbox"]
    assert setup["isolation"]["tool"] == "firejail" and setup["isolation"]["startup"]["wall_ns"] > 0


@pytest.mark.skipif(shutil.which("isolate") is not None, reason="isolate is installed here")
def test_isolate_where_not_installed_is_one_line_before_any_session(tmp_path):
    proc = run_cli("run", "--runs", "2", "--isolation", "isolate", "true", db=tmp_path / "i.db")
    assert_one_line_error(proc, "isolate", "not installed")
    assert not (tmp_path / "i.db").exists() or not Store.open(tmp_path / "i.db").sessions()


def test_levels_parse_and_unknown_ones_are_refused_in_one_line():
    assert parse_isolation("bwrap").text == "bwrap"
    assert parse_isolation("podman-exec:localhost/x:1").to_dict()["model"] == "exec"
    c = parse_isolation("docker:img,runtime=runc")
    assert (c.tool, c.image, c.runtime, c.runtime_forced, c.per_run) == ("docker", "img", "runc",
                                                                        True, True)
    for bad in ("bwarp", "podman", "podman:", "podman:img,color=red", "wrap:firejail"):
        with pytest.raises(UserError) as exc:
            parse_isolation(bad)
        assert "\n" not in str(exc.value)
    assert "bwrap" in levels() and "podman:IMAGE" in levels()


@pytest.mark.parametrize("name", ["ok.meta", "timeout.meta", "runtime_error_cg.meta"])
def test_isolate_meta_files_parse_to_the_isolators_own_view(name):
    """The recorded files are written in the format of isolate(1), section META-FILES
    (github.com/ioi/isolate, isolate.1.txt): ``key:value`` lines, times in fractional seconds,
    memory in kilobytes; their numbers are made up, not from a real isolate run (isolate is not
    installed here)."""
    rows = parse_isolate_meta((METAS / name).read_text())
    by = {r["name"]: r for r in rows}
    expected = json.loads((METAS / (name + ".expected.json")).read_text())
    for key, value in expected["values"].items():
        assert by[key]["value"] == pytest.approx(value), key
        assert by[key]["source"] == "isolate"
    assert by["time"]["unit"] == "ns" and by["max-rss"]["unit"] == "KiB"
    if expected["status_note"]:
        for needle in expected["status_note"]:
            assert needle in by["status"]["note"]
    else:
        assert "status" not in by  # a run that ended well: isolate writes no status line


def _sandboxed(marker: str) -> list[int]:
    """Live processes whose argv ends with ``marker`` (the sandbox and the program in it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in argv and state != "Z":
            found.append(int(proc.name))
    return found


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_no_sandbox_is_left_after_sigterm_or_kill_9(tmp_path, signum):
    marker = f"{31 + signum / 100:.2f}"  # a sleep length no other test uses
    proc = subprocess.Popen([BENCHLAB, "run", "--runs", "20", "-w", "0", "-N", "--isolation",
                             "bwrap", f"/bin/sleep {marker}", "--db", str(tmp_path / "k.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=sigint_as_in_a_terminal)
    deadline = time.monotonic() + 60
    while len(_sandboxed(marker)) < 2:  # bwrap and the sleep inside
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signum)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while _sandboxed(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sandboxed(marker) == []


@needs_bwrap
@pytest.mark.parametrize("level", ["bwrap", "firejail"])
def test_the_harness_counts_the_sandboxed_programs_cpu_time(tmp_path, level):
    """The program's own CPU time must reach the harness's rusage through the sandbox (bwrap
    with its own PID-namespace init in between loses it: 0 s)."""
    if shutil.which(level) is None:
        pytest.skip(f"{level} not installed")
    from benchlab.workloads import build_workload

    db = tmp_path / "cpu.db"
    exe = build_workload("exp_float")
    run_cli("run", "--runs", "2", "-w", "0", "-N", "--isolation", level, "--metric",
            r"self_cpu:ns=BENCHLAB_SELF .*?\bcpu_ns=(\d+)", f"{exe} 1000000", db=db, check=True)
    store = Store.open(db)
    for run in store.runs(session_id=store.sessions()[0]["id"], include_warmup=False):
        (self_cpu,) = store.samples_of_run(run["id"])["self_cpu"]
        assert run["user_ns"] + run["sys_ns"] >= 0.5 * self_cpu
