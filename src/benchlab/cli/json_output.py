"""The one writer of every ``--json`` output of the command line."""

from __future__ import annotations

import json
from typing import Any

import click

from benchlab.jsonable import jsonable


def echo_json(value: Any, indent: int | None = 2) -> None:
    """Print ``value`` as standard JSON on stdout.

    numpy scalars become numbers, dataclasses and objects with ``to_dict`` dicts, NaN and
    infinities ``null`` (an undefined CV, a missing bound): Python's ``json`` would print
    ``NaN``, which JSON parsers other than Python's refuse. Anything else prints as text."""
    click.echo(json.dumps(jsonable(value), indent=indent, default=str, allow_nan=False))
