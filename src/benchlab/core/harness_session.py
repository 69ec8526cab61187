"""``run --harness KIND``: a session whose benchmarks are the ones a harness reports.

The harness's command runs ``runs`` times (:func:`benchlab.measure.harnesses.runner.run_harness`);
every benchmark any run reports becomes a benchmark of the session (in order of first
appearance), every metric a declared metric with the harness's unit, and each result the harness
printed for a benchmark in one run becomes one run of that benchmark (status ``ok``; ``go test
-count 3`` gives three per harness run, criterion's samples are the samples of one), so ``show``,
``compare``, ``report`` and ``history`` read the session as they read any other. Each harness
run is stored when it ends: an interrupted session keeps the runs that finished.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from benchlab.store.db import SessionRef, Store
from benchlab.store.writer import SessionWriter


@dataclass
class HarnessSessionResult:
    """A finished ``run --harness`` session: its reference and what it holds."""

    session: SessionRef
    benchmarks: list[str]
    harness_runs: int


class HarnessRunWriter:
    """Adds benchmarks and metrics to a session as harness runs first report them, and each
    harness run's results as runs (``run --harness`` and ``ab --harness`` store through it)."""

    def __init__(self, writer: SessionWriter, command: str) -> None:
        self.writer = writer
        self.command = command
        self.bench_ids: dict[str, int] = {}
        self.units: dict[str, str] = {}
        self.next_seq = 0

    def add(self, imported: Any, harness_run: int, wall_ns: int, *, suffix: str = "",
            warmup: bool = False) -> None:
        """Store one harness run's parsed output (one transaction); each benchmark's name gets
        ``suffix`` (``@base``, ``@head`` in an A/B session)."""
        from benchlab.errors import UserError

        store = self.writer.store
        with store.transaction():
            for metric in imported.metrics:
                known = self.units.get(metric.name)
                if known is None:
                    self.writer.add_metric(metric.name, unit=metric.unit,
                                           origin=f"harness:{imported.metadata['format']}")
                    self.units[metric.name] = metric.unit
                elif known != metric.unit:
                    raise UserError(f"harness run {harness_run + 1} reports {metric.name} in "
                                    f"{metric.unit!r}, an earlier run in {known!r}; keep one "
                                    f"unit per metric")
            for bench in imported.benchmarks:
                name = bench.name + suffix
                if name not in self.bench_ids:
                    self.bench_ids[name] = self.writer.add_benchmark(name, command=self.command)
                for run in bench.runs:
                    extra = {**run.fields.get("extra", {}), "harness_run": harness_run,
                             "harness_wall_ns": wall_ns}
                    fields = {**run.fields, "extra": extra}
                    if fields.get("status") == "imported":
                        fields["status"] = "ok"
                    self.writer.add_run(self.bench_ids[name], seq=self.next_seq,
                                        iteration=harness_run, fields=fields, warmup=warmup,
                                        samples=run.samples)
                    self.next_seq += 1


def run_harness_session(store: Store, kind: str, command: str, *, runs: int = 1,
                        name: str | None = None, cwd: str | None = None,
                        timeout_s: float | None = None, argv: Sequence[str] | None = None,
                        on_run: Callable[[int, Any], None] | None = None,
                        on_start: Callable[[SessionRef], None] | None = None
                        ) -> HarnessSessionResult:
    """Run a harness's ``command`` ``runs`` times and store everything it reports.

    Parameters
    ----------
    store : Store
        Open, writable store.
    kind : str
        The harness (``go``, ``gbench``, ``criterion``, ``pytest-benchmark``).
    command : str
        The harness's command line (run with ``/bin/sh -c``).
    runs : int
        Harness runs, one after the other.
    on_run : callable, optional
        ``on_run(index, harness_run)`` after each harness run is stored.
    on_start : callable, optional
        ``on_start(session_ref)`` once the session exists (a gate prints its uid).

    Raises
    ------
    UserError
        The command cannot be read by this harness (nothing is created; exit 2).
    HarnessFailed
        A harness run failed (the session is stored as failed with the runs before it; exit 3).
    SessionInterrupted
        Ctrl-C or SIGTERM, once the session is marked interrupted (the runs before it stay).
    """
    from benchlab.core.executor import ending_session
    from benchlab.core.session import interruptible
    from benchlab.environment import collect_environment, load_average
    from benchlab.measure.harnesses import get_harness
    from benchlab.measure.harnesses.runner import run_harness

    get_harness(kind).prepare(command, _probe_dir())  # a bad command: before anything runs
    environment = collect_environment(argv=list(argv) if argv else None, cwd=cwd or os.getcwd(),
                                      env_key=store.env_key())
    protocol = {"harness": kind, "command": command, "runs": runs, "cwd": cwd or os.getcwd(),
                "timeout_s": timeout_s}
    with store.transaction():
        writer = SessionWriter.create(store, "run", name=name, command_line=argv,
                                      protocol=protocol, environment=environment,
                                      load_before=list(load_average()),
                                      metadata={"harness": kind})
    if on_start is not None:
        on_start(writer.ref)
    sink = HarnessRunWriter(writer, command)
    with interruptible(), ending_session(writer):
        for index in range(runs):
            result = run_harness(kind, command, cwd=cwd, timeout_s=timeout_s,
                                 label=f"run {index + 1} of {runs}")
            sink.add(result.imported, index, result.wall_ns)
            if on_run is not None:
                on_run(index, result)
        writer.finish("done", load_after=list(load_average()))
    return HarnessSessionResult(session=writer.ref, benchmarks=list(sink.bench_ids),
                                harness_runs=runs)


def _probe_dir():
    """A directory path for checking a command (``prepare`` only names files in it)."""
    import tempfile
    from pathlib import Path

    return Path(tempfile.gettempdir()) / "benchlab-harness-check"
