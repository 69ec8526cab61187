"""A session's scratch directory (``/tmp/benchlab-*``) and the children a session leaves.

Each run's stdout/stderr captures, perf and isolator files live in one directory per session
process, named ``benchlab-<session>-p<pid>-<random>``. It is removed on every way out of the
session; the pid in its name lets the next session (or a resume) remove the directories of a
benchlab that was killed with SIGKILL and could not clean up.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile

_NAME = re.compile(r"^benchlab-(?P<label>[^/]*)-p(?P<pid>\d+)-[^/]+$")


def make_scratch(label: str) -> str:
    """Create this process's scratch directory for session ``label``; return its path."""
    return tempfile.mkdtemp(prefix=f"benchlab-{label}-p{os.getpid()}-")


def remove_scratch(path: str) -> None:
    """Remove a scratch directory and everything in it (missing is fine)."""
    shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_dead_scratch(tmpdir: str | None = None) -> list[str]:
    """Remove scratch directories whose creating process is gone; return the removed paths."""
    root = tmpdir or tempfile.gettempdir()
    removed = []
    try:
        entries = os.listdir(root)
    except OSError:
        return removed
    for entry in entries:
        m = _NAME.match(entry)
        if m is None or int(m.group("pid")) == os.getpid() or _alive(int(m.group("pid"))):
            continue
        path = os.path.join(root, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def terminate_children() -> None:
    """SIGTERM every direct child of this process (the exec helpers, which kill their programs)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            try:
                os.kill(int(entry), signal.SIGTERM)
            except ProcessLookupError:
                pass
