"""Checks of the names an ``--isolation`` value gives to another program, made before any
session exists: an image or runtime name that the engine would read as an option, a ``wrap:``
program that cannot start (every run would fail the same way, after the session was stored).
"""

from __future__ import annotations

import os
import shlex
import shutil

from benchlab.errors import UserError


def not_an_option(kind: str, rest: str, name: str, what: str) -> None:
    """Refuse ``name`` (``what``: "an image", "a runtime") when it begins with ``-``: placed in
    the engine's argv it would be an option (``podman run ... --privileged true``)."""
    if name.startswith("-"):
        raise UserError(f"--isolation {kind}:{rest}: {what} name cannot begin with '-' (the "
                        f"engine would take it as an option); e.g. {kind}:localhost/IMAGE")


def check_wrapper(template: str) -> None:
    """Refuse a ``wrap:`` template whose first word is not an executable here (``{cmd}`` first:
    the program itself starts)."""
    first = shlex.split(template)[0]
    if "{" in first:
        return
    found = shutil.which(first) if "/" not in first else (
        os.path.isfile(first) and os.access(first, os.X_OK))
    if not found:
        raise UserError(f"--isolation wrap:{template}: {first!r} is not an executable here; "
                        f"install it or give its full path")
