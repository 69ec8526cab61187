"""A session's scratch directory is made where :func:`tempfile.mkdtemp` would make it, without
importing :mod:`tempfile` (and :mod:`random`, ~6 M instructions of every ``run``) (issue 19
item 4). Fresh interpreters, because the test process has tempfile loaded (and then
``temp_root`` defers to it); real directories."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys

import pytest

_MAKE = """
import json, os, sys
from benchlab.core.scratch import make_scratch
path = make_scratch("u1")
print(json.dumps({"root": os.path.dirname(path), "path": path, "mode": os.stat(path).st_mode,
                  "loaded": [m for m in ("tempfile", "random") if m in sys.modules]}))
os.rmdir(path)
"""
_TEMPFILE = "import tempfile; print(tempfile.gettempdir())"


def _run(code: str, env: dict[str, str], cwd) -> str:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, check=True, timeout=60).stdout.strip()


@pytest.mark.parametrize("tmpdir_is", ["writable", "missing", "a file", "unset"])
def test_the_scratch_goes_where_tempfile_would_put_it_without_tempfile(tmp_path, tmpdir_is):
    """Fails on the code that called tempfile.mkdtemp: tempfile and random were loaded."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TEMP", "TMP")}
    target = tmp_path / "t"
    if tmpdir_is == "writable":
        target.mkdir()
    elif tmpdir_is == "a file":
        target.write_text("x")
    if tmpdir_is != "unset":
        env["TMPDIR"] = str(target)
    made = json.loads(_run(_MAKE, env, tmp_path))
    assert made["loaded"] == []
    assert made["root"] == _run(_TEMPFILE, env, tmp_path)
    if tmpdir_is == "writable":
        assert made["root"] == str(target)
    assert re.fullmatch(r"benchlab-u1-p\d+-[a-z0-9_]{8}", os.path.basename(made["path"]))
    assert stat.S_ISDIR(made["mode"]) and stat.S_IMODE(made["mode"]) == 0o700
