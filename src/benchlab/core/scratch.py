"""Scratch directories (``/tmp/benchlab-*``) and the children a session leaves.

Every scratch directory benchlab makes is named ``benchlab-<kind>-p<pid>-<random>``: a
session's (kind: its uid; run captures, perf and isolator files), a reproduction's
(``reproduce``: the confined working directory of a bundle's commands), a bundle's analysis
(``analysis``: its scratch store), cachegrind's (``counts``, made in ``benchlab.measure.counts``)
and a container image's root (``rootfs``, ``benchlab.control.containers``); the last two are
below this layer and spell the same name themselves. Each is removed on every way out; the pid
in its name lets the next session remove, with :func:`sweep_dead_scratch`, every kind left by
a benchlab killed with SIGKILL.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import os
import re
import shutil
import stat
import tempfile

from benchlab.processes import pid_alive, process_stats

_NAME = re.compile(r"^benchlab-(?P<label>[^/]*)-p(?P<pid>\d+)-[^/]+$")


def make_scratch(label: str) -> str:
    """Create this process's scratch directory of kind ``label`` (a session uid,
    ``reproduce``, ``analysis``...); return its path."""
    return tempfile.mkdtemp(prefix=f"benchlab-{label}-p{os.getpid()}-")


def remove_scratch(path: str) -> None:
    """Remove a scratch directory and everything in it (missing is fine)."""
    shutil.rmtree(path, ignore_errors=True)


def sweep_dead_scratch(tmpdir: str | None = None) -> list[str]:
    """Remove this user's scratch directories of every kind whose creating process is gone;
    return the removed paths. A pid that is alive again (reused) keeps its directory."""
    root = tmpdir or tempfile.gettempdir()
    removed = []
    try:
        entries = os.listdir(root)
    except OSError:
        return removed
    for entry in entries:
        # most of a shared /tmp is not ours: a prefix test before the pattern
        m = _NAME.match(entry) if entry.startswith("benchlab-") else None
        if m is None or int(m.group("pid")) == os.getpid() or pid_alive(int(m.group("pid"))):
            continue
        path = os.path.join(root, entry)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def terminate_children() -> None:
    """SIGTERM every direct child of this process (the exec helpers, which kill their programs)."""
    me = str(os.getpid())
    for pid, fields in process_stats():
        if len(fields) > 1 and fields[1] == me:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
