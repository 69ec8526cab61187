"""Plain JSON values from the results of benchlab.stats (numpy scalars, NaN, dataclasses)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np


def jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars to Python, NaN/inf to None, dataclasses to dicts."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        value = value.to_dict()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value
