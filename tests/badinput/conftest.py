"""Fixtures of the bad-input corpus: one prepared store and the big files, made once per session.

The template store is made by the real console script (an import of a small jaybeams CSV named
``jb`` with benchmarks ``a`` and ``b``), so it is whatever today's schema is. Each case gets a
byte copy of it in its own directory: cases never share a database.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.badinput.forkserver import ForkServer
from tests.badinput.harness import Shared, prepare_shared
from tests.conftest import BENCHLAB


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Shared:
    """The template store, the 50 MB line, valid profile/variability files (read-only)."""
    return prepare_shared(tmp_path_factory.mktemp("badinput-shared"))


@pytest.fixture(scope="session")
def forks():
    """The fork server the corpus's cases run from (tests/badinput/forkserver.py), one per
    worker; ended (and reaped) at the end of the session."""
    server = ForkServer(BENCHLAB)
    yield server
    server.close()


@pytest.fixture
def readonly_dir(tmp_path):
    """A directory whose entries cannot change even for root (chattr +i); undone at teardown."""
    made: list[Path] = []

    def make(path: Path) -> bool:
        ok = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        if ok:
            made.append(path)
        return ok

    yield make
    for path in made:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
