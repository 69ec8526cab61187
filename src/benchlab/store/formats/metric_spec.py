"""The one metric spec: ``NAME[:UNIT]=REGEX``, the parser of program-reported values in text.

A benchmarked program often prints its own measurement (``took 1234 ns``). A metric spec names
that value, gives its unit and a regular expression with exactly ONE capturing group around the
number. The same spec serves ``benchlab run --metric`` (output of live runs) and
``benchlab import --format metric`` (saved outputs); it lives here, with the file formats,
because it is the parser of a text format, and every layer above imports it from here.

The regex is compiled with :data:`re.MULTILINE`, so ``^`` and ``$`` match at line boundaries;
every match in the text yields one value, in order. Values must be finite numbers.
"""

from __future__ import annotations

import codecs
import functools
import math
import re
from typing import BinaryIO, Iterator

from benchlab.errors import UserError
from benchlab.lazy import lazy_pattern  # compiled when first used: run never uses it
from benchlab.records import record

_NAME_UNIT = lazy_pattern(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?::(?P<unit>[^=]*))?$")

_EXAMPLE = "e.g. --metric 'latency_ns:ns=took (\\d+) ns'"


class MetricSpecError(UserError):
    """A ``--metric`` spec that cannot be used (syntax, regex, or group count)."""


class MetricValueError(UserError):
    """A metric regex captured text that is not a finite number."""


@record(frozen=True)  # its own __init__; the rest not compiled at import
class MetricSpec:
    """One program-reported metric: ``name``, ``regex`` (source text, exactly one capturing
    group around the number) and ``unit`` ('' when not given).

    Plain, serialisable data (``dataclasses.asdict`` gives ``{"name", "regex", "unit"}``); the
    regex is validated on construction (:class:`MetricSpecError`) and compiled with
    :data:`re.MULTILINE` once per distinct text (:attr:`pattern`).
    """

    name: str
    regex: str
    unit: str = ""

    def __init__(self, name: str, regex: str, unit: str | None = "",
                 pattern: re.Pattern | None = None) -> None:
        # ``pattern`` is accepted from callers that compiled the regex already; compiling is
        # cached, so it is not kept.
        if not isinstance(name, str) or not name:
            raise MetricSpecError(f"a metric needs a name; write NAME[:UNIT]=REGEX, {_EXAMPLE}")
        if not isinstance(regex, str):
            raise MetricSpecError(f"--metric {name}: the regex must be text; {_EXAMPLE}")
        _refuse_reserved(name)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "unit", unit or "")
        compile_metric_regex(regex)

    @property
    def pattern(self) -> re.Pattern:
        """The compiled regex (``re.MULTILINE``)."""
        return compile_metric_regex(self.regex)

    @property
    def spec(self) -> str:
        """The ``NAME[:UNIT]=REGEX`` text this spec parses from."""
        return f"{self.name}{':' + self.unit if self.unit else ''}={self.regex}"

    def as_dict(self) -> dict[str, str]:
        """JSON-friendly form: ``{"name", "unit", "regex"}``."""
        return {"name": self.name, "unit": self.unit, "regex": self.regex}

    @classmethod
    def parse(cls, text: str) -> "MetricSpec":
        """Parse ``NAME[:UNIT]=REGEX`` (see :func:`parse_metric_spec`)."""
        return parse_metric_spec(text)

    def extract(self, text: str, *, where: str = "") -> list[float]:
        """All values of this metric in ``text`` (see :func:`extract`)."""
        return extract(self, text, where=where)


def _refuse_reserved(name: str) -> None:
    """A program metric named like a harness series (``wall``, ``user``, ``max_rss`` ...) would
    be shadowed by it in every analysis: its values stored and never shown."""
    from benchlab.store.queries import HARNESS_METRICS

    if name in HARNESS_METRICS:
        raise MetricSpecError(
            f"--metric {name}: {name!r} is the name of a series benchlab measures itself "
            f"({', '.join(HARNESS_METRICS)}); give the program's metric another name, "
            f"e.g. {name}_reported")


