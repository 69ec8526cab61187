"""``restore``: put back the values ``tune`` saved, trusting nothing in the state file.

Restore runs as root and writes kernel files, so a state file is a command: whoever can write
one could make root write any file. It is therefore accepted only when

- it is a regular file (not a symlink), owned by root, mode 600, at most 64 KiB;
- it has exactly the schema :func:`benchlab.control.system.tune` writes (format, tuned_at,
  boot_id, settings), each setting exactly name, path, previous, applied, no name twice;
- every name is one ``tune`` changes, its path is that setting's known path
  (:func:`~benchlab.control.system.tuning.known_setting_path`), and its values are ones that
  kernel file can hold.

Everything is checked before anything is written: a refused file changes nothing.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from benchlab.control.system.checks import reason_of
from benchlab.control.system.tuning import (
    STATE_DIR_ENV,
    STATE_FORMAT,
    current_value,
    default_state_path,
    known_setting_path,
    require_root,
    valid_setting_value,
    write_setting,
    write_state,
)
from benchlab.environment import is_unknown
from benchlab.errors import UserError

MAX_STATE_BYTES = 64 * 1024
_STATE_KEYS = {"format", "tuned_at", "boot_id", "settings"}
_SETTING_KEYS = {"name", "path", "previous", "applied"}


def _refuse(path: Path, problem: str) -> UserError:
    return UserError(f"refusing to restore from {path}: {problem}; restore only from the state "
                     "file `benchlab system tune` wrote, or set the values by hand")


def read_state_file(path: Path) -> dict[str, Any]:
    """Open, check and parse a tune state file; UserError (nothing written) if it is not benchlab's.

    Opened with O_NOFOLLOW and checked with fstat on the open descriptor, so the file checked is
    the file read (no swap between the check and the read).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UserError(f"no tune state at {path}: nothing to restore (set {STATE_DIR_ENV} to the "
                        "directory used by `benchlab system tune`)") from None
    except OSError as exc:
        raise _refuse(path, f"it cannot be opened as a plain file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "it is not a regular file")
        if info.st_uid != 0:
            raise _refuse(path, f"it is owned by uid {info.st_uid}, not root")
        if stat.S_IMODE(info.st_mode) != 0o600:
            raise _refuse(path, f"its mode is {stat.S_IMODE(info.st_mode):o}, not 600 "
                                "(others could have written it)")
        if info.st_size > MAX_STATE_BYTES:
            raise _refuse(path, f"it is {info.st_size} bytes, more than a state file's "
                                f"{MAX_STATE_BYTES}")
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            raw = handle.read(MAX_STATE_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        state = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refuse(path, "it is not a JSON document") from None
    validate_state(state, path)
    return state


def validate_state(state: Any, path: Path) -> None:
    """Check the schema and every setting's name, path and values; UserError on the first problem."""
    if not isinstance(state, dict) or set(state) != _STATE_KEYS:
        raise _refuse(path, f"its keys are not exactly {', '.join(sorted(_STATE_KEYS))}")
    if state["format"] != STATE_FORMAT or isinstance(state["format"], bool):
        raise _refuse(path, f"its format is {state['format']!r}, not {STATE_FORMAT}")
    settings = state["settings"]
    if not isinstance(settings, list) or not settings:
        raise _refuse(path, "settings is not a non-empty list")
    seen: set[str] = set()
    for index, setting in enumerate(settings):
        where = f"setting {index + 1}"
        if not isinstance(setting, dict) or set(setting) != _SETTING_KEYS:
            raise _refuse(path, f"{where} does not have exactly {', '.join(sorted(_SETTING_KEYS))}")
        name = setting["name"]
        allowed = known_setting_path(name)
        if not allowed:
            raise _refuse(path, f"{where} names {name!r}, which tune never changes")
        if name in seen:
            raise _refuse(path, f"{where} repeats {name!r}")
        seen.add(name)
        if not isinstance(setting["path"], str) or Path(setting["path"]) not in allowed:
            raise _refuse(path, f"{where} ({name}) names path {setting['path']!r}; tune writes "
                                f"{name} only at {' or '.join(map(str, allowed))}")
        for key in ("previous", "applied"):
            if not valid_setting_value(name, setting[key]):
                raise _refuse(path, f"{where} ({name}) has {key} {setting[key]!r}, not a value "
                                    f"{setting['path']} can hold")


def restore(state_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Write back every value saved by :func:`~benchlab.control.system.tune`, remove the state file.

    Returns
    -------
    dict
        ``state_path`` and ``restored``: per setting name, path, value now (the previous one),
        value before restoring.

    Raises
    ------
    UserError
        Not root; no state file, or one benchlab did not write (see the module docstring: nothing
        is written then); a value could not be written back (the state file is then kept with
        only the settings still to restore).
    """
    require_root("restore")
    path = Path(state_path) if state_path is not None else default_state_path()
    state = read_state_file(path)
    restored, failed = [], []
    # Reverse order undoes the changes in the opposite order they were made.
    for setting in reversed(state["settings"]):
        before = current_value(Path(setting["path"]))
        error = write_setting(setting["path"], setting["previous"])
        if error:
            failed.append({**setting, "error": error})
        else:
            restored.append({"name": setting["name"], "path": setting["path"],
                             "value": setting["previous"],
                             "was": reason_of(before) if is_unknown(before) else before})
    if failed:
        write_state(path, {**state, "settings": [
            {k: v for k, v in s.items() if k != "error"} for s in failed]})
        raise UserError("could not restore: " + "; ".join(s["error"] for s in failed)
                        + f"; state kept in {path}")
    path.unlink()
    return {"state_path": str(path), "restored": restored}
