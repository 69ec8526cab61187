"""``--build-timeout`` (and a suite file's ``[gate] build_timeout``): a build that runs past it
is killed with its whole process group, and the job fails in one line with exit 3."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.ci.conftest import git, make_repo
from tests.conftest import BENCHLAB

pytestmark = pytest.mark.slow


def _sleepers(marker: str) -> list[int]:
    """Pids of live processes whose command line is ``sleep <marker>``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if argv[:2] == [b"sleep", marker.encode()] and state != "Z":
                out.append(int(entry.name))
    return out


def _no_sleepers_soon(marker: str) -> bool:
    deadline = time.monotonic() + 10
    while _sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _sleepers(marker)


def test_a_build_past_its_timeout_is_killed_with_its_group_and_exits_3(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 0])
    start = time.monotonic()
    res = subprocess.run([BENCHLAB, "ab", "-q", "--base", "HEAD~1", "--head", "HEAD",
                          "--build", "sleep 987 & sleep 987; make", "--build-timeout", "1s",
                          "{root}/work 1"], cwd=repo, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 3, res.stderr
    assert time.monotonic() - start < 60
    [line] = res.stderr.strip().splitlines()
    assert "ran past --build-timeout 1 s" in line and "process group" in line
    assert _no_sleepers_soon("987"), "a process of the build outlived the timeout"
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_bisect_takes_the_build_timeout(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 0, 300])
    res = subprocess.run([BENCHLAB, "bisect", "-q", "--good", "HEAD~2", "--bad", "HEAD",
                          "--build", "sleep 985", "--build-timeout", "1s", "--", "{root}/work 1"],
                         cwd=repo, capture_output=True, text=True, timeout=120)
    assert res.returncode == 3, res.stderr
    assert "ran past --build-timeout 1 s" in res.stderr and "Traceback" not in res.stderr
    assert _no_sleepers_soon("985")


def test_the_suite_file_sets_the_build_timeout(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0])
    suite = tmp_path / "s.toml"
    suite.write_text('[gate]\nbuild_timeout = "1s"\n[[benchmark]]\nname = "w"\n'
                     'command = "{root}/work 1"\n')
    res = subprocess.run([BENCHLAB, "ab", "-q", "--base", "HEAD", "--build", "sleep 986",
                          "--suite", str(suite)], cwd=repo, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 3 and "ran past --build-timeout 1 s" in res.stderr, res.stderr
    assert _no_sleepers_soon("986")
    suite.write_text('[gate]\nbuild_timeout = "soon"\n[[benchmark]]\nname = "w"\n'
                     'command = "{root}/work 1"\n')
    res = subprocess.run([BENCHLAB, "ab", "-q", "--build", "true", "--suite", str(suite)],
                         cwd=repo, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "build_timeout" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