@functools.lru_cache(maxsize=256)
def compile_metric_regex(regex: str) -> re.Pattern:
    """Compile a metric regex and check it has exactly one capturing group.

    Raises :class:`MetricSpecError` (a one-line UserError) for an invalid regex or a group count
    other than one.
    """
    try:
        pattern = re.compile(regex, re.MULTILINE)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise MetricSpecError(
            f"--metric regex '{regex}' is not a valid regular expression ({exc.msg}{where}); "
            f"fix it, {_EXAMPLE}") from None
    if pattern.groups != 1:
        raise MetricSpecError(
            f"--metric regex '{regex}' has {pattern.groups} groups; it needs exactly one "
            f"(put parentheses around the number only and write other groups as (?:...), "
            f"{_EXAMPLE})")
    return pattern


def parse_metric_spec(text: str) -> MetricSpec:
    """Parse ``NAME[:UNIT]=REGEX`` into a :class:`MetricSpec`.

    ``NAME`` starts with a letter or ``_`` and may contain letters, digits, ``_``, ``.`` and
    ``-``. ``UNIT`` is free text without ``=`` (e.g. ``ns``, ``us``, ``MiB/s``). Everything after
    the first ``=`` is the regex, so the regex itself may contain ``=`` and ``:``.

    Raises :class:`MetricSpecError` with a one-line message naming the problem and the fix.
    """
    left, sep, regex = text.partition("=")
    if not sep or not regex:
        raise MetricSpecError(f"--metric {text!r} must look like NAME[:UNIT]=REGEX; {_EXAMPLE}")
    m = _NAME_UNIT.match(left.strip())
    if m is None:
        raise MetricSpecError(
            f"--metric {text!r}: {left!r} is not a valid NAME[:UNIT] (NAME: letters, digits, "
            f"_ . -, starting with a letter); {_EXAMPLE}")
    name = m.group("name")
    unit = (m.group("unit") or "").strip()
    return MetricSpec(name=name, regex=regex, unit=unit)


def extract(spec: MetricSpec, text: str, *, where: str = "") -> list[float]:
    """All values of ``spec`` in ``text``, in order of appearance (in ``spec.unit``).

    Returns an empty list when the regex does not match. ``where`` (e.g. a file name) is used in
    the error message only. Raises :class:`MetricValueError` when the group captured text that
    is not a finite number.
    """
    values: list[float] = []
    for match in spec.pattern.finditer(text):
        raw = match.group(1)
        if raw is None:
            continue  # group inside an optional part that did not take part in the match
        try:
            value = float(raw.strip())
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            at = f" in {where}" if where else ""
            raise MetricValueError(
                f"--metric {spec.name} captured {raw!r}{at}, which is not a finite number; "
                f"make the group match only the number, e.g. ([0-9.]+)")
        values.append(value)
    return values


#: Text is matched in blocks of whole lines of about this many bytes (bounded memory).
BLOCK_BYTES = 1 << 20
#: A line longer than this (bytes) is matched in pieces of this size.
MAX_LINE_BYTES = 8 << 20


def line_blocks(fh: BinaryIO, *, block_bytes: int = BLOCK_BYTES,
                max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The text of the binary stream ``fh`` (UTF-8, undecodable bytes replaced) in blocks that
    end at a line end, each about ``block_bytes`` (bytes) long, so memory stays bounded however
    much a program printed. A line longer than ``max_line_bytes`` (bytes) is cut there."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while True:
        raw = fh.read(block_bytes)
        pending += decoder.decode(raw, final=not raw)
        if not raw:
            if pending:
                yield pending
            return
        cut = pending.rfind("\n") + 1
        if cut:
            yield pending[:cut]
            pending = pending[cut:]
        elif len(pending) >= max_line_bytes:
            yield pending
            pending = ""


def extract_stream(specs: list[MetricSpec], fh: BinaryIO, *, where: str = "",
                   block_bytes: int = BLOCK_BYTES) -> dict[str, list[float]]:
    """Values of every spec in the binary stream ``fh``, read in blocks of whole lines (memory
    bounded by ``block_bytes`` and :data:`MAX_LINE_BYTES`, bytes, not by the stream's size).

    Every match inside one line is found as by :func:`extract` on the whole text; a match that
    spans lines is found when its lines fall in one block (a regex spanning lines is rare: the
    value and its label are printed on one line). Raises :class:`MetricValueError` as
    :func:`extract` does.
    """
    out: dict[str, list[float]] = {spec.name: [] for spec in specs}
    for block in line_blocks(fh, block_bytes=block_bytes):
        for spec in specs:
            out[spec.name] += extract(spec, block, where=where)
    return out
