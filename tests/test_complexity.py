"""Functions a reader can follow: cyclomatic complexity at most 14 (ruff's mccabe rule, C901).

A function with more branches than that is one a reader cannot hold in mind, nor a test cover
path by path; split it into named steps. The functions above the limit today are listed with
their complexity: the list only shrinks (a new complex function, or a listed one that grows,
fails; one that got simpler is reported so that its number is lowered or it leaves the list).
"""

from __future__ import annotations

import json
import re
import subprocess
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "benchlab"
LIMIT = 14

#: function ("path under src/benchlab:qualified name") -> complexity, above LIMIT today.
KNOWN: dict[str, int] = {}


def _ruff() -> str:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        pytest.skip("ruff is not installed (the dev group has it: uv sync)")
    return find_ruff_bin()


def complexities(path: Path) -> dict[str, int]:
    """Function name -> cyclomatic complexity, for the functions above :data:`LIMIT` under
    ``path`` (ruff's C901, the mccabe count)."""
    proc = subprocess.run([_ruff(), "check", "--no-cache", "--select", "C901", "--config",
                           f"lint.mccabe.max-complexity={LIMIT}", "--output-format", "json",
                           "--exit-zero", str(path)], capture_output=True, text=True, check=True)
    out = {}
    for finding in json.loads(proc.stdout):
        m = re.match(r"`(.+)` is too complex \((\d+) > \d+\)", finding["message"])
        rel = Path(finding["filename"]).resolve().relative_to(SRC.resolve()).as_posix()
        out[f"{rel}:{m.group(1)}"] = int(m.group(2))
    return out


def test_functions_stay_simple():
    found = complexities(SRC)
    problems = [f"{name}: complexity {value}, above {LIMIT}: split it into named steps"
                for name, value in sorted(found.items()) if name not in KNOWN]
    problems += [f"{name}: complexity {value}, grew from {KNOWN[name]}: split it"
                 for name, value in sorted(found.items())
                 if name in KNOWN and value > KNOWN[name]]
    for name, known in sorted(KNOWN.items()):
        if found.get(name, 0) < known:
            now = found.get(name)
            warnings.warn(f"tests/test_complexity.py: {name}: now "
                          f"{now if now else f'at most {LIMIT}'}: lower its number or remove "
                          f"it from KNOWN", stacklevel=1)
    assert not problems, "\n".join(problems)


def test_the_count_is_mccabes(tmp_path):
    """The checker counts what it claims: one per decision point plus one."""
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(LIMIT - 1))
    (tmp_path / "m.py").write_text(f"def simple(x):\n{branches}\n    return -1\n\n"
                                   f"def complex_(x):\n{branches}\n    if x:\n        return 0\n"
                                   f"    return -1\n")
    proc = subprocess.run([_ruff(), "check", "--no-cache", "--isolated", "--select", "C901",
                           "--config", f"lint.mccabe.max-complexity={LIMIT}", "--output-format",
                           "json", "--exit-zero", str(tmp_path / "m.py")],
                          capture_output=True, text=True, check=True)
    names = [f["message"] for f in json.loads(proc.stdout)]
    assert names == [f"`complex_` is too complex ({LIMIT + 1} > {LIMIT})"], names
