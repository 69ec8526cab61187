"""A C program that prints its throughput in MB/s, made 5 % slower by a commit, fails
``benchlab ab --metric 'speed:MB/s=...'`` (exit 1) naming it in JUnit and Markdown, and an A/A
pair of commits (identical code) passes (exit 0).

The program does real work (a multiply-add loop over a nominal 64 MB) and, like a codec's
benchmark mode, prints MB/s over its own measuring time; here that is its CPU time
(CLOCK_PROCESS_CPUTIME_ID), which waiting for a CPU does not inflate: 12 pairs at load 15 on
this 2-vCPU machine gave within-pair log ratios of -5.1 % +- 1.1 % (SD). A throughput over
wall time would measure the run queue at that load, as Go's ns/op does (see
test_ab_harness_go.py)."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.ci.conftest import MAKEFILE, git
from tests.conftest import BENCHLAB

pytestmark = pytest.mark.slow

CODEC_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef EXTRA
#define EXTRA 0
#endif
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 6000000;
    n += n * EXTRA / 1000;   /* EXTRA per mille more work for the same 64 MB */
    double start = cpu_seconds();
    volatile unsigned long x = 1;
    for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    printf("codec: %.3f MB/s\n", 64.0 / (cpu_seconds() - start));
    return (int)(x & 0);
}
"""
SPEED = "speed:MB/s=codec: ([0-9.]+) MB/s"


def _repo(tmp_path: Path) -> Path:
    """Commits: the codec, a README (A/A: identical code), then 5 % more work per MB."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("cc and make are needed to build the test program")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@benchlab.invalid")
    git(repo, "config", "user.name", "benchlab ci")
    for subject, files in (("codec", {"work.c": CODEC_C, "Makefile": MAKEFILE, "extra": "0\n",
                                      ".gitignore": "work\n"}),
                           ("docs", {"README": "docs only\n"}),
                           ("slower", {"extra": "50\n"})):
        for name, text in files.items():
            (repo / name).write_text(text)
        git(repo, "add", ".")
        git(repo, "commit", "-qm", subject)
    return repo


def _ab(repo: Path, base: str, head: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHLAB, "ab", "-q", "--base", base, "--head", head, "--build",
                           "make", "--metric", SPEED, "--max-time", "30", "-n", "codec",
                           "--junit", f"{out}.xml", "--markdown", f"{out}.md", "{root}/work"],
                          cwd=repo, capture_output=True, text=True, timeout=300)


def test_a_5_percent_slower_codec_fails_and_an_a_a_passes(tmp_path, cache_env):
    repo = _repo(tmp_path)
    slow = _ab(repo, "HEAD~1", "HEAD", tmp_path / "slow")
    assert slow.returncode == 1, slow.stdout + slow.stderr
    [case] = ET.parse(tmp_path / "slow.xml").getroot().iter("testcase")
    assert case.get("name") == "codec" and case.find("failure") is not None
    assert "speed" in case.find("failure").get("message")
    markdown = (tmp_path / "slow.md").read_text()
    [row] = [line for line in markdown.splitlines() if line.startswith("| codec |")]
    assert "REGRESSION" in row and "MB/s, higher is better" in row
    ratio = float(row.split("|")[3].split()[0])
    assert 0.93 < ratio < 0.97  # 5 % more work: about 1/1.05 of the throughput
    same = _ab(repo, "HEAD~2", "HEAD~1", tmp_path / "same")
    assert same.returncode == 0, same.stdout + same.stderr
    [case] = ET.parse(tmp_path / "same.xml").getroot().iter("testcase")
    assert case.find("failure") is None
