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
    if integer_digits > 16:  # beyond a double's digits: 1e300 printed 301 of them
        return f"{value:.{digits - 1}e}"
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
#: The largest CPU (or NUMA node) number a CPU list may name: the kernel's NR_CPUS is at most
#: 8192 on every architecture today, so a larger number is a typo, not a machine.
MAX_CPU_NUMBER = 65535


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
        # Checked before expanding: "0-99999999999" would build a set that exhausts memory.
        if last > MAX_CPU_NUMBER:
            raise UserError(
                f"invalid {what} {text!r}: CPU {last} is above {MAX_CPU_NUMBER}, more than "
                "Linux supports; list this machine's CPUs (see `nproc --all`), e.g. 0,2-3"
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


# --- finite-number parsers for command-line options ------------------
# float() accepts "nan", "inf" and "1e23"; an option value like that would reach a timer, a
# cgroup file or a loop bound. These parsers refuse every non-finite or out-of-range value with
# one line that names the value and shows a correct one, so the CLI stops before any session.

_MAX_SECONDS = 366 * 86400.0
# Pattern texts, compiled by re (and kept in its cache) when first used: `run` itself never
# parses a duration, size or age, and compiling each at import cost ~0.6 M instructions.
_DURATION = r"^([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ns|us|µs|ms|s|m|min|h)?$"
_SECONDS_PER = {None: 1.0, "s": 1.0, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3,
                "m": 60.0, "min": 60.0, "h": 3600.0}
_SIZE = r"^([0-9]*\.?[0-9]+)\s*([kKmMgGtTpP]?)(i?[bB])?$"
_BYTES_PER = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def _named(what: str | None, text: object) -> str:
    return f"{what} {str(text)!r}" if what else repr(str(text))


def parse_finite_float(text: str | float, *, what: str | None = None,
                       minimum: float | None = None, maximum: float | None = None,
                       exclusive_minimum: bool = False) -> float:
    """A finite float from ``text`` (unitless), within [``minimum``, ``maximum``].

    ``exclusive_minimum`` makes the lower bound strict (e.g. a probability > 0).

    Raises:
        UserError: for text that is not a number, NaN, ±inf, or a value out of range.
    """
    try:
        value = float(str(text).strip())
    except ValueError:
        raise UserError(f"{_named(what, text)} is not a number; write e.g. 0.05") from None
    if not math.isfinite(value):
        raise UserError(f"{_named(what, text)} is not a finite number; write e.g. 0.05")
    if minimum is not None and (value < minimum or (exclusive_minimum and value == minimum)):
        bound = f"> {minimum:g}" if exclusive_minimum else f">= {minimum:g}"
        raise UserError(f"{_named(what, text)} is out of range: it must be {bound}")
    if maximum is not None and value > maximum:
        raise UserError(f"{_named(what, text)} is out of range: it must be <= {maximum:g}")
    return value


def parse_positive_int(text: str | int, *, what: str | None = None, allow_zero: bool = False,
                       maximum: int = 10**9) -> int:
    """A whole number >= 1 (>= 0 with ``allow_zero``) and <= ``maximum`` from decimal ``text``.

    Exponents (``1e3``) and fractions are refused rather than rounded: ``--runs 1e23`` is a typo.

    Raises:
        UserError: for anything else, naming the value and the accepted range.
    """
    low = 0 if allow_zero else 1
    stripped = str(text).strip()
    digits = stripped[1:] if stripped[:1] in "+-" else stripped
    if not digits.isdigit() or not digits.isascii():
        raise UserError(f"{_named(what, text)} is not a whole number; write e.g. 10 "
                        f"(from {low} to {maximum})")
    value = int(stripped)
    if not low <= value <= maximum:
        raise UserError(f"{_named(what, text)} is out of range: it must be from {low} to "
                        f"{maximum}")
    return value


def parse_duration_s(text: str | float, *, what: str | None = None, allow_zero: bool = False,
                     maximum_s: float = _MAX_SECONDS) -> float:
    """A duration in seconds from ``"1.5"`` (s), ``"200ms"``, ``"2s"``, ``"50us"``, ``"1m"``, ``"1h"``.

    The value must be finite, > 0 (>= 0 with ``allow_zero``) and <= ``maximum_s`` (default 366
    days: a longer timeout or budget is a typo, and huge values overflow timers).

    Raises:
        UserError: for malformed text, NaN, inf, negative or out-of-range durations.
    """
    stripped = str(text).strip()
    match = re.match(_DURATION, stripped)
    if not match:
        raise UserError(f"{_named(what, text)} is not a duration; write e.g. 1.5, 200ms or 2s")
    value = float(match.group(1)) * _SECONDS_PER[match.group(2)]
    if not math.isfinite(value) or value > maximum_s:
        raise UserError(f"{_named(what, text)} is too long: at most {maximum_s:g} s")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise UserError(f"{_named(what, text)} is out of range: a duration must be {bound}")
    return value


def parse_size_bytes(text: str | int, *, what: str | None = None, allow_zero: bool = False) -> int:
    """A size in bytes from ``"4096"``, ``"512K"``, ``"512M"``, ``"1.5G"``, ``"1GiB"``, ``"2T"``.

    Suffixes are binary multiples (K = 1024 bytes), as in cgroup files and ``docker --memory``.
    Sizes >= 2**63 bytes are refused: the kernel's limit files are signed 64-bit.

    Raises:
        UserError: for malformed text, zero (unless ``allow_zero``) or a size >= 2**63 bytes.
    """
    stripped = str(text).strip()
    match = re.match(_SIZE, stripped)
    if not match:
        raise UserError(f"{_named(what, text)} is not a size; write e.g. 512M, 1G or 4096 "
                        f"(bytes)")
    number, suffix = match.group(1), match.group(2).lower()
    if "." in number:
        value = math.floor(float(number) * _BYTES_PER[suffix])
    else:
        value = int(number) * _BYTES_PER[suffix]
    if value >= 1 << 63:
        raise UserError(f"{_named(what, text)} is too large: sizes must be below 2^63 bytes "
                        f"(8 EiB)")
    if value == 0 and not allow_zero:
        raise UserError(f"{_named(what, text)} is zero; write a size > 0, e.g. 512M")
    return value


# --- effects for comparisons: `--min-effect 1ms`, `500us`, `2%` -------------

_NS_PER = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "min": 60e9,
           "h": 3600e9}


