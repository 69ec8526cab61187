"""Readable units for durations and sizes."""

from __future__ import annotations

import math

_TIME_UNITS = [("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0)]


def time_unit_for(ns: float) -> tuple[str, float]:
    """The unit (name, ns per unit) that shows ``ns`` with 1 to 3 integer digits."""
    a = abs(ns)
    for name, scale in _TIME_UNITS:
        if a >= scale:
            return name, scale
    return "ns", 1.0


def format_time(ns: float | None, unit: tuple[str, float] | None = None, digits: int = 4) -> str:
    """A duration in ns as e.g. ``12.34 ms`` (``unit`` forces a common unit for a column)."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    name, scale = unit or time_unit_for(ns)
    value = ns / scale
    return f"{_sig(value, digits)} {name}"


def format_kib(kib: float | None) -> str:
    """A size in KiB as e.g. ``1.50 MiB``."""
    if kib is None or (isinstance(kib, float) and math.isnan(kib)):
        return "-"
    for name, scale in (("GiB", 1024.0 ** 2), ("MiB", 1024.0), ("KiB", 1.0)):
        if abs(kib) >= scale:
            return f"{_sig(kib / scale, 3)} {name}"
    return f"{kib:.0f} KiB"


def format_value(value: float | None, unit: str, digits: int = 4) -> str:
    """A value in its metric's unit: durations (ns) and sizes (KiB) get readable units."""
    if unit == "ns":
        return format_time(value, digits=digits)
    if unit == "KiB":
        return format_kib(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    text = _sig(value, max(digits, 5))
    return f"{text} {unit}".strip()


def _sig(value: float, digits: int) -> str:
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    integer_digits = max(1, int(math.floor(math.log10(abs(value)))) + 1)
    decimals = max(0, digits - integer_digits)
    return f"{value:.{decimals}f}"
