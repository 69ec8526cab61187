"""Modules a newcomer reads in one sitting: a module over 400 lines says why in its docstring.

The reason is a line of the opening docstring that starts with ``Long because:`` (CONTRIBUTING.md). Every offender is listed at once, with its length.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "benchlab"
LIMIT = 400


def oversized_without_reason(root: Path, limit: int = LIMIT) -> list[str]:
    """'path: N lines' for each .py under ``root`` longer than ``limit`` lines whose opening
    docstring has no line starting with ``Long because:``."""
    offenders = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines <= limit:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not any(line.strip().startswith("Long because:") for line in doc.splitlines()):
            offenders.append(f"{path.relative_to(root.parent)}: {lines} lines")
    return offenders


def test_long_modules_say_why():
    modules = list(SRC.rglob("*.py"))
    assert len(modules) > 50, "too few modules found: is SRC right?"
    offenders = oversized_without_reason(SRC)
    if offenders:
        pytest.fail(f"{len(offenders)} modules over {LIMIT} lines without a 'Long because:' line "
                    f"in their opening docstring (split them or say why):\n"
                    + "\n".join(offenders), pytrace=False)


def test_checker_on_synthetic_modules(tmp_path):
    long_body = "x = 1\n" * (LIMIT + 1)
    (tmp_path / "short.py").write_text('"""Short."""\n' + "x = 1\n" * 10)
    (tmp_path / "long_bad.py").write_text('"""A long module."""\n' + long_body)
    (tmp_path / "long_ok.py").write_text(
        '"""A long module.\n\nLong because: one state machine, split it and it reads worse.\n"""\n'
        + long_body)
    (tmp_path / "long_mention.py").write_text(
        '"""Mentions Long because: mid-line, which does not count."""\n' + long_body)
    offenders = oversized_without_reason(tmp_path)
    names = sorted(o.split(":")[0].rsplit("/", 1)[-1] for o in offenders)
    assert names == ["long_bad.py", "long_mention.py"]
    assert f"long_bad.py: {LIMIT + 2} lines" in "\n".join(offenders)
