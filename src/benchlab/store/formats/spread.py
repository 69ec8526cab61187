"""The spread an export table prints, finite for every float a store holds."""

from __future__ import annotations

import math

import numpy as np


def sample_sd(values) -> float:
    """The sample standard deviation (ddof 1, the values' unit) of a numpy array, computed on
    the values scaled by a power of two (exact): values near 1e300 square to inf in
    ``np.std`` (with a RuntimeWarning), their sd does not."""
    top = float(np.max(np.abs(values))) if values.size else 0.0
    e = math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0
    return float(np.ldexp(np.ldexp(values.astype(np.float64), -e).std(ddof=1), e))
