"""Plain JSON values from benchlab's results: numpy scalars and arrays, NaN, dataclasses.

Used by the statistics' ``to_dict`` methods and by every ``--json`` output of the command line
(:func:`benchlab.cli.json_output.echo_json`). numpy values are recognised by their ``tolist``
method, so this module does not import numpy (``benchlab env --json`` does not need it).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping


def jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars and arrays to Python numbers and lists, NaN and
    infinities to None, dataclasses and objects with ``to_dict`` to dicts."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        value = value.to_dict()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, float):  # numpy's float64 too (a float subclass)
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return int(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        return jsonable(value.tolist())
    return value
