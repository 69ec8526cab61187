"""Shared by every reader: the unknown marker, small /proc and /sys reads, and short probes.

Every leaf the readers return is either a plain value or ``{"unknown": "<reason>"}``: a field this
machine does not expose is never guessed.
"""

from __future__ import annotations

import datetime as _dt
import re
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SUBPROCESS_TIMEOUT_S = 1.0


# --------------------------------------------------------------------------------------------
# Unknown values


def unknown(reason: str) -> dict[str, str]:
    """Return the marker for a field that could not be determined, with the reason."""
    return {"unknown": reason}


def is_unknown(value: Any) -> bool:
    """Tell whether ``value`` is an unknown marker produced by :func:`unknown`."""
    return isinstance(value, dict) and len(value) == 1 and "unknown" in value


def utc_now_iso() -> str:
    """Current UTC time as ISO 8601 with microseconds and a trailing ``Z``."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")


def iso_from_epoch(epoch_s: float) -> str:
    moment = _dt.datetime.fromtimestamp(epoch_s, _dt.timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def read_text(path: str | Path) -> str | dict[str, str]:
    """Read a small /proc or /sys file, stripped; an unknown marker naming why it failed."""
    try:
        return Path(path).read_text(errors="replace").strip()
    except FileNotFoundError:
        return unknown(f"{path} does not exist")
    except PermissionError:
        return unknown(f"{path} is not readable (permission denied)")
    except OSError as exc:
        return unknown(f"{path} could not be read: {exc.strerror or exc}")


def read_int(path: str | Path) -> int | dict[str, str]:
    text = read_text(path)
    if is_unknown(text):
        return text
    try:
        return int(text)
    except ValueError:
        return unknown(f"{path} holds {text!r}, not an integer")


def bracketed_choice(text: str) -> str:
    """``"always [madvise] never"`` -> ``"madvise"`` (the sysfs way of showing the active one)."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


# --------------------------------------------------------------------------------------------
# Concurrent short subprocesses


class Probe:
    """A short external command started now and read later, so several run concurrently."""

    def __init__(self, argv: Sequence[str], cwd: str | None = None, env: Mapping[str, str] | None = None):
        self.argv = list(argv)
        self.proc: subprocess.Popen[str] | None = None
        self.error: str | None = None
        exe = shutil.which(self.argv[0])
        if exe is None:
            self.error = f"{self.argv[0]} is not installed"
            return
        try:
            self.proc = subprocess.Popen(
                [exe, *self.argv[1:]], cwd=cwd, env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
        except OSError as exc:
            self.error = f"could not run {self.argv[0]}: {exc.strerror or exc}"

    def result(self, deadline: float) -> tuple[int, str, str] | str:
        """(returncode, stdout, stderr), or a reason string when it could not run in time."""
        if self.proc is None:
            return self.error or "not started"
        try:
            out, err = self.proc.communicate(timeout=max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return f"{' '.join(self.argv)} did not finish within {SUBPROCESS_TIMEOUT_S:g} s"
        return self.proc.returncode, out, err
