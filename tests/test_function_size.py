"""Functions a reader holds in mind at once: at most LIMIT lines (docstring included).

A limit on function length says more about readability than one on module length (a module of
short functions reads well at 450 lines; one 120-line function does not at 200). The functions
longer than LIMIT today are listed with their length; the list only shrinks: a new long
function or a listed one that grows fails; one that got shorter or fits now is reported (a
warning) so its number is lowered or its entry removed, and the recorded debt cannot quietly
come back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "benchlab"
LIMIT = 80

#: Functions over LIMIT lines today ("path:function": lines). Each is a candidate for
#: splitting into named steps; lower the number when one shrinks, remove it when it fits.
LONGER_TODAY: dict[str, int] = {
    "cli/run.py:run_cmd": 82,
    "measure/spawn/fallback.py:spawn_in_python": 87,
    "stats/steady.py:detect_steady_state": 97,
    "ci/gate.py:decide": 86,
}


def function_lengths(root: Path) -> dict[str, int]:
    """{"path:function": lines} of every function and method under ``root`` (the longest when
    a name repeats in a file)."""
    out: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{path.relative_to(root).as_posix()}:{node.name}"
                out[key] = max(out.get(key, 0), node.end_lineno - node.lineno + 1)
    return out


def over_limit(lengths: dict[str, int], known: dict[str, int],
               limit: int = LIMIT) -> tuple[list[str], list[str]]:
    """(problems, stale): one line per function over ``limit`` that is not known at its length
    or grew; and one per known entry that is out of date (shorter, within ``limit``, gone)."""
    problems, stale = [], []
    for key, n in sorted(lengths.items(), key=lambda kv: -kv[1]):
        if n <= limit:
            continue
        if key not in known:
            problems.append(f"{key}: {n} lines (limit {limit}): split it into named steps")
        elif n > known[key]:
            problems.append(f"{key}: {n} lines, grew from {known[key]}: split it")
    for key, n in known.items():
        now = lengths.get(key)
        if now is None or now <= limit:
            stale.append(f"{key}: now within {limit} lines (or gone): remove it from the list")
        elif now < n:
            stale.append(f"{key}: now {now} lines: lower its number from {n}")
    return problems, stale


def test_functions_stay_short():
    import warnings

    lengths = function_lengths(SRC)
    assert len(lengths) > 500, "too few functions found: is SRC right?"
    problems, stale = over_limit(lengths, LONGER_TODAY)
    for line in stale:
        warnings.warn(f"tests/test_function_size.py: {line}", stacklevel=1)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_checker_on_synthetic_lengths():
    lengths = {"a.py:f": 90, "a.py:g": 10, "b.py:h": 120, "c.py:k": 85}
    problems, stale = over_limit(lengths, {"b.py:h": 100, "c.py:k": 95, "d.py:gone": 99},
                                 limit=80)
    assert problems == ["b.py:h: 120 lines, grew from 100: split it",
                        "a.py:f: 90 lines (limit 80): split it into named steps"]
    assert stale == ["c.py:k: now 85 lines: lower its number from 95",
                     "d.py:gone: now within 80 lines (or gone): remove it from the list"]
