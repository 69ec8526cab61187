"""Helpers for the core stats tests: the committed R reference vectors and ../shared paths.

Imported by the test modules (fixtures re-exported by name), not a conftest, so that the
other stats tests in this directory are unaffected.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors" / "core_vectors.json"
SHARED = REPO / ".." / "shared"


def load_vectors() -> dict:
    """Reference values computed by tests/vectors/make_vectors_core.R (committed JSON)."""
    return json.loads(VECTORS.read_text())


@pytest.fixture(scope="module")
def vectors() -> dict:
    return load_vectors()


@pytest.fixture(scope="module")
def datasets(vectors) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=float) for k, v in vectors["datasets"].items()}


def shared_path(*parts: str) -> Path:
    """A file under ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} absent: ../shared (published data) is not beside the repository")
    return path


def read_jaybeams(path: Path) -> dict[str, np.ndarray]:
    """Data lines ``label,value`` of a JayBeams results file (``#`` lines are metadata)."""
    groups: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, value = line.split(",")
        groups.setdefault(label.strip(), []).append(float(value))
    return {k: np.asarray(v) for k, v in groups.items()}
