"""What to run and how often: benchmarks, parameters, run counts and the order of runs.

A :class:`Protocol` is plain data (it is stored with the session as JSON, so an interrupted
session can be resumed exactly as it was planned). :class:`RunPlanner` turns it into the next run
to execute, given what is already stored.

Run counts follow hyperfine: ``runs`` fixes the count; otherwise each benchmark runs at least
``min_runs`` times and for at least ``min_time_s`` seconds (estimated from the first measured
run), at most ``max_runs`` times; ``max_time_s`` caps the wall time of the whole session.

Order: with several benchmarks, the default ``interleaved`` order runs them in rounds, each round
a fresh random permutation (seeded, stored), so slow drift in the machine (thermal, background
daemons, frequency) hits every benchmark alike instead of biasing the one measured last.
``sequential`` runs all of one benchmark, then the next, like hyperfine.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from benchlab.errors import UserError

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class BenchmarkSpec:
    """One benchmark: a display name, the command as typed, and its parameter values."""

    name: str
    command: str
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass
class MetricSpec:
    """A program-reported metric read from the program's output: one regex group per sample."""

    name: str
    regex: str
    unit: str | None = None


@dataclass
class Protocol:
    """Everything that defines a run session; JSON-serialisable via :meth:`to_dict`.

    Times are in seconds. ``prepare``/``setup``/``cleanup`` hold one shell command per benchmark
    (or ``None``); they run through ``/bin/sh`` and are not measured.
    """

    benchmarks: list[BenchmarkSpec]
    runs: int | None = None
    warmup: int = 0
    min_runs: int = 10
    max_runs: int | None = None
    min_time_s: float = 3.0
    max_time_s: float | None = None
    order: str = "interleaved"
    seed: int = 0
    timeout_s: float | None = None
    ignore_failure: bool = False
    shell: str | None = None
    prepare: list[str | None] = field(default_factory=list)
    setup: list[str | None] = field(default_factory=list)
    cleanup: list[str | None] = field(default_factory=list)
    metrics: list[MetricSpec] = field(default_factory=list)
    samples_csv: str | None = None
    cwd: str | None = None
    capture_stdout: bool = False
    control: dict[str, Any] = field(default_factory=dict)
    until_decided: dict[str, Any] | None = None
    planned_runs: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form stored with the session."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Protocol":
        """Rebuild a protocol stored by :meth:`to_dict`."""
        data = dict(data)
        data["benchmarks"] = [BenchmarkSpec(**b) for b in data["benchmarks"]]
        data["metrics"] = [MetricSpec(**m) for m in data.get("metrics", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    def argv_for(self, index: int) -> list[str]:
        """The argv to execute for benchmark ``index`` (through the shell when ``shell`` is set)."""
        command = self.benchmarks[index].command
        if self.shell:
            return [self.shell, "-c", command]
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UserError(f"cannot parse command {command!r} ({exc}); fix the quoting") from None
        if not argv:
            raise UserError("an empty command was given; pass the command to benchmark")
        return argv

    def validate(self) -> None:
        """Check counts and options; raise :class:`UserError` with the fix on bad values."""
        if not self.benchmarks:
            raise UserError("no command to benchmark; usage: benchlab run COMMAND [COMMAND ...]")
        if self.runs is not None and self.runs < 1:
            raise UserError(f"--runs must be at least 1 (got {self.runs})")
        if self.warmup < 0:
            raise UserError(f"--warmup must be 0 or more (got {self.warmup})")
        if self.min_runs < 1:
            raise UserError(f"--min-runs must be at least 1 (got {self.min_runs})")
        if self.max_runs is not None and self.max_runs < self.min_runs:
            raise UserError(f"--max-runs ({self.max_runs}) is below --min-runs ({self.min_runs}); "
                            f"raise --max-runs or lower --min-runs")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise UserError(f"--timeout must be positive seconds (got {self.timeout_s})")
        if self.order not in ("interleaved", "sequential"):
            raise UserError(f"--order must be interleaved or sequential (got {self.order!r})")
        names = [b.name for b in self.benchmarks]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise UserError(f"benchmark names repeat ({', '.join(sorted(dup))}); give distinct "
                            f"names with -n/--name, or use {{PARAM}} in the name")


# -- parameters ------------------------------------------------------------------------------

def scan_values(name: str, low: str, high: str, step: str | None) -> list[str]:
    """Values of ``--parameter-scan NAME LOW HIGH [--step S]`` as strings, inclusive of HIGH.

    Integers stay integers; decimals keep the step's precision (0.1 steps print as 0.1, 0.2, ...).
    """
    try:
        lo, hi = Decimal(low), Decimal(high)
        st = Decimal(step) if step is not None else Decimal(1)
    except InvalidOperation:
        raise UserError(f"--parameter-scan {name}: LOW, HIGH and --step must be numbers "
                        f"(got {low!r}, {high!r}, {step!r})") from None
    if st <= 0:
        raise UserError(f"--parameter-step-size must be positive (got {step})")
    if hi < lo:
        raise UserError(f"--parameter-scan {name}: HIGH ({high}) is below LOW ({low}); swap them")
    count = int((hi - lo) / st) + 1
    if count > 100_000:
        raise UserError(f"--parameter-scan {name} makes {count} values; use a larger --step")
    return [str(lo + i * st) for i in range(count)]


def expand_benchmarks(commands: list[str], names: list[str],
                      parameters: list[tuple[str, list[str]]]) -> list[BenchmarkSpec]:
    """Cross commands with every combination of parameter values, substituting ``{NAME}``.

    As in hyperfine, names given with ``-n`` pair with commands in order and are substituted too.
    """
    if names and len(names) != len(commands):
        raise UserError(f"{len(names)} names (-n) for {len(commands)} commands; give one name "
                        f"per command or none")
    pnames = [p for p, _ in parameters]
    dup = {p for p in pnames if pnames.count(p) > 1}
    if dup:
        raise UserError(f"parameter {sorted(dup)[0]!r} is defined twice; define each once")
    combos = list(itertools.product(*[vals for _, vals in parameters])) if parameters else [()]
    specs = []
    for i, command in enumerate(commands):
        used = set(_PLACEHOLDER.findall(command))
        unknown = used - set(pnames)
        if unknown and parameters:
            raise UserError(f"command {command!r} uses {{{sorted(unknown)[0]}}} but no such "
                            f"parameter is defined; add --parameter-list or --parameter-scan")
        for combo in combos:
            values = dict(zip(pnames, combo))
            cmd = _substitute(command, values)
            name = _substitute(names[i], values) if names else cmd
            specs.append(BenchmarkSpec(name=name, command=cmd, parameters=values))
    return specs


def _substitute(text: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


# -- planning --------------------------------------------------------------------------------

@dataclass
class PlannedRun:
    """The next run to execute."""

    benchmark: int
    warmup: bool
    iteration: int


class RunPlanner:
    """Decides the next run from the protocol and the runs done so far (resumable).

    ``done_warmups[i]``/``done_runs[i]`` count what benchmark ``i`` already has in the store;
    ``planned_runs`` (by benchmark name) fixes the target once it is known.
    """

    def __init__(self, protocol: Protocol, done_warmups: list[int], done_runs: list[int],
                 elapsed_s: float = 0.0, worker: int = 0):
        self.p = protocol
        self.done_warmups = list(done_warmups)
        self.done_runs = list(done_runs)
        self.elapsed_s = elapsed_s
        n = len(protocol.benchmarks)
        self.first_wall_s: list[float | None] = [None] * n
        # Seeded by what is done so far, so a resumed session continues with fresh rounds.
        self._rng = np.random.default_rng([protocol.seed, worker,
                                           sum(done_runs) + sum(done_warmups)])
        self._queue: list[int] = []

    def target(self, i: int) -> int | None:
        """Number of measured runs benchmark ``i`` will get, or None until it can be estimated."""
        p = self.p
        if p.runs is not None:
            return p.runs
        name = p.benchmarks[i].name
        if name in p.planned_runs:
            return p.planned_runs[name]
        first = self.first_wall_s[i]
        if first is None:
            return None
        want = p.min_runs if first <= 0 else max(p.min_runs, math.ceil(p.min_time_s / first))
        if p.max_runs is not None:
            want = min(want, p.max_runs)
        p.planned_runs[name] = int(want)
        return int(want)

    def record(self, run: PlannedRun, wall_s: float | None) -> None:
        """Account for a finished run (``wall_s`` of an ok measured run seeds the estimate)."""
        if run.warmup:
            self.done_warmups[run.benchmark] += 1
        else:
            self.done_runs[run.benchmark] += 1
            if self.first_wall_s[run.benchmark] is None and wall_s is not None:
                self.first_wall_s[run.benchmark] = wall_s
        self.elapsed_s += wall_s or 0.0

    def remaining(self) -> int | None:
        """Measured runs still to do, or None while a target is unknown."""
        total = 0
        for i in range(len(self.p.benchmarks)):
            t = self.target(i)
            if t is None:
                return None
            total += max(0, t - self.done_runs[i])
        return total

    def total(self) -> int | None:
        """All measured runs of the session, or None while unknown."""
        targets = [self.target(i) for i in range(len(self.p.benchmarks))]
        return None if any(t is None for t in targets) else sum(targets)  # type: ignore[arg-type]

    def next(self) -> PlannedRun | None:
        """The next run, or None when the session is complete (or ``max_time_s`` is spent)."""
        p = self.p
        n = len(p.benchmarks)
        for i in range(n):  # warmups first, in declared order: they only prime caches
            if self.done_warmups[i] < p.warmup:
                return PlannedRun(i, True, self.done_warmups[i])
        if p.max_time_s is not None and self.elapsed_s >= p.max_time_s and \
                all(d >= min(p.min_runs, self.target(i) or p.min_runs)
                    for i, d in enumerate(self.done_runs)):
            return None
        needs = [i for i in range(n) if self._needs(i)]
        if not needs:
            return None
        if p.order == "sequential":
            i = needs[0]
            return PlannedRun(i, False, self.done_runs[i])
        self._queue = [i for i in self._queue if i in needs]
        if not self._queue:
            self._queue = list(self._rng.permutation(needs))
        i = int(self._queue.pop(0))
        return PlannedRun(i, False, self.done_runs[i])

    def _needs(self, i: int) -> bool:
        t = self.target(i)
        return self.done_runs[i] < (t if t is not None else 1)
