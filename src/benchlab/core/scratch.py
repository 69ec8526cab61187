"""Scratch directories (``/tmp/benchlab-*``) and the children a session leaves.

Every scratch directory benchlab makes is named ``benchlab-<kind>-p<pid>-<random>``: a
session's (kind: its uid; run captures, perf and isolator files), a reproduction's
(``reproduce``: the confined working directory of a bundle's commands), a bundle's analysis
(``analysis``: its scratch store), cachegrind's (``counts``, made in ``benchlab.measure.counts``)
and a container image's root (``rootfs``, ``benchlab.control.containers``); the last two are
below this layer and spell the same name themselves. Each is removed on every way out; the pid
in its name lets the next session remove, with :func:`sweep_dead_scratch`, every kind left by
a benchlab killed with SIGKILL.

They go where :func:`tempfile.mkdtemp` puts them (:func:`temp_root`), made without importing
:mod:`tempfile`, which brings :mod:`random` (~6 M instructions of every ``run``, which needs
one directory a session).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import sys

from benchlab.processes import pid_alive, process_stats

_NAME = re.compile(r"^benchlab-(?P<label>[^/]*)-p(?P<pid>\d+)-[^/]+$")


#: The letters of a name's random part, as :mod:`tempfile` draws them.
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
#: This process's :func:`temp_root`, once found (as ``tempfile.tempdir`` caches it).
_ROOT: list[str] = []


def _random_part() -> str:
    """8 letters of :data:`_LETTERS` (from os.urandom; tempfile's own come from random)."""
    return "".join(_LETTERS[byte % len(_LETTERS)] for byte in os.urandom(8))


def temp_root() -> str:
    """The directory of temporary files, as :func:`tempfile.gettempdir` finds it: the first of
    $TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp and the working directory where a file can
    be created; ``tempfile.tempdir`` when :mod:`tempfile` is loaded (a caller may have set it)."""
    loaded = sys.modules.get("tempfile")
    if loaded is not None:
        return loaded.gettempdir()
    if _ROOT:
        return _ROOT[0]
    candidates = [value for name in ("TMPDIR", "TEMP", "TMP") if (value := os.getenv(name))]
    candidates += ["/tmp", "/var/tmp", "/usr/tmp"]
    try:
        candidates.append(os.getcwd())
    except (AttributeError, OSError):
        candidates.append(os.curdir)
    for directory in candidates:
        if directory != os.curdir:
            directory = os.path.abspath(directory)
        for _ in range(100):  # tempfile's test: a file it can create, write and remove
            probe = os.path.join(directory, _random_part())
            try:
                fd = os.open(probe, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            except OSError:
                break
            try:
                try:
                    os.write(fd, b"blat")
                finally:
                    os.close(fd)
                os.unlink(probe)
            except OSError:
                break
            _ROOT.append(directory)
            return directory
    import tempfile  # none usable: tempfile's own search raises its own error

    return tempfile.gettempdir()


def make_scratch(label: str) -> str:
    """Create this process's scratch directory of kind ``label`` (a session uid,
    ``reproduce``, ``analysis``...) in :func:`temp_root`, mode 0700, as
    :func:`tempfile.mkdtemp` would; return its path."""
    root = temp_root()
    prefix = f"benchlab-{label}-p{os.getpid()}-"
    for _ in range(10000):  # tempfile.TMP_MAX
        path = os.path.join(root, prefix + _random_part())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return os.path.abspath(path)
    raise FileExistsError(f"no usable temporary directory name found in {root}")


def remove_scratch(path: str) -> None:
    """Remove a scratch directory and everything in it (missing is fine)."""
    shutil.rmtree(path, ignore_errors=True)


def sweep_dead_scratch(tmpdir: str | None = None) -> list[str]:
    """Remove this user's scratch directories of every kind whose creating process is gone;
    return the removed paths. A pid that is alive again (reused) keeps its directory."""
    root = tmpdir or temp_root()
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
