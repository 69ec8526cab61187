"""The suite file of ``benchlab ab`` / ``bisect`` / ``gate``: benchmarks, thresholds, metrics.

TOML in the study's style (``[study]`` becomes ``[gate]``, ``[[workload]]`` may be spelled
``[[benchmark]]``)::

    [gate]                          # defaults for every benchmark (all optional)
    threshold = "2%"                # time: wall and cpu, and metrics the program reports
    cpu_threshold = "2%"            # CPU time (user + sys), when gated on
    instructions_threshold = "0.5%" # instruction counts
    build_timeout = "10min"         # a build running longer is killed (exit 3)
    alpha_scope = "suite"           # --alpha over the whole job: alpha / k per decision

    [[benchmark]]
    name = "sort"
    command = "{root}/sort 100000"  # {root}: the revision's tree
    threshold = "1%"                # this benchmark's own (overrides [gate])
    metrics = ["wall", "instructions"]   # gated on (default ["wall"]); wall always measured
    # a value the program prints, as run --metric takes it (direction from the unit):
    # metrics = ["speed:MB/s=([0-9.]+) MB/s"]
    # better = { speed = "higher" }      # override a metric's direction

A suite of a benchmark harness names it in ``[gate]`` and has one ``[[benchmark]]``, the
harness's command; every benchmark the harness reports is gated, as with ``--harness KIND``::

    [gate]
    harness = "go"                  # go, gbench, criterion or pytest-benchmark
    threshold = "3%"

    [[benchmark]]
    command = "go -C {root} test -run '^$' -bench . -benchtime 100ms ./..."
    metrics = ["ns_per_op"]         # metrics the harness reports (default: its time per op)

A wrong type, an unknown key or a missing command is one line naming the file, the entry and
the fix (exit 2).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlab.ci.ab_plan import AbBenchmark, check_alpha_scope
from benchlab.ci.gate import check_threshold
from benchlab.ci.reported import parse_metrics
from benchlab.errors import UserError

_GATE_KEYS = {"threshold", "cpu_threshold", "instructions_threshold", "build_timeout",
              "harness", "alpha_scope"}
_HARNESS_BENCH_KEYS = {"name", "command", "metrics"}
_BENCH_KEYS = {"name", "command", "threshold", "cpu_threshold", "instructions_threshold",
               "metrics", "better"}


def _metrics(entry: dict[str, Any], where: str) -> tuple[list[str], list]:
    """The entry's metrics (names, reported ones) from ``metrics`` and ``better``."""
    metrics = entry.get("metrics", ["wall"])
    if not isinstance(metrics, list) or not metrics or \
            not all(isinstance(m, str) for m in metrics):
        raise UserError(f"{where}: metrics must be a list of wall, cpu, instructions or "
                        f"NAME[:UNIT]=REGEX strings (got {metrics!r})")
    better = entry.get("better", {})
    if not isinstance(better, dict) or not all(isinstance(v, str) for v in better.values()):
        raise UserError(f"{where}: better must be a table such as better = {{ speed = "
                        f"\"higher\" }} (got {better!r})")
    return parse_metrics(metrics, {k: v for k, v in better.items()}, where=f"{where}: metric")


def _thresholds(table: dict[str, Any], where: str) -> dict[str, float]:
    out = {}
    if "threshold" in table:  # time: wall and cpu alike unless cpu_threshold says otherwise
        out["wall"] = out["cpu"] = check_threshold(table["threshold"], f"{where}: threshold")
    if "cpu_threshold" in table:
        out["cpu"] = check_threshold(table["cpu_threshold"], f"{where}: cpu_threshold")
    if "instructions_threshold" in table:
        out["instructions"] = check_threshold(table["instructions_threshold"],
                                              f"{where}: instructions_threshold")
    return out


def build_timeout_of(path: str | Path) -> float | None:
    """The suite file's ``[gate] build_timeout`` in s (None when not set); one-line UserError
    for a value that is not a duration."""
    from benchlab.units import parse_duration_s

    _, gate = _read(Path(path))
    if "build_timeout" not in gate:
        return None
    return parse_duration_s(gate["build_timeout"], what=f"{path} [gate] build_timeout")


def alpha_scope_of(path: str | Path) -> str | None:
    """The suite file's ``[gate] alpha_scope`` (``benchmark`` or ``suite``; None when not
    set); one-line UserError for another value."""
    _, gate = _read(Path(path))
    if "alpha_scope" not in gate:
        return None
    return check_alpha_scope(gate["alpha_scope"], f"{path} [gate] alpha_scope")


