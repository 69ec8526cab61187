"""``benchlab ab`` end to end: a throwaway git repository with a C program that does exactly
30 % more work at one commit, built per revision in worktrees, measured, gated, cleaned up.

Verdicts are asserted on instruction counts (exact under valgrind) and on a 30 % change in CPU
time, never on tight timings: the machine is loaded while the suite runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchlab.store.db import Store
from tests.ci.conftest import git, make_repo
from tests.ci.test_gate import validate_gate_json
from tests.conftest import BENCHLAB, require_tool

FAST = ["--warmup", "1", "--min-pairs", "10", "--look-every", "5", "--max-time", "6"]


def _ab(repo: Path, *args: str, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, "ab", "-q", *args], cwd=repo, capture_output=True,
                          text=True, timeout=timeout, env=env)


def _worktrees(repo: Path) -> list[str]:
    return [line for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def _leftovers(cache: Path) -> list[Path]:
    return [p for p in cache.glob("benchlab/builds/*/*")
            if p.is_dir() and not (p / ".benchlab-build.json").exists()]


@pytest.mark.slow
def test_a_regression_in_instructions_fails_the_job_and_a_a_passes(tmp_path, cache_env):
    require_tool("valgrind")
    repo = make_repo(tmp_path / "repo", [0, 300])
    common = ["--build", "make", "--metric", "instructions", *FAST, "{root}/work 20000"]
    out = tmp_path / "out"
    slow = _ab(repo, "--base", "HEAD~1", "--head", "HEAD", *common,
               "--json", f"{out}.json", "--junit", f"{out}.xml", "--markdown", f"{out}.md")
    assert slow.returncode == 1, slow.stderr + slow.stdout
    doc = json.loads(Path(f"{out}.json").read_text())
    validate_gate_json(doc)
    [d] = [b for b in doc["benchmarks"] if b["metric"] == "instructions"]
    assert d["outcome"] == "slower" and 1.1 < d["ratio"] < 1.31  # + start-up instructions
    assert doc["revisions"]["head"]["subject"] == "extra=300"
    case = ET.parse(f"{out}.xml").getroot().find("testsuite/testcase")
    assert case.find("failure") is not None
    assert "REGRESSION" in Path(f"{out}.md").read_text()
    # the session is a normal one: show works on it, both revisions are in it
    show = subprocess.run([BENCHLAB, "show", doc["session"]], capture_output=True, text=True)
    assert show.returncode == 0 and "work 20000@base" in show.stdout
    # A/A: base against itself (a cached build now) passes
    same = _ab(repo, "--base", "HEAD~1", "--head", "HEAD~1", *common, "--json", "-")
    assert same.returncode == 0, same.stderr
    doc = json.loads(same.stdout)
    assert {b["outcome"] for b in doc["benchmarks"]} == {"equivalent"}
    assert doc["revisions"]["base"]["cached"] is True
    assert len(_worktrees(repo)) == 1  # only the user's own work tree is registered
    assert not _leftovers(Path(cache_env["XDG_CACHE_HOME"]))


@pytest.mark.slow
def test_the_work_tree_with_uncommitted_changes_is_the_default_head(tmp_path, cache_env):
    """30 % more work in an uncommitted edit is measured (CPU time: 30 % is far above the
    noise of a loaded machine) against the merge-base with main, and removed afterwards."""
    repo = make_repo(tmp_path / "repo", [0])
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "extra").write_text("300\n")  # uncommitted
    res = _ab(repo, "--build", "make", "--metric", "cpu", "--threshold", "5%", *FAST,
              "--max-time", "15", "{root}/work 300000", "--json", "-")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["revisions"]["head"]["dirty"] is True
    assert doc["revisions"]["base"]["commit"] == git(repo, "rev-parse", "main")
    assert doc["benchmarks"][0]["outcome"] == "slower"
    assert len(_worktrees(repo)) == 1
    assert not list(Path(cache_env["XDG_CACHE_HOME"]).glob("benchlab/builds/*/worktree-p*"))


def test_bad_input_is_one_line_and_exit_2(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 10])
    cases = [
        (["--base", "nosuchrev", "--build", "make", "{root}/work 10"], "unknown revision"),
        (["--base", "HEAD~1", "--threshold", "lots", "{root}/work 10"], "threshold"),
        (["--base", "HEAD~1"], "no benchmark"),
        (["--base", "HEAD~1", "--build", "true", "{root}/missing 10"], "does not exist"),
    ]
    suite = tmp_path / "suite.toml"
    suite.write_text('[[benchmark]]\nname = "w"\ncommand = 42\n')
    cases.append((["--base", "HEAD~1", "--suite", str(suite)], "command must be a non-empty"))
    suite2 = tmp_path / "suite2.toml"
    suite2.write_text('[[benchmark]]\nname = "w"\ncommand = "{root}/work 1"\nthreshold = []\n')
    cases.append((["--base", "HEAD~1", "--suite", str(suite2)], "threshold"))
    for args, words in cases:
        res = _ab(repo, *args)
        assert res.returncode == 2, (args, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, res.stderr)
    assert len(_worktrees(repo)) == 1


def test_a_failing_build_exits_3_and_leaves_no_tree(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "work.c").write_text("this is not C\n")
    git(repo, "commit", "-qam", "broken")
    res = _ab(repo, "--base", "HEAD~1", "--head", "HEAD", "--build", "make", *FAST,
              "{root}/work 10", "--json", "-")
    assert res.returncode == 3, res.stderr
    assert "build of head" in res.stderr and "exit code" in res.stderr
    assert json.loads(res.stdout)["verdict"] == "failed"
    assert len(_worktrees(repo)) == 1
    assert not _leftovers(Path(cache_env["XDG_CACHE_HOME"]))


def test_sigterm_and_kill_9_leave_no_worktree(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "extra").write_text("5\n")
    slow_build = "sleep 30; make"
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen([BENCHLAB, "ab", "-q", "--build", slow_build, "{root}/work 1"],
                                cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        cache = Path(cache_env["XDG_CACHE_HOME"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_worktrees(repo)) < 2:
            time.sleep(0.1)
        assert len(_worktrees(repo)) == 2  # a build is under way in its worktree
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        if sig == signal.SIGTERM:
            assert proc.returncode == 143
            assert len(_worktrees(repo)) == 1 and not _leftovers(cache)
        else:
            # kill -9 cannot clean up: the next start sweeps what it left
            res = _ab(repo, "--base", "nosuchrev", "{root}/work 1")
            assert res.returncode == 2
            assert len(_worktrees(repo)) == 1 and not _leftovers(cache)
            assert not list(cache.glob("benchlab/builds/*/worktree-p*"))
    _kill_builds_under(Path(cache_env["XDG_CACHE_HOME"]))


def _killed_while_building(repo: Path, cache: Path, watchdog_too: bool) -> int:
    """Start ab with a build that leaves two sleeps running, kill -9 it (and its watchdog
    when ``watchdog_too``) while it builds; the build's process group id."""
    proc = subprocess.Popen([BENCHLAB, "ab", "-q", "--build", "sleep 300 & sleep 300; make",
                             "{root}/work 1"], cwd=repo, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    records: list[Path] = []
    while time.monotonic() < deadline and not records:
        records = list(cache.glob("benchlab/builds/*/*.build.json"))
        time.sleep(0.1)
    assert records, "no build record while the build runs"
    time.sleep(0.3)  # the shell has started both sleeps
    pgid = json.loads(records[0].read_text())["pgid"]
    watchdogs = [pid for pid, argv in _commands() if b"benchlab.ci.watchdog" in argv
                 and argv[-1] == str(proc.pid).encode()]
    assert len(watchdogs) == 1, "one watchdog per job"
    if watchdog_too:
        os.kill(watchdogs[0], signal.SIGKILL)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return pgid


def _commands() -> list[tuple[int, list[bytes]]]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out.append((int(entry.name), (entry / "cmdline").read_bytes().split(b"\0")[:-1]))
            except OSError:
                continue
    return out


def test_kill_9_while_building_kills_the_build_and_removes_the_trees_at_once(tmp_path,
                                                                             cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    cache = Path(cache_env["XDG_CACHE_HOME"])
    try:
        pgid = _killed_while_building(repo, cache, watchdog_too=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_group(pgid) or len(_worktrees(repo)) > 1):
            time.sleep(0.1)
        assert not _group(pgid), "the build outlived the benchlab killed with -9"
        assert len(_worktrees(repo)) == 1 and not _leftovers(cache)
        assert not list(cache.glob("benchlab/builds/*/*.build.json"))
        assert not list(cache.glob("benchlab/builds/*/worktree-p*"))
    finally:
        _kill_builds_under(cache)


def test_a_build_left_running_by_kill_9_is_killed_by_the_next_start(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    cache = Path(cache_env["XDG_CACHE_HOME"])
    try:
        pgid = _killed_while_building(repo, cache, watchdog_too=True)
        assert _group(pgid), "with its watchdog killed too, the build outlives the job"
        res = _ab(repo, "--base", "nosuchrev", "{root}/work 1")  # the next start sweeps
        assert res.returncode == 2
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _group(pgid):
            time.sleep(0.1)
        assert not _group(pgid), "the orphaned build is still running"
        assert not list(cache.glob("benchlab/builds/*/*.build.json"))
        assert len(_worktrees(repo)) == 1 and not _leftovers(cache)
    finally:
        _kill_builds_under(cache)


def _group(pgid: int) -> list[int]:
    """Live pids of process group ``pgid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if fields[2] == str(pgid) and fields[0] != "Z":
                out.append(int(entry.name))
    return out


def test_sigterm_while_measuring_marks_the_session_and_removes_the_trees(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    (repo / "extra").write_text("5\n")
    proc = subprocess.Popen([BENCHLAB, "ab", "--build", "make", "--max-time", "60",
                             "--json", "-", "sleep 0.2"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    db = Path(cache_env["BENCHLAB_DB"])
    while time.monotonic() < deadline and not (db.exists() and _runs(db)):
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("benchlab: interrupted; ")
    with Store.open(db, readonly=True) as store:
        [sess] = store.sessions()
        assert sess["status"] == "interrupted" and _runs(db) > 0
    assert len(_worktrees(repo)) == 1
    assert not list(Path(cache_env["XDG_CACHE_HOME"]).glob("benchlab/builds/*/worktree-p*"))


def _runs(db: Path) -> int:
    try:
        with Store.open(db, readonly=True) as store:
            return sum(s["n_runs"] for s in store.sessions())
    except Exception:  # the store is being created
        return 0


def _kill_builds_under(cache: Path) -> None:
    """The build of a benchlab killed with -9 keeps running (its own process group, which
    only a live benchlab can kill): end ours, by pid, so the test leaves nothing behind."""
    for entry in Path("/proc").iterdir():
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if entry.name.isdigit() and cwd.startswith(str(cache)):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
