"""A throwaway git repository holding a tiny C program that regresses at one commit.

``work.c`` runs N iterations of a multiply-add plus EXTRA per mille more (EXTRA read from the
file ``extra`` at build time by ``make``), so a commit that changes ``extra`` makes the program
do exactly that much more work: its instruction count grows by that fraction, its time nearly so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

WORK_C = r"""
#include <stdlib.h>
#ifndef EXTRA
#define EXTRA 0
#endif
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    n += n * EXTRA / 1000;   /* EXTRA per mille more work */
    volatile unsigned long x = 1;
    for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return (int)(x & 0);
}
"""
MAKEFILE = "all:\n\tcc -O2 -DEXTRA=$$(cat extra) -o work work.c\n"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; its stdout."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(path: Path, extras: list[int]) -> Path:
    """A repository at ``path`` with one commit per value of ``extras`` (per mille more work),
    on branch main; the first commit's subject is 'start', the others 'extra=V'."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("cc and make are needed to build the test program")
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "ci@benchlab.invalid")
    git(path, "config", "user.name", "benchlab ci")
    (path / "work.c").write_text(WORK_C)
    (path / "Makefile").write_text(MAKEFILE)
    (path / ".gitignore").write_text("work\n*.db\n")
    for i, extra in enumerate(extras):
        (path / "extra").write_text(f"{extra}\n")
        (path / "version").write_text(f"{i}\n")  # every commit changes something
        git(path, "add", "work.c", "Makefile", ".gitignore", "extra", "version")
        git(path, "commit", "-q", "-m", "start" if i == 0 else f"extra={extra}")
    return path


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch) -> dict[str, str]:
    """A private build cache and database for the test (environment for benchlab)."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "BENCHLAB_DB": str(tmp_path / "ab.db")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return {**os.environ, **env}
