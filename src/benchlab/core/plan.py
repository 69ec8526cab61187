"""The run plan: what to run, how often, and where — plain data, checked before anything runs.

A :class:`RunPlan` is the one input of the execution core. It holds only strings, numbers,
booleans, lists and dicts (never a live object), so it is stored with its session as JSON (an
interrupted session resumes exactly as planned) and can be shipped to a worker on another
machine. It has three parts:

- ``benchmarks``: name, command (an argv line, or a shell command with ``shell``), parameters, hooks;
- the protocol: run counts (hyperfine's ``runs``/``min_runs``/``max_runs``/``min_time_s``/
  ``max_time_s``), warmups, order and seed, timeout, failure policy, metrics, samples file;
- ``placement``: CPU affinity, cgroup limits, isolation, workers, background load, perf events.

:meth:`RunPlan.validate` checks every value (finite, in range, consistent, executables present)
and raises a one-line :class:`~benchlab.errors.UserError` before any session exists.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shlex
import shutil
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from benchlab.errors import UserError
from benchlab.records import record
from benchlab.store.formats.metric_spec import MetricSpec  # the one metric spec (plain data)

#: Upper bounds that keep a mistyped number from meaning "forever" (a run count of 1e23 would
#: never end; a timeout beyond a year is a typo). Generous: no real benchmark gets near them.
MAX_RUNS = 10_000_000
MAX_SECONDS = 366 * 24 * 3600.0
MAX_MEMORY_BYTES = 1 << 50  # 1 PiB


@record
class BenchmarkSpec:
    """One benchmark: display name, command as typed, parameter values, its own hooks.

    ``prepare`` runs before each of its runs, ``setup`` once before its first run, ``cleanup``
    once after its last, ``conclude`` after each of its runs (hyperfine's ``-C``); each is a
    command run as the plan runs its commands (through its shell, or split into words with
    ``-N``, as hyperfine does), or None.
    """

    name: str
    command: str
    parameters: dict[str, str] = field(default_factory=dict)
    prepare: str | None = None
    setup: str | None = None
    cleanup: str | None = None
    conclude: str | None = None


@record
class Placement:
    """Where and under which limits runs execute (CLI flags of ``benchlab run``).

    CPU quota and period in microseconds, memory limit in bytes, CPU weight 1..10000.
    ``worker_label``/``host`` name the executing worker when runs are sent elsewhere.
    """

    affinity: str = "none"
    smt: str = "apart"
    workers: int = 1
    isolation: str = "bare"
    cpu_quota_us: int | None = None
    cpu_period_us: int | None = None
    cpu_weight: int | None = None
    cpuset: str | None = None
    memory_limit_bytes: int | None = None
    allow_unconstrained: bool = False
    load: str | None = None
    perf_events: str | None = None
    calibration: str | None = None
    worker_label: str | None = None
    host: str | None = None
    pids_max: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (stored in the plan)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Placement":
        """Rebuild from :meth:`to_dict` (unknown keys ignored)."""
        data = data or {}
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def wants_limits(self) -> bool:
        """True when any cgroup limit is requested."""
        return any(v is not None for v in (self.cpu_quota_us, self.cpu_weight, self.cpuset,
                                           self.memory_limit_bytes, self.pids_max))

    def validate(self) -> None:
        """Check numbers and choices (machine-independent); one-line UserError with the fix."""
        _whole("--workers", self.workers, 1, 4096)
        if self.smt not in ("apart", "together"):
            raise UserError(f"--smt must be apart or together (got {self.smt!r})")
        if self.cpu_quota_us is not None:
            _whole("--cpu-quota", self.cpu_quota_us, 1000, 10**12)
        if self.cpu_period_us is not None:
            _whole("--cpu-period", self.cpu_period_us, 1000, 1_000_000)
            if self.cpu_quota_us is None:
                raise UserError("--cpu-period needs --cpu-quota; add --cpu-quota US")
        if self.cpu_weight is not None:
            _whole("--cpu-weight", self.cpu_weight, 1, 10000)
        if self.memory_limit_bytes is not None:
            _whole("--memory-limit", self.memory_limit_bytes, 4096, MAX_MEMORY_BYTES)
        if self.pids_max is not None:
            _whole("--pids-max", self.pids_max, 1, 4_194_304)
        self.parsed()

    def parsed(self) -> tuple[Any, Any]:
        """(``isolation`` as an unchecked ``Isolation``, ``load`` as a ``LoadSpec`` or None): the
        one reading of the text the plan keeps (stored, resumed); UserError when one is invalid."""
        from benchlab.measure.isolation import parse_isolation
        if not self.load:  # a run without --load does not import control.load
            return parse_isolation(self.isolation), None
        from benchlab.control.load import parse_load
        return parse_isolation(self.isolation), parse_load(self.load)


@record
class RunPlan:
    """Everything that defines a run session; JSON round trip via :meth:`to_dict`/:meth:`from_dict`.

    Times are in seconds. ``shell`` is the shell (a command line such as ``sh`` or
    ``bash --norc``) when commands run through one. ``planned_runs`` (by benchmark name) fixes
    each count once estimated from the first run. hyperfine's stream options: ``stdin_path``
    (None: /dev/null), ``stdout`` (``null``, ``pipe``, ``inherit`` or an absolute file path);
    ``count`` (``instructions`` or None) adds counted runs after the timed ones.
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
    ignore_failure: bool | list[int] = False
    """True: keep measuring whatever a run's exit; a list: only those non-zero exit codes
    (hyperfine's ``--ignore-failure=1,2``); False: the first failing run stops the session."""
    shell: str | None = None
    metrics: list[MetricSpec] = field(default_factory=list)
    samples_csv: str | None = None
    cwd: str | None = None
    capture_stdout: bool = False
    placement: Placement = field(default_factory=Placement)
    until_decided: dict[str, Any] | None = None
    planned_runs: dict[str, int] = field(default_factory=dict)
    stdin_path: str | None = None
    stdout: str = "null"
    count: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form stored with the session (JSON-serialisable)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunPlan":
        """Rebuild a plan stored by :meth:`to_dict` (also reads sessions stored before the core,
        whose hooks were per-plan lists and whose placement was called ``control``)."""
        data = dict(data)
        benches = [BenchmarkSpec(**{k: v for k, v in b.items()
                                    if k in BenchmarkSpec.__dataclass_fields__})
                   for b in data.get("benchmarks", [])]
        for hook in ("prepare", "setup", "cleanup"):
            old = data.pop(hook, None)
            if old:
                for i, bench in enumerate(benches):
                    setattr(bench, hook, old[i] if len(old) > 1 else old[0])
        data["benchmarks"] = benches
        data["metrics"] = [MetricSpec(**m) for m in data.get("metrics", [])]
        data["placement"] = Placement.from_dict(data.get("placement") or data.get("control"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    def argv_for(self, index: int) -> list[str]:
        """The argv to execute for benchmark ``index`` (through the shell when ``shell`` is set)."""
        command = self.benchmarks[index].command
        if self.shell:
            return [*_words(self.shell), "-c", command]
        try:
            argv = list(_words(command))
        except ValueError as exc:
            raise UserError(f"cannot parse command {command!r} ({exc}); fix the quoting") from None
        if not argv:
            raise UserError("an empty command was given; pass the command to benchmark")
        return argv

    def tolerates(self, status: str, exit_code: int | None) -> bool:
        """True when a run that ended ``status`` (with ``exit_code``) does not stop the session:
        ``ok`` always; any failure with ``ignore_failure`` True; with a list of codes, a run
        that exited with one of them (a signal, timeout or start error still stops)."""
        if status == "ok" or self.ignore_failure is True:
            return True
        if isinstance(self.ignore_failure, list):
            return status == "failed" and exit_code in self.ignore_failure
        return False

    def validate(self, store: Any = None, own_since: float | None = None) -> None:
        """Check every value before a session exists; raise a one-line UserError with the fix.

        ``store`` (a :class:`benchlab.store.Store`, optional) is where runs will be written: no
        output the plan names may be its database or ``-wal``/``-shm`` file. ``own_since``
        (Unix time, s): when resuming, the session's start; a samples file modified since is
        the session's own (see :func:`benchlab.core.samples.check_samples_paths`).
        """
        if not self.benchmarks:
            raise UserError("no command to benchmark; usage: benchlab run COMMAND [COMMAND ...]")
        self._validate_numbers()
        self._validate_choices()
        self._validate_tools(store)
        self.placement.validate()
        if self.until_decided is not None and (self.placement.workers != 1
                                               or len(self.benchmarks) != 2):
            raise UserError("--until-decided compares exactly two commands in one worker; give "
                            "A and B and drop --workers")
        if self.samples_csv:
            from benchlab.core.samples_file import check_samples_paths

            check_samples_paths(self.samples_csv, self.placement.workers, store, own_since)
        self._validate_commands()

    def _validate_numbers(self) -> None:
        """Counts and durations: --runs, --warmup, --min/max-runs, --min/max-time, --timeout."""
        if self.runs is not None:
            _whole("--runs", self.runs, 1, MAX_RUNS)
        _whole("--warmup", self.warmup, 0, MAX_RUNS)
        _whole("--min-runs", self.min_runs, 1, MAX_RUNS)
        if self.max_runs is not None:
            _whole("--max-runs", self.max_runs, 1, MAX_RUNS)
            if self.max_runs < self.min_runs:
                raise UserError(f"--max-runs ({self.max_runs}) is below --min-runs "
                                f"({self.min_runs}); raise --max-runs or lower --min-runs")
        _seconds("--min-time", self.min_time_s, allow_zero=True)
        if self.max_time_s is not None:
            _seconds("--max-time", self.max_time_s, allow_zero=True)
        if self.timeout_s is not None:
            _seconds("--timeout", self.timeout_s, allow_zero=False)

    def _validate_choices(self) -> None:
        """--ignore-failure codes, --order, --seed and distinct benchmark names."""
        if isinstance(self.ignore_failure, list) and (not self.ignore_failure or not all(
                isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= 255
                for c in self.ignore_failure)):
            raise UserError(f"--ignore-failure codes must be exit codes 1..255 "
                            f"(got {self.ignore_failure!r}); e.g. --ignore-failure=1,2")
        if self.order not in ("interleaved", "sequential"):
            raise UserError(f"--order must be interleaved or sequential (got {self.order!r})")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise UserError(f"--seed must be a whole number >= 0 (got {self.seed!r})")
        names = [b.name for b in self.benchmarks]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise UserError(f"benchmark names repeat ({', '.join(sorted(dup))}); give distinct "
                            f"names with -n/--name, or use {{PARAM}} in the name")

    def _validate_tools(self, store: Any) -> None:
        """The shell, --count's valgrind, the --output file and the --metric patterns."""
        if self.shell is not None:
            _check_executable(shlex.split(self.shell)[0], "--shell", self.cwd, "the shell")
        if self.count not in (None, "instructions"):
            raise UserError(f"--count {self.count!r} is not known; use --count instructions")
        if self.count:
            from benchlab.measure.counts import valgrind_path

            valgrind_path()  # UserError naming the fix when valgrind is not installed
        if self.stdout not in ("null", "pipe", "inherit") and store is not None:
            store.refuse_output_path(self.stdout, "--output")
        for spec in self.metrics:
            _check_metric(spec)

    def _validate_commands(self) -> None:
        """Each command is not empty, its program exists, and its syntax fits its shell."""
        for i, bench in enumerate(self.benchmarks):
            if not (bench.command or "").strip():
                raise UserError(f"command {i + 1} is empty: nothing to measure; give the "
                                f"command (an empty one measures only the shell)")
            _check_executable(self.argv_for(i)[0], f"benchmark {bench.name!r}", self.cwd,
                              "command")
            if self.shell:
                _check_shell_command(bench.command, bench.name, self.cwd)
            else:
                _check_hooks_without_shell(bench)

# -- checks ----------------------------------------------------------------------------------

def _check_hooks_without_shell(bench: BenchmarkSpec) -> None:
    """Without a shell (-N) hooks run split into words, as hyperfine runs them: shell syntax
    in one would become literal arguments, so it is refused in one line, naming the hook."""
    from benchlab.measure.shell_syntax import require_no_shell_syntax

    for kind in ("prepare", "setup", "cleanup", "conclude"):
        hook = getattr(bench, kind)
        if hook:
            try:
                require_no_shell_syntax(hook)
            except UserError as exc:
                raise UserError(f"--{kind}: {exc}") from None


def _whole(option: str, value: Any, low: int, high: int) -> None:
    """A whole number in [low, high]; floats such as 1e23 or nan are refused by name."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{option} must be a whole number (got {value!r})")
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise UserError(f"{option} must be a whole number (got {value!r})")
    if not low <= value <= high:
        raise UserError(f"{option} must be between {low} and {high} (got {value:g}); "
                        f"give a value in that range")


def _seconds(option: str, value: Any, *, allow_zero: bool) -> None:
    """A finite number of seconds, positive (or zero when allowed), at most a year."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{option} must be a finite number of seconds (got {value!r}); "
                        f"give e.g. {option} 10")
    if value < 0 or (value == 0 and not allow_zero):
        raise UserError(f"{option} must be {'0 or more' if allow_zero else 'positive'} seconds "
                        f"(got {value:g})")
    if value > MAX_SECONDS:
        raise UserError(f"{option} {value:g} s is more than a year; give a shorter time")


@functools.lru_cache(maxsize=256)
def _words(text: str) -> tuple[str, ...]:
    """``shlex.split(text)``, remembered: every run asks for its argv again (~30 us each)."""
    return tuple(shlex.split(text))


def _check_metric(spec: MetricSpec) -> None:
    if not spec.name or not isinstance(spec.regex, str):
        raise UserError("a metric needs a name and a regex; write NAME[:UNIT]=REGEX")
    try:
        pattern = re.compile(spec.regex, re.MULTILINE)
    except re.error as exc:
        raise UserError(f"--metric regex {spec.regex!r} is not a valid regular expression "
                        f"({exc.msg}); fix it") from None
    if pattern.groups != 1:
        raise UserError(f"--metric regex {spec.regex!r} has {pattern.groups} groups; it needs "
                        f"exactly one (around the number; write others as (?:...))")


_SHELL_WORDS = frozenset(
    ". : [ alias bg break cd command continue eval exec exit export false fg getopts hash jobs "
    "kill local printf pwd read readonly return set shift test times trap true type ulimit umask "
    "unalias unset wait if then else elif fi for while until do done case esac { } ! function "
    "source".split())


def _check_shell_command(command: str, name: str, cwd: str | None) -> None:
    """A plain command (no shell syntax) run through the shell must name something that
    exists: otherwise every run would fail with the shell's exit code 127."""
    from benchlab.measure.shell_syntax import find_shell_syntax

    if find_shell_syntax(command):
        return  # the shell decides what runs; its exit code tells
    words = shlex.split(command)
    if words and words[0] not in _SHELL_WORDS:
        _check_executable(words[0], f"benchmark {name!r}", cwd, "command")


def _check_executable(exe: str, what: str, cwd: str | None, role: str) -> None:
    if "/" in exe:
        path = Path(exe) if os.path.isabs(exe) else Path(cwd or ".") / exe
        if not path.exists():
            raise UserError(f"{role} {exe!r} does not exist ({what}); check the path")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise UserError(f"{role} {exe!r} is not an executable file ({what}); chmod +x it or "
                            f"run it through an interpreter")
    elif shutil.which(exe) is None:
        raise UserError(f"{role} {exe!r} not found in PATH ({what}); check the spelling, give a "
                        f"path, or run it through a shell for shell syntax")


def parse_memory(text: str | None) -> int | None:
    """``--memory-limit`` value in bytes from e.g. ``512M``, ``2G``, ``1048576``."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    factors = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
    try:
        number = float(t[:-1]) * factors[t[-1]] if t and t[-1] in factors else float(t)
    except ValueError:
        raise UserError(f"--memory-limit {text!r} is not a size; write e.g. 512M or 2G") from None
    if not math.isfinite(number) or number > MAX_MEMORY_BYTES:
        raise UserError(f"--memory-limit {text!r} is not a usable size; write e.g. 512M or 2G")
    if number < 4096:
        raise UserError(f"--memory-limit {text!r} is too small; give at least a few MiB")
    return int(number)
