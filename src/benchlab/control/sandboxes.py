"""IOI's ``isolate`` sandbox: its boxes (one per worker) and the argv of a run in one.

isolate(1) runs a program in a box prepared with ``isolate --box-id=N --init`` and removed with
``--cleanup``; a run writes a meta file (``--meta=FILE``) that is the isolator's own view of the
run (see :func:`benchlab.measure.isolation.parse_isolate_meta`). benchlab initialises a box on
first use and cleans up every box it initialised when this process exits. The program's own
directory is bound read-only into the box (isolate binds only /bin, /lib, /usr and the box by
default); the environment is inherited (``--full-env``); any number of processes is allowed.

isolate is not packaged in Debian and is not installed on benchlab's reference machine: this
module runs only where an administrator installed it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import threading

from benchlab.errors import UserError

_BOXES: set[int] = set()
_LOCK = threading.Lock()
_SYSTEM_PREFIXES = ("/bin", "/lib", "/lib64", "/usr")


def _isolate() -> str:
    path = shutil.which("isolate")
    if path is None:
        raise UserError("isolate (IOI's sandbox) is not installed here (it is not packaged in "
                        "Debian: build it from github.com/ioi/isolate), or use --isolation bwrap")
    return path


def init_isolate_box(box: int) -> None:
    """Initialise isolate's box ``box`` once per process; UserError when isolate refuses."""
    with _LOCK:
        if box in _BOXES:
            return
        proc = subprocess.run([_isolate(), f"--box-id={box}", "--init"], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=60)
        if proc.returncode != 0:
            line = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise UserError(f"isolate --box-id={box} --init failed ({line}); check isolate's "
                            "configuration (isolate-check-environment)")
        if not _BOXES:
            atexit.register(cleanup_isolate_boxes)
        _BOXES.add(box)


def isolate_run_argv(argv: list[str], *, box: int, meta_path: str) -> list[str]:
    """The argv running ``argv`` in box ``box`` with its meta file written to ``meta_path``."""
    init_isolate_box(box)
    dirs = []
    if argv and os.path.isabs(argv[0]):
        d = os.path.dirname(os.path.realpath(argv[0]))
        if not d.startswith(_SYSTEM_PREFIXES):
            dirs.append(f"--dir={d}")
    return [_isolate(), f"--box-id={box}", f"--meta={meta_path}", "--processes", "--full-env",
            "--silent", *dirs, "--run", "--", *argv]


def cleanup_isolate_boxes() -> None:
    """Clean up every box this process initialised (run at exit; safe to call twice)."""
    with _LOCK:
        boxes = sorted(_BOXES)
        _BOXES.clear()
    for box in boxes:
        try:
            subprocess.run([_isolate(), f"--box-id={box}", "--cleanup"], capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        except (UserError, OSError, subprocess.TimeoutExpired):
            pass  # at exit: nothing more to do