@dataclass
class SuiteHarness:
    """A suite file's harness: its kind, the command that runs it, the metrics gated (empty:
    the harness's time per operation) and the threshold (a fraction; None: the default)."""

    kind: str
    command: str
    metrics: list[str] = field(default_factory=list)
    threshold: float | None = None


def harness_of(path: str | Path) -> SuiteHarness | None:
    """The harness a suite file names in ``[gate] harness`` (None: a suite of commands);
    one-line UserError for a harness suite that is not one harness command."""
    from benchlab.measure.harnesses import get_harness

    path = Path(path)
    data, gate = _read(path)
    if "harness" not in gate:
        return None
    kind = gate["harness"]
    if not isinstance(kind, str):
        raise UserError(f"{path} [gate]: harness must be a string such as \"go\" (got {kind!r})")
    get_harness(kind)
    entries = data.get("benchmark", [])
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict) \
            or "workload" in data:
        raise UserError(f"{path}: a harness suite has one [[benchmark]], the command that runs "
                        f"the harness; give one")
    entry, where = entries[0], f"{path} benchmark 1"
    extra = set(entry) - _HARNESS_BENCH_KEYS
    if extra:
        raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))} in a harness suite; "
                        f"known: {', '.join(sorted(_HARNESS_BENCH_KEYS))}")
    command, metrics = entry.get("command"), entry.get("metrics", [])
    if not isinstance(command, str) or not command.strip():
        raise UserError(f"{where}: command must be a non-empty string (got {command!r}); write "
                        f"command = \"...\"")
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise UserError(f"{where}: metrics must be a list of the harness's metric names (got "
                        f"{metrics!r})")
    threshold = _thresholds(gate, f"{path} [gate]").get("wall")
    return SuiteHarness(kind, command, [m for m in metrics if m != "wall"], threshold)


def load_ab_suite(path: str | Path) -> list[AbBenchmark]:
    """Parse and type-check a suite file (see the module docstring); one-line UserError."""
    path = Path(path)
    data, gate = _read(path)
    if "harness" in gate:
        raise UserError(f"{path} runs a harness ([gate] harness = {gate['harness']!r}): ab and "
                        f"gate run it; other commands take a suite of commands")
    build_timeout_of(path)  # checked with the rest: bad input before anything is built
    alpha_scope_of(path)
    defaults = _thresholds(gate, f"{path} [gate]")
    return _entries(path, data, defaults)


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The suite file's TOML and its checked ``[gate]`` table."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"suite file {path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read suite file {path} ({exc}); check the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"suite file {path} is not valid TOML ({exc}); fix the syntax") from None
    unknown = set(data) - {"gate", "benchmark", "workload"}
    if unknown:
        raise UserError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; a suite has "
                        f"[gate] and [[benchmark]] entries")
    gate = data.get("gate", {})
    if not isinstance(gate, dict):
        raise UserError(f"{path}: [gate] must be a table; write [gate] then key = value lines")
    if set(gate) - _GATE_KEYS:
        raise UserError(f"{path}: [gate] has unknown key(s) "
                        f"{', '.join(sorted(set(gate) - _GATE_KEYS))}; known: "
                        f"{', '.join(sorted(_GATE_KEYS))}")
    return data, gate


def _entries(path: Path, data: dict[str, Any], defaults: dict[str, float]
             ) -> list[AbBenchmark]:
    """The suite's benchmarks, checked."""
    entries = data.get("benchmark", []) + data.get("workload", []) \
        if isinstance(data.get("benchmark", []), list) and \
        isinstance(data.get("workload", []), list) else None
    if entries is None:
        raise UserError(f"{path}: benchmarks are [[benchmark]] entries (an array of tables)")
    if not entries:
        raise UserError(f"{path}: no [[benchmark]] entry; add one with a name and a command")
    out: list[AbBenchmark] = []
    for i, entry in enumerate(entries, 1):
        where = f"{path} benchmark {i}"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: must be a table with name and command")
        extra = set(entry) - _BENCH_KEYS
        if extra:
            raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))}; known: "
                            f"{', '.join(sorted(_BENCH_KEYS))}")
        for key in ("name", "command"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise UserError(f"{where}: {key} must be a non-empty string (got "
                                f"{entry.get(key)!r}); write {key} = \"...\"")
        metrics, reported = _metrics(entry, where)
        thresholds = {**defaults, **_thresholds(entry, where)}
        for m in reported:  # the time threshold is a reported metric's too
            if "wall" in thresholds:
                thresholds.setdefault(m.name, thresholds["wall"])
        out.append(AbBenchmark(name=entry["name"], command=entry["command"],
                               thresholds=thresholds, metrics=metrics, reported=reported))
    return out
