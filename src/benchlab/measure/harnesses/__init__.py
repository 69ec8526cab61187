"""Benchmark harnesses: programs that time their own benchmarks and report many at once.

A harness (Go's ``testing.B``, Google Benchmark, criterion.rs, pytest-benchmark) runs for a fixed
time and prints its own numbers (ns/op, MB/s, allocs/op...); its wall or CPU time means nothing.
``--harness KIND`` runs the harness's command once per run and takes every benchmark it reports
as a benchmark of the session (or of the gate), each metric with the unit the harness gave.

One interface (:class:`Harness`), one registry (:data:`HARNESSES`): adding a harness is one
module that defines a subclass and calls :func:`register`, plus its line in
:data:`HARNESS_MODULES` (the module is imported when its kind is first asked for). Each harness
says how to make the command write machine-readable output
(:meth:`Harness.prepare`) and reads one run's output with the one parser of its format in
:mod:`benchlab.store.formats` (:meth:`Harness.parse`), the parser ``benchlab import`` uses.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from benchlab.errors import UserError

#: Harness kind -> the module that registers it (imported on first use), in the order messages
#: list them.
HARNESS_MODULES = {"go": f"{__name__}.go", "gbench": f"{__name__}.gbench",
                   "criterion": f"{__name__}.criterion",
                   "pytest-benchmark": f"{__name__}.pytest_benchmark", "jmh": f"{__name__}.jmh"}
#: Registered harnesses by kind (filled as their modules are imported).
HARNESSES: dict[str, "Harness"] = {}


class HarnessFailed(UserError):
    """The harness's command failed or reported nothing usable: a failed run (exit status 3)."""

    exit_code = 3


@dataclass
class Prepared:
    """How to run one harness run: the shell command, environment additions, and where the
    machine-readable output appears (None: the command's standard output)."""

    command: str
    env: dict[str, str] = field(default_factory=dict)
    output: Path | None = None


class Harness:
    """A benchmark harness. Subclasses set :attr:`kind`, :attr:`primary` and the two methods."""

    #: The name given to ``--harness``.
    kind = ""
    #: The metric a gate decides on when none is named.
    primary = ""
    #: The metrics a gate may decide on when none is named, in order of preference, for a
    #: harness whose benchmarks report different ones (JMH: one per mode); empty: ``primary``.
    defaults: tuple[str, ...] = ()
    #: How to write a command :meth:`narrow` can narrow, for the gate's line when it cannot
    #: ("" when this harness never can): it ends "to narrow, {narrow_hint}".
    narrow_hint = ""

    def default_metric(self, reported: Iterable[str]) -> str:
        """The metric a gate decides a benchmark on when none is named: the first of
        :attr:`defaults` among ``reported`` (the metrics the benchmark's first run reported),
        else :attr:`primary` (which the gate then says the benchmark does not report)."""
        have = set(reported)
        return next((m for m in self.defaults if m in have), self.primary)

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """The command (a shell command line) made to write its results where
        :meth:`parse` reads them; ``workdir`` is an empty directory of this run's own.
        Raises UserError, before anything runs, for a command this harness cannot read."""
        raise NotImplementedError

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Parse one run's output (after the command exited 0) into an
        :class:`~benchlab.store.formats.common.ImportedSession`; ``source`` names the run in
        messages. Raises :class:`HarnessFailed` when it holds no benchmark."""
        raise NotImplementedError

    def narrow(self, command: str, names: list[str]) -> str | None:
        """The command made to run only the benchmarks ``names`` (as this harness reports
        them) and maybe a few more, or None when the harness offers no way to choose (then
        every run runs them all). A gate that has decided some benchmarks of a suite gives
        its time to the others this way."""
        return None


def register(harness: Harness) -> Harness:
    """Add ``harness`` to :data:`HARNESSES` under its kind."""
    HARNESSES[harness.kind] = harness
    return harness


def harness_kinds() -> tuple[str, ...]:
    """Every harness kind: those of :data:`HARNESS_MODULES`, then any registered otherwise."""
    return tuple(dict.fromkeys([*HARNESS_MODULES, *HARNESSES]))


def get_harness(kind: str) -> Harness:
    """The harness registered as ``kind``; UserError naming the known kinds otherwise."""
    if kind not in HARNESSES:
        module = HARNESS_MODULES.get(kind)
        if module is None:
            raise UserError(f"unknown harness {kind!r}; choose one of "
                            f"{', '.join(harness_kinds())}")
        importlib.import_module(module)
    return HARNESSES[kind]


def refuse_option(command: str, options: tuple[str, ...], kind: str) -> None:
    """UserError when ``command`` already sets one of ``options``, which the harness sets."""
    for option in options:
        if option in command:
            raise UserError(f"--harness {kind} sets {option} itself; drop it from the command")


def read_output(kind: str, source: str, read: Callable[[], Any], *,
                expected: Path | None = None, missing: str = "") -> Any:
    """``read()`` of a harness's fresh output, its errors as a failed run (exit 3), not bad
    input: a parse error, or (with ``expected``) the file the run should have written absent,
    said with ``missing``, why a run that exited 0 can have written none."""
    if expected is not None and not expected.exists():
        raise HarnessFailed(f"{source}: {missing}")
    try:
        return read()
    except UserError as exc:
        raise HarnessFailed(f"{source}: the {kind} harness's output could not be read: "
                            f"{exc}") from None


#: One run's readings: benchmark -> metric -> (the values the run reported, unit).
Readings = dict[str, dict[str, tuple[list[float], str]]]


def parse_run_output(kind: str, stdout: str, stderr: str = "",
                     prepared: Prepared | None = None, source: str = "") -> Readings:
    """What one run of a ``kind`` harness reported, for a gate that ran the command itself.

    Go reads ``stdout``; the harnesses that write a file or a directory (gbench,
    pytest-benchmark, criterion) read it from ``prepared`` (the :meth:`Harness.prepare` of the
    command the gate ran, with its ``env``). Several values of one metric in one run
    (repetitions, ``-count``, criterion's samples) are all returned: a gate takes their median.
    Raises :class:`HarnessFailed` (exit 3) when the output holds no benchmark.
    """
    from benchlab.store.formats.reported import reported_of

    harness = get_harness(kind)
    if prepared is None:
        prepared = Prepared(command="")
    if prepared.output is None and kind != "go":
        raise ValueError(f"--harness {kind} writes a file: pass the Prepared of its command")
    reported = reported_of(harness.parse(prepared, stdout, source or f"{kind} run"))
    return {bench: {metric: (values, reported.units.get(metric, ""))
                    for metric, values in metrics.items()}
            for bench, metrics in reported.benchmarks.items()}
