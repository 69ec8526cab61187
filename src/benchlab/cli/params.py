"""Click parameter types that refuse NaN, inf, huge and negative values before anything runs.

Built on the parsers of :mod:`benchlab.units`, so the rules (and messages) are the same as for
values read from files. Use them as ``type=`` of a Click option::

    @click.option("--timeout", type=params.SECONDS)            # "1.5", "200ms", "2s" -> float s
    @click.option("--runs", "-r", type=params.COUNT)           # int >= 1
    @click.option("--warmup", type=params.COUNT0)              # int >= 0
    @click.option("--memory-limit", type=params.SIZE)          # "512M", "1G" -> int bytes
    @click.option("--alpha", type=params.PROBABILITY)          # 0 < p < 1

A bad value becomes Click's ``BadParameter``: ``benchlab: error: Invalid value for '--timeout':
'inf' is not a finite ...``, exit 2, before a session is created.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from benchlab import units
from benchlab.errors import UserError


class _Parsed(click.ParamType):
    """A ParamType whose conversion is one :mod:`benchlab.units` parser."""

    def __init__(self, name: str, parse: Callable[[Any], Any], metavar: str):
        self.name = name
        self._parse = parse
        self._metavar = metavar

    def get_metavar(self, param, ctx=None) -> str:  # noqa: D102 - Click hook
        return self._metavar

    def convert(self, value, param, ctx):  # noqa: D102 - Click hook
        if value is None:
            return None
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a {self.name}", param, ctx)
        try:
            return self._parse(value)
        except UserError as exc:
            self.fail(str(exc), param, ctx)


def seconds(*, allow_zero: bool = False, maximum_s: float = 366 * 86400.0) -> click.ParamType:
    """A duration option converted to float seconds (text like ``1.5``, ``200ms``, ``2s``)."""
    return _Parsed("duration", lambda v: units.parse_duration_s(
        v, allow_zero=allow_zero, maximum_s=maximum_s), "DURATION")


def count(*, allow_zero: bool = False, maximum: int = 10**9) -> click.ParamType:
    """A whole-number option (runs, repeats, workers) converted to int in [1 or 0, maximum]."""
    return _Parsed("count", lambda v: units.parse_positive_int(
        v, allow_zero=allow_zero, maximum=maximum), "N")


def size(*, allow_zero: bool = False) -> click.ParamType:
    """A size option converted to int bytes (``512M``, ``1G``, ``4096``; below 2**63)."""
    return _Parsed("size", lambda v: units.parse_size_bytes(v, allow_zero=allow_zero), "SIZE")


def finite_float(*, minimum: float | None = None, maximum: float | None = None,
                 exclusive_minimum: bool = False, metavar: str = "X") -> click.ParamType:
    """A unitless finite float option within [minimum, maximum] (NaN and ±inf refused)."""
    return _Parsed("number", lambda v: units.parse_finite_float(
        v, minimum=minimum, maximum=maximum, exclusive_minimum=exclusive_minimum), metavar)


#: Duration in seconds, > 0, at most 366 days.
SECONDS = seconds()
#: Whole number >= 1 (runs, repeats, trials).
COUNT = count()
#: Whole number >= 0 (warm-up runs).
COUNT0 = count(allow_zero=True)
#: Size in bytes, > 0, below 2**63.
SIZE = size()
#: A probability strictly between 0 and 1 (alpha, power, quantile levels).
PROBABILITY = _Parsed("probability", lambda v: _open_unit_interval(v), "P")
#: A finite number > 0 (ratios, effect sizes, CV targets).
POSITIVE = finite_float(minimum=0.0, exclusive_minimum=True)


def _open_unit_interval(value: Any) -> float:
    number = units.parse_finite_float(value, minimum=0.0, maximum=1.0, exclusive_minimum=True)
    if number == 1.0:
        raise UserError(f"{str(value)!r} is out of range: a probability must be < 1")
    return number
#: A random seed: a whole number from 0 to 2**32 - 1 (what numpy's and the stored seeds accept;
#: a negative or 30-digit seed is a typo, and numpy refuses it deep inside a run).
SEED = count(allow_zero=True, maximum=2**32 - 1)
#: A finite number >= 0 (margins, MAD multipliers where 0 means "off").
NONNEGATIVE = finite_float(minimum=0.0)
