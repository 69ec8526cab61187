"""The one place that turns durations, sizes and CPU lists into text and back.

Every layer formats a duration the same way (``format_time``: a fixed number of significant
digits for tables, ``format_duration`` for prose) and parses a CPU list with one grammar
(the kernel's and ``taskset -c``'s), so a value reads the same in a table, a verdict and a report.
"""

from __future__ import annotations

import math
import re
from typing import Iterable

from benchlab.errors import UserError

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


def format_duration(ns: float, digits: int = 4) -> str:
    """A duration in ns as text with a readable unit: 771550.1 -> '771.6 µs' (4 digits)."""
    mag = abs(ns)
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if mag >= scale:
            return f"{ns / scale:.{digits}g} {unit}"
    return f"{ns:.{digits}g} ns"


_RANGE = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


def parse_cpu_list(text: str, *, what: str = "CPU list") -> tuple[int, ...]:
    """Parse a kernel/taskset CPU list (``"0,2-3"``, ``"0-15:2"``) into sorted CPU numbers.

    The same grammar is used by sysfs (``cpulist`` files), ``/proc/<pid>/status``
    (``Cpus_allowed_list``) and ``taskset -c``. An empty string gives an empty tuple.

    Raises:
        UserError: on malformed input, naming ``what`` and the expected syntax.
    """
    text = text.strip()
    if not text:
        return ()
    cpus: set[int] = set()
    for part in text.split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise UserError(
                f"invalid {what} {text!r}: {part.strip()!r} is not N, N-M or N-M:STEP; "
                "write it as for taskset -c, e.g. 0,2-3"
            )
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        step = int(match.group(3)) if match.group(3) is not None else 1
        if last < first or step < 1:
            raise UserError(
                f"invalid {what} {text!r}: range {part.strip()!r} is empty; "
                "write ranges low-high as for taskset -c, e.g. 0,2-3"
            )
        cpus.update(range(first, last + 1, step))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """Format CPU numbers in the compact kernel/taskset syntax, e.g. ``(0, 1, 2, 5)`` -> ``"0-2,5"``."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        start = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == ordered[index] + 1:
            index += 1
        end = ordered[index]
        parts.append(str(start) if start == end else f"{start}-{end}")
        index += 1
    return ",".join(parts)
