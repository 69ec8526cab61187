"""Functions a reader holds in mind at once: at most LIMIT lines (docstring included).

A limit on function length says more about readability than one on module length (a module of
short functions reads well at 450 lines; one 120-line function does not at 200). The functions
longer than LIMIT today are listed with their length; the list only shrinks: a listed function
that grows fails, one that got shorter must lower its number (or leave the list once it is
within LIMIT), so the recorded debt cannot quietly come back.
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
    "cli/run.py:run_cmd": 116,
    "measure/shell_syntax.py:find_shell_syntax": 113,
    "cli/compare.py:compare_cmd": 112,
    "measure/spawn/fallback.py:_spawn_python": 109,
    "store/formats/csv_long.py:parse_long_csv": 108,
    "stats/verdict_model.py:verdict_model": 103,
    "store/formats/pyperf.py:parse_pyperf": 101,
    "core/suite.py:load_suite": 100,
    "stats/rank_selection.py:_select": 89,
    "stats/steady.py:detect_steady_state": 85,
    "core/cluster/address.py:open_cluster": 82,
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


def over_limit(lengths: dict[str, int], known: dict[str, int], limit: int = LIMIT) -> list[str]:
    """One line per function over ``limit`` that is not known at its length, and per known
    entry that is out of date."""
    problems = []
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
            problems.append(f"{key}: now within {limit} lines (or gone): remove it from the list")
        elif now < n:
            problems.append(f"{key}: now {now} lines: lower its number from {n}")
    return problems


def test_functions_stay_short():
    lengths = function_lengths(SRC)
    assert len(lengths) > 500, "too few functions found: is SRC right?"
    problems = over_limit(lengths, LONGER_TODAY)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_checker_on_synthetic_lengths():
    lengths = {"a.py:f": 90, "a.py:g": 10, "b.py:h": 120, "c.py:k": 85}
    problems = over_limit(lengths, {"b.py:h": 100, "c.py:k": 95, "d.py:gone": 99}, limit=80)
    assert problems == ["b.py:h: 120 lines, grew from 100: split it",
                        "a.py:f: 90 lines (limit 80): split it into named steps",
                        "c.py:k: now 85 lines: lower its number from 95",
                        "d.py:gone: now within 80 lines (or gone): remove it from the list"]
