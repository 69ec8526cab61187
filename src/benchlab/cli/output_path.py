"""``OutputPath``: the Click type of every option that names a file or directory benchlab writes.

Each such option is checked by the one guard (:func:`benchlab.store.paths.refuse_output_path`)
while Click parses the command line, so a path that is the store (or its -wal/-shm/-journal
file, or a link to one) is refused in one line, exit 2, before the command's body runs: nothing
is measured, computed or stored. Click converts parameters in the order the user typed them,
so whichever of the output option and ``--db`` comes second does the check:

- ``OutputPath.convert`` checks against ``--db`` when it is already parsed (or against the
  default store, for a command without ``--db``);
- ``guard_outputs``, the callback of the shared ``--db`` option (``cli/common.py``), checks every
  output option parsed before it.

``tests/badinput/test_output_guard.py`` walks every command and fails on an option that looks
like an output (``-o``, ``--output``, ``--export-*``, ``--report``, ``--plot(s)``, a FILE/DIR
metavar...) and is not an ``OutputPath``, and runs each one against the store.
"""

from __future__ import annotations

import os
from typing import Any

import click

from benchlab.errors import UserError


class OutputPath(click.ParamType):
    """A path benchlab will write (a file, or a directory of files with ``directory=True``).

    ``keywords`` are values that are not paths (``--output null|pipe|inherit``, ``-o -``) and
    pass unchecked. ``{worker}`` in a path stands for any worker number. The value is returned
    as ``path_type`` (``str``, or ``pathlib.Path``).
    """

    name = "output path"

    def __init__(self, *, directory: bool = False, keywords: tuple[str, ...] = (),
                 path_type: type = str) -> None:
        self.directory = directory
        self.keywords = keywords
        self.path_type = path_type

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        if value is None or isinstance(value, str) and value in self.keywords:
            return value
        text = os.fspath(value)
        if not text:
            self.fail("an empty path; give a file name", param, ctx)
        if ctx is not None:
            if _has_db_option(ctx.command):
                if "db" in ctx.params:
                    _check(text, ctx.params["db"], param)
            else:
                _check(text, None, param)
        return self.path_type(text)


def _has_db_option(command: click.Command) -> bool:
    return any(p.name == "db" for p in command.params)


def _option_name(param: click.Parameter | None) -> str:
    if param is None:
        return "output"
    longest = max(param.opts, key=len) if param.opts else param.name
    return longest if isinstance(param, click.Option) else str(param.human_readable_name)


def _check(path: str, db: str | None, param: click.Parameter | None) -> None:
    from benchlab.store.connection import default_db_path
    from benchlab.store.paths import refuse_output_path

    if db == "":
        return  # ``--db ''`` is refused by opening the store, with its own message
    name = _option_name(param)
    refuse_output_path(path, default_db_path() if db is None else db, name)
    wants_directory = param is not None and getattr(param.type, "directory", False)
    if wants_directory and os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"{name} {path} is a file; give a directory")
    if not wants_directory and os.path.isdir(path):
        raise UserError(f"{name} {path} is a directory; give a file path in it")


def _values(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [os.fspath(v) for v in value if isinstance(v, (str, os.PathLike))]
    return [os.fspath(value)] if isinstance(value, (str, os.PathLike)) else []


#: Files the environment names and a command appends to: (variable, the commands that do).
#: A CI runner sets ``GITHUB_STEP_SUMMARY``; pointed at a store (or its -wal) the summary
#: would be appended to the database, so it is checked like an option's path.
APPENDED_FILES = (("GITHUB_STEP_SUMMARY", ("ab", "gate", "bisect")),)


def guard_outputs(ctx: click.Context, param: click.Parameter, db: str | None) -> str | None:
    """Callback of ``--db``: check every output option parsed before it against this store, and
    the files of :data:`APPENDED_FILES` the command appends to."""
    for other in ctx.command.params:
        if isinstance(other.type, OutputPath) and other.name in ctx.params:
            for value in _values(ctx.params[other.name]):
                if str(value) not in other.type.keywords:
                    _check(value, db, other)
    if db != "":
        for variable, commands in APPENDED_FILES:
            path = os.environ.get(variable)
            if path and ctx.command.name in commands:
                from benchlab.store.connection import default_db_path
                from benchlab.store.paths import refuse_output_path

                refuse_output_path(path, default_db_path() if db is None else db, f"${variable}")
    return db


def output_params(command: click.Command) -> list[click.Parameter]:
    """The parameters of ``command`` that are guarded output paths."""
    return [p for p in command.params if isinstance(p.type, OutputPath)]


#: The type of ``-o FILE`` and the like, and of ``--plots DIR`` and the like.
OUTPUT_FILE = OutputPath()
OUTPUT_DIR = OutputPath(directory=True)

__all__ = ["OutputPath", "OUTPUT_FILE", "OUTPUT_DIR", "guard_outputs", "output_params"]
