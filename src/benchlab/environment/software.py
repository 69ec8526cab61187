"""Readers for the software: the Python interpreter and the git state of the working directory."""

from __future__ import annotations

import platform
import shutil
import sys
from typing import Any

from benchlab.environment._read import Probe, unknown


def python_section() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "compiler": platform.python_compiler(),
        "build": list(platform.python_build()),
    }


def git_section(head: Probe | None, status: Probe | None, deadline: float,
                 cwd: str) -> dict[str, Any]:
    if head is None or status is None:
        reason = ("git is not installed" if shutil.which("git") is None
                  else f"{cwd} does not exist")
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    head_result = head.result(deadline)
    status_result = status.result(deadline)
    if isinstance(head_result, str):
        reason = head_result
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    code, out, err = head_result
    if code != 0:
        message = err.strip().splitlines()[-1] if err.strip() else f"exit status {code}"
        reason = f"{cwd} is not in a usable git work tree: {message}"
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    commit = out.strip()
    if isinstance(status_result, str):
        dirty: Any = unknown(status_result)
        changed: Any = dirty
    else:
        scode, sout, serr = status_result
        if scode != 0:
            dirty = unknown(f"git status failed: {serr.strip() or scode}")
            changed = dirty
        else:
            lines = [line for line in sout.splitlines() if line.strip()]
            dirty = bool(lines)
            changed = len(lines)
    return {"commit": commit, "dirty": dirty, "changed_paths": changed}
