"""Where a run's ``--samples-csv`` file may be: benchlab removes that file before each run (a
stale file must not pass for the run's) and once its rows are stored, so it may only ever remove
a file this session's runs made. A path that already holds something is refused before the
session starts.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from benchlab.errors import UserError


def check_samples_paths(template: str, workers: int, store: Any = None,
                        own_since: float | None = None) -> None:
    """Refuse (UserError) a ``--samples-csv`` path benchlab may not use, before the session.

    benchlab removes the samples file before each run (a stale file must not pass for the
    run's) and after its rows are stored, so a path that already holds something is refused:
    a file there is someone's, not this session's. ``own_since`` (Unix time, s) is a resumed
    session's start: a regular file modified since then is what its interrupted run left.
    ``template`` may hold ``{worker}`` (one file per worker, ``workers`` of them); none may be
    ``store``'s files.
    """
    paths = [template.replace("{worker}", str(w)) for w in range(workers)]
    if store is not None:  # first: "is the store" says more than "already exists"
        for path in paths:
            store.refuse_output_path(path, "--samples-csv")
    for path in paths:
        _check_samples_path(path, own_since)
    if workers > 1 and "{worker}" not in template:
        raise UserError("--samples-csv with --workers > 1: the workers would overwrite "
                        "one file; put {worker} in the path and let the program write "
                        "BENCHLAB_WORKER's file")


def _check_samples_path(path: str, own_since: float | None) -> None:
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"--samples-csv {path}: {exc.strerror}; give a path the program can "
                        f"write") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"--samples-csv {path} is a directory; give the path of the file the "
                        f"program writes")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        raise UserError(f"--samples-csv {path} is not a regular file (a device or FIFO, which "
                        f"benchlab would remove before each run); give the path of the file "
                        f"the program writes")
    if own_since is not None and stat.S_ISREG(st.st_mode) and st.st_mtime >= own_since:
        return
    raise UserError(f"--samples-csv {path} already exists and benchlab would remove it before "
                    f"each run; move it away or give a new path")


def remove_samples_file(path: str) -> None:
    """Remove the run's samples file (absent: nothing to do): before a run, so a stale file
    cannot pass for the run's, and after its rows are stored, so the path is free for the next
    session. Only a file this session's runs made is there (:func:`check_samples_paths`)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