def parse_duration_ns(text: str | float, *, what: str | None = None) -> float:
    """A positive duration in ns from ``"1ms"``, ``"500us"``, ``"250ns"``, ``"2s"``.

    A bare number is refused: whether ``1000`` means ns or s is exactly the confusion a unit
    prevents. The value must be finite and > 0.

    Raises:
        UserError: for malformed text, a missing unit, NaN, inf, zero or negative values.
    """
    stripped = str(text).strip()
    match = re.match(_DURATION, stripped)
    if not match or match.group(2) is None:
        raise UserError(f"{_named(what, text)} is not a duration with a unit; write e.g. 1ms, "
                        "500us or 250ns")
    value = float(match.group(1)) * _NS_PER[match.group(2)]
    if not math.isfinite(value) or value <= 0:
        raise UserError(f"{_named(what, text)} is out of range: a duration must be finite "
                        "and > 0")
    return value


def parse_effect(text: str | float, *, what: str | None = None) -> tuple[str, float]:
    """An effect size: ``("relative", fraction)`` from ``"2%"``, ``("absolute", ns)`` from a
    duration with a unit (``"1ms"``, ``"500us"``).

    Raises:
        UserError: for anything else, naming the value and both accepted forms.
    """
    stripped = str(text).strip()
    if stripped.endswith("%"):
        try:
            percent = float(stripped[:-1])
        except ValueError:
            percent = math.nan
        if not (math.isfinite(percent) and 0 < percent < 1000):
            raise UserError(f"{_named(what, text)} is not a percentage between 0 and 1000; "
                            "write e.g. 2%")
        return "relative", percent / 100.0
    try:
        return "absolute", parse_duration_ns(stripped, what=what)
    except UserError:
        raise UserError(f"{_named(what, text)} is not an effect; write a duration with a unit "
                        "(1ms, 500us) or a percentage of the baseline (2%)") from None


_AGE = r"^([0-9]+(?:\.[0-9]*)?)\s*(d|w|h|m|min|s)$"
_SECONDS_PER_AGE_UNIT = {"w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "min": 60.0,
                         "s": 1.0}


def parse_age_s(text: str, *, what: str | None = None) -> float:
    """An age in seconds from ``"30d"``, ``"2w"``, ``"12h"``, ``"90m"`` or ``"45s"`` (a unit is
    required: ``--older-than 30`` could mean anything). At most 100 years.

    Raises:
        UserError: for malformed text, zero, or an age over 100 years.
    """
    match = re.match(_AGE, str(text).strip().lower())
    if not match:
        raise UserError(f"{_named(what, text)} is not an age; write e.g. 30d, 2w, 12h or 90m")
    value = float(match.group(1)) * _SECONDS_PER_AGE_UNIT[match.group(2)]
    if value <= 0 or value > 100 * 366 * 86400.0:
        raise UserError(f"{_named(what, text)} is out of range: an age must be > 0 and at most "
                        "100 years")
    return value


# --- counts in words: "1 run", "2 runs", never "1 runs" --------------------

def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` agreeing in number: ``plural(1, "run")`` is '1 run', ``plural(2,
    "run")`` '2 runs', ``plural(1, "more run")`` '1 more run'; ``many`` for an irregular
    plural (``plural(3, "series", "series")``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


# --- which way is better, from a metric's unit ------------------------------------------------

def higher_is_better(unit: str | None) -> bool:
    """Whether a larger value of a metric in ``unit`` is an improvement.

    Anything per unit of time is a rate, where more is better: ``MB/s``, ``B/s``, ``1/s``,
    ``ops/s``, ``items/sec``, ``Hz``, ``ops/ms``. Everything else is a cost, where less is better:
    times (``ns``, ``s``, ``ns/op``), sizes and counts per operation (``B/op``,
    ``allocs/op``), plain counts and unitless values (``''``). A caller can override the
    answer per metric; this is only the default.
    """
    text = (unit or "").strip()
    if text.lower().endswith("hz"):
        return True
    if "/" not in text:
        return False
    per = text.rsplit("/", 1)[1].strip().lower()
    return per in ("s", "sec", "second", "ms", "us", "µs", "ns", "min", "h")
