"""What an ``ab`` job measures and how: its benchmarks (:class:`AbBenchmark`), the options of
measuring (:class:`AbOptions`), and the session's plan (:func:`build_plan`): ``NAME@base`` and
``NAME@head`` for every benchmark, with the metrics the programs report."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Sequence

from benchlab.ci.gate import DEFAULT_ALPHA, default_threshold
from benchlab.ci.reported import ReportedMetric
from benchlab.ci.revisions import Revision
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.errors import UserError


@dataclass
class AbBenchmark:
    """One benchmark of an A/B job: a command with ``{root}``, its thresholds (fractions) by
    metric, the metrics it is gated on (``wall`` always measured) and, among them, those the
    program reports itself (:class:`~benchlab.ci.reported.ReportedMetric`)."""

    name: str
    command: str
    thresholds: dict[str, float] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=lambda: ["wall"])
    reported: list[ReportedMetric] = field(default_factory=list)

    def threshold(self, metric: str) -> float:
        """The threshold of ``metric`` (the benchmark's own, else the default)."""
        return self.thresholds.get(metric, default_threshold(metric))

    def reported_metric(self, metric: str) -> ReportedMetric | None:
        """The reported metric named ``metric`` (None: one benchlab measures)."""
        return next((m for m in self.reported if m.name == metric), None)

    @property
    def paired_metrics(self) -> list[str]:
        """The metrics decided on pairs of runs: all but instruction counts."""
        return [m for m in self.metrics if m != "instructions"]

    def command_for(self, revision: Revision) -> str:
        """The command with ``{root}`` replaced by the revision's tree (quoted)."""
        return self.command.replace("{root}", shlex.quote(revision.root))


#: ``--alpha-scope``: alpha bounds each benchmark's false regressions (the default), or the
#: whole job's (each of its k decisions gets alpha / k).
ALPHA_PER_BENCHMARK, ALPHA_PER_SUITE = "benchmark", "suite"
ALPHA_SCOPES = (ALPHA_PER_BENCHMARK, ALPHA_PER_SUITE)


def check_alpha_scope(value: object, where: str) -> str:
    """``value`` when it is an alpha scope (:data:`ALPHA_SCOPES`); one-line UserError naming
    ``where`` otherwise."""
    if value not in ALPHA_SCOPES:
        raise UserError(f"{where} must be \"benchmark\" (alpha per benchmark) or \"suite\" "
                        f"(alpha over the whole job), got {value!r}")
    return str(value)


@dataclass
class AbOptions:
    """How each benchmark is measured: warmups per revision, a budget (s) and pair limits,
    looks every ``look_every`` pairs, the error level and what it bounds (each benchmark, or
    the whole job), instruction counting, the order seed, a timeout per run (s)."""

    warmup: int = 2
    max_time_s: float = 60.0
    min_pairs: int = 20
    max_pairs: int = 100_000
    look_every: int = 10
    alpha: float = DEFAULT_ALPHA
    count: str | None = None
    count_runs: int = 3
    seed: int = 0
    timeout_s: float | None = None
    #: the shell that runs each command (a command line, as ``run -S``); None: no shell (-N)
    shell: str | None = "sh"
    #: what ``alpha`` bounds: ``benchmark`` (each benchmark's decisions share it) or ``suite``
    #: (the job's k benchmark x metric decisions share it: alpha / k each, Bonferroni)
    alpha_scope: str = ALPHA_PER_BENCHMARK
    #: k, the job's benchmark x metric decisions, once its benchmarks are known (None: not yet)
    decisions: int | None = None

    def spend_over(self, decisions: int) -> None:
        """Count the job's ``decisions`` (benchmark x metric), known once its benchmarks are:
        at suite scope each then gets ``alpha / decisions``."""
        self.decisions = max(int(decisions), 1)

    def alpha_each(self, metrics: int = 1) -> float:
        """The two-sided error one decision is held to over all its looks (a false regression:
        half of it): at suite scope ``alpha / k`` (k: :attr:`decisions`); per benchmark
        ``alpha / metrics``, the benchmark's ``metrics`` decisions sharing ``alpha``."""
        if self.alpha_scope == ALPHA_PER_SUITE and self.decisions:
            return self.alpha / self.decisions
        return self.alpha / max(int(metrics), 1)

    def alpha_spending(self) -> dict[str, Any]:
        """How ``alpha`` was spent, for the job's JSON: its value, scope, the job's decisions
        (k; None: not known), at suite scope each decision's alpha (None per benchmark, where
        it is alpha split over the benchmark's metrics), and :meth:`alpha_statement`."""
        suite = self.alpha_scope == ALPHA_PER_SUITE and self.decisions
        return {"alpha": self.alpha, "scope": self.alpha_scope, "decisions": self.decisions,
                "each": self.alpha_each() if suite else None,
                "statement": self.alpha_statement()}

    def alpha_statement(self) -> str:
        """``alpha 0.01 over 200 decisions: 5e-05 each`` at suite scope (decisions known),
        ``alpha 0.01 per benchmark`` otherwise."""
        if self.alpha_scope != ALPHA_PER_SUITE:
            return f"alpha {self.alpha:g} per benchmark"
        if not self.decisions:
            return f"alpha {self.alpha:g} over the whole job (no decision made)"
        return (f"alpha {self.alpha:g} over {self.decisions} decision"
                f"{'s' if self.decisions != 1 else ''}: {self.alpha_each():.3g} each")

    def validate(self) -> None:
        """One-line UserError for a value out of range."""
        if not (isinstance(self.warmup, int) and 0 <= self.warmup <= 1000):
            raise UserError(f"--warmup must be 0..1000 (got {self.warmup!r})")
        if not (isinstance(self.max_time_s, (int, float)) and 0 < self.max_time_s <= 366 * 86400):
            raise UserError(f"--max-time must be a positive time (got {self.max_time_s!r})")
        if not 3 <= self.min_pairs <= self.max_pairs:
            raise UserError(f"--min-pairs ({self.min_pairs}) must be at least 3 and at most "
                            f"--max-pairs ({self.max_pairs})")
        if not 1 <= self.look_every <= 10_000:
            raise UserError(f"--look-every must be 1..10000 (got {self.look_every})")
        if not 0 < self.alpha < 0.5:
            raise UserError(f"--alpha must be in (0, 0.5) (got {self.alpha})")
        check_alpha_scope(self.alpha_scope, "--alpha-scope")
        if self.count not in (None, "instructions"):
            raise UserError(f"--count {self.count!r} is not known; use --count instructions")
        if not 1 <= self.count_runs <= 10:
            raise UserError(f"--count-runs must be 1..10 (got {self.count_runs})")


def effective_shell(commands: Sequence[str], shell: str | None) -> str | None:
    """The shell a job's plan runs its commands with: ``shell``, except that under the default
    ``sh`` a job whose every command is plain words naming a program (no shell syntax, no
    builtin) runs them directly, as ``sh`` would exec them: neither wall times nor instruction
    counts then include the shell, and baselines recorded before stay comparable."""
    if shell != "sh":
        return shell
    import shutil

    from benchlab.measure.shell_syntax import find_shell_syntax

    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            return shell
        if not words or find_shell_syntax(command) or (
                "/" not in words[0] and shutil.which(words[0]) is None):
            return shell
    return None


def check_commands(benchmarks: Sequence[AbBenchmark], shell: str | None) -> None:
    """Before anything is built: without a shell (-N) a command holding shell syntax would run
    with that syntax as literal arguments, so it is refused in one line (exit 2)."""
    if shell is not None:
        return
    from benchlab.measure.shell_syntax import require_no_shell_syntax

    for bench in benchmarks:
        try:
            require_no_shell_syntax(bench.command)
        except UserError as exc:
            raise UserError(f"benchmark {bench.name}: {exc}") from None


def plan_metrics(benchmarks: Sequence[AbBenchmark]) -> list:
    """The MetricSpecs of every reported metric of ``benchmarks`` (a name means one regex)."""
    specs: dict[str, ReportedMetric] = {}
    for bench in benchmarks:
        for m in bench.reported:
            if specs.setdefault(m.name, m) != m:
                raise UserError(f"metric {m.name} has two definitions in this job; give each "
                                f"definition its own name")
    return [m.spec() for m in specs.values()]


def build_plan(benchmarks: Sequence[AbBenchmark], base: Revision, head: Revision,
               options: AbOptions) -> RunPlan:
    """The session's plan: ``NAME@base`` and ``NAME@head`` for every benchmark, in pairs."""
    specs: list[BenchmarkSpec] = []
    for bench in benchmarks:
        for label, rev in (("base", base), ("head", head)):
            specs.append(BenchmarkSpec(name=f"{bench.name}@{label}",
                                       command=bench.command_for(rev),
                                       parameters={"revision": label, "commit": rev.commit}))
    return RunPlan(benchmarks=specs, warmup=options.warmup, min_runs=options.min_pairs,
                   max_runs=options.max_pairs, max_time_s=options.max_time_s,
                   order="interleaved", seed=options.seed, timeout_s=options.timeout_s,
                   metrics=plan_metrics(benchmarks),
                   shell=effective_shell([s.command for s in specs], options.shell),
                   count="instructions" if options.count or any(
                       "instructions" in b.metrics for b in benchmarks) else None)
