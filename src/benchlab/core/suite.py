"""Study suites: the TOML a study runs, its cells, and each cell's run plan.

A suite names workloads and the levels of each factor of the matrix; every combination of
factor levels is a **cell** (:meth:`Suite.cells`), run as an ordinary run session with the
plan :func:`cell_protocol` gives. :func:`load_suite` parses and type-checks a file in one-line
errors; :func:`check_suite` validates every cell's plan before a study session exists.

Suite format::

    [study]
    name = "small"
    runs = 8            # measured runs per workload, per worker, per cell
    warmup = 1
    seed = 1

    [[workload]]
    name = "exp_float"
    builtin = "exp_float"      # a bundled self-timing workload (its own timing is read too)
    args = ["400000"]

    [[workload]]
    name = "sleepy"
    command = "sleep 0.01"     # or any command

    [matrix]                   # each a list of levels; omitted factors have one level
    isolation = ["bare", "cgroup"]
    workers = [1, 2]
    affinity = ["none", "cores-rr:0,1"]
    load = ["none"]
    cpu_quota_us = [0]         # 0 = no quota

``count = "instructions"`` under ``[study]`` adds counted runs (valgrind, as ``run --count
instructions``) to every cell: the study report then grades cells by instruction counts too,
which are exact where times are noise.
"""

from __future__ import annotations

import itertools
import shlex
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchlab.core.plan import BenchmarkSpec, MetricSpec, Placement, RunPlan
from benchlab.errors import UserError

FACTORS = ("isolation", "workers", "affinity", "load", "cpu_quota_us")
DEFAULT_LEVELS: dict[str, list[Any]] = {"isolation": ["bare"], "workers": [1],
                                        "affinity": ["none"], "load": ["none"],
                                        "cpu_quota_us": [0]}

#: Program-reported timings of the bundled workloads (BENCHLAB_SELF line).
SELF_METRICS = [MetricSpec("self_wall", r"BENCHLAB_SELF wall_ns=(\d+)", "ns"),
                MetricSpec("self_cpu", r"BENCHLAB_SELF .*?\bcpu_ns=(\d+)", "ns")]

BUILTIN_SUITE = """
[study]
name = "builtin-small"
runs = 6
warmup = 1
seed = 2026

[[workload]]
name = "exp_float"
builtin = "exp_float"
args = ["300000"]

[[workload]]
name = "bsearch"
builtin = "bsearch"
args = ["40000", "1048576"]

[matrix]
isolation = ["bare", "cgroup"]
workers = [1, 2]
affinity = ["none", "cores-rr:0,1"]
load = ["none"]
"""

#: The isolation study's suite; its ``isolation`` levels are filled by :func:`isolation_suite`.
ISOLATION_SUITE = """
[study]
name = "isolation"
runs = {runs}
warmup = 1
seed = 2026

[[workload]]
name = "exp_float"            # CPU-bound
builtin = "exp_float"
args = ["{exp_count}"]

[[workload]]
name = "thp_walk"             # memory-bound: dependent loads over {walk_mib} MiB, 4 KiB pages
builtin = "thp_walk"
args = ["nohuge", "{walk_mib}", "{walk_steps}"]

[matrix]
isolation = [{levels}]
workers = [1, 2]
"""


def isolation_levels_here() -> tuple[list[str], list[str]]:
    """The isolation suite's levels on this machine, and the ones left out with the reason:
    bare, cgroup, bwrap, podman (a fresh container per run) and podman-exec (one container per
    worker) on benchlab's local busybox image (built on first use), and isolate, where each is
    installed."""
    import shutil

    levels, missing = ["bare", "cgroup"], []
    if shutil.which("bwrap"):
        levels.append("bwrap")
    else:
        missing.append("bwrap (apt-get install bubblewrap)")
    if shutil.which("podman") and shutil.which("busybox"):
        from benchlab.control.containers import ensure_busybox_image

        image = ensure_busybox_image("podman")
        levels += [f"podman:{image}", f"podman-exec:{image}"]
    else:
        missing.append("podman (apt-get install podman runc busybox-static)")
    if shutil.which("isolate"):
        levels.append("isolate")
    else:
        missing.append("isolate (not installed: not packaged in Debian)")
    return levels, missing


def isolation_suite(*, runs: int = 8, exp_count: int = 300000, walk_mib: int = 64,
                    walk_steps: int = 300000, levels: list[str] | None = None) -> str:
    """The TOML of the built-in ``isolation`` suite (``benchlab study builtin:isolation``):
    bare, cgroup, bwrap, podman, podman-exec (and isolate where present) × 1 and 2 workers, on a CPU-bound
    (exp_float) and a memory-bound (thp_walk without huge pages) bundled workload. Sizes are
    parameters so a bounded run (bench/isolation_study.py --quick) uses the same suite."""
    if levels is None:
        levels, missing = isolation_levels_here()
    else:
        missing = []
    text = ISOLATION_SUITE.format(runs=runs, exp_count=exp_count, walk_mib=walk_mib,
                                  walk_steps=walk_steps,
                                  levels=", ".join(f'"{lv}"' for lv in levels))
    if missing:
        text = f"# left out here: {'; '.join(missing)}\n" + text
    return text


#: Built-in suites by name: ``benchlab study builtin:NAME``.
BUILTIN_SUITES = ("small", "isolation")


def _builtin_text(name: str) -> str:
    if name == "small":
        return BUILTIN_SUITE
    if name == "isolation":
        return isolation_suite()
    raise UserError(f"no built-in suite {name!r}; choose one of "
                    f"{', '.join('builtin:' + n for n in BUILTIN_SUITES)}")


@dataclass
class Workload:
    """A workload of a suite: a bundled self-timing program or a command."""

    name: str
    command: str
    self_timing: bool


@dataclass
class Suite:
    """A parsed study suite."""

    name: str
    runs: int
    warmup: int
    seed: int
    workloads: list[Workload]
    levels: dict[str, list[Any]]
    perf_events: str | None = None
    source: str = ""
    count: str | None = None

    def cells(self) -> list[dict[str, Any]]:
        """Every combination of factor levels, in declared order."""
        keys = list(FACTORS)
        return [dict(zip(keys, combo)) for combo in
                itertools.product(*[self.levels[k] for k in keys])]

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form stored with the study session."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Suite":
        """Rebuild from :meth:`to_dict`."""
        data = dict(data)
        data["workloads"] = [Workload(**w) for w in data["workloads"]]
        return cls(**data)


def cell_label(cell: dict[str, Any]) -> str:
    """A short, stable name for a cell, e.g. ``iso=bare w=2 aff=none load=none``."""
    parts = [f"iso={cell['isolation']}", f"w={cell['workers']}", f"aff={cell['affinity']}",
             f"load={cell['load']}"]
    if cell.get("cpu_quota_us"):
        parts.append(f"quota={cell['cpu_quota_us']}")
    return " ".join(parts)


def _typed(value: Any, kind: type | tuple[type, ...], what: str, fix: str) -> Any:
    """``value`` when it has the TOML type ``kind`` (bool is not a number here), else UserError."""
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise UserError(f"suite {what} is {value!r}; {fix}")
    if not isinstance(value, kind):
        raise UserError(f"suite {what} is {value!r} ({type(value).__name__}); {fix}")
    return value


def _known_keys(table: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    """Refuse a key the suite format does not have: a typo like ``runz`` would be ignored."""
    for key in table:
        if key not in allowed:
            raise UserError(f"suite {what} {key!r} is unknown; use {', '.join(allowed)}")


_LEVEL_TYPES: dict[str, tuple[type, ...]] = {"isolation": (str,), "workers": (int,),
                                             "affinity": (str,), "load": (str,),
                                             "cpu_quota_us": (int,)}


def load_suite(path: str | None) -> Suite:
    """Parse and type-check a suite file (None: the built-in small suite; ``builtin:NAME``: a
    built-in suite of :data:`BUILTIN_SUITES`); one-line UserErrors.

    Every value is checked here, and every cell's plan by :func:`check_suite`, before any
    session exists.
    """
    text, source, path = _suite_text(path)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise UserError(f"suite {path} is not valid TOML ({exc}); fix the file") from None
    _known_keys(data, ("study", "workload", "matrix"), "top-level key")
    head = _typed(data.get("study", {}), dict, "[study]", "make it a table")
    _known_keys(head, ("name", "runs", "warmup", "seed", "perf_events", "count"), "[study] key")
    workloads_raw = _typed(data.get("workload", []), list, "workload",
                           "write each workload as a [[workload]] table")
    if not workloads_raw:
        raise UserError(f"suite {path or 'builtin'} has no [[workload]]; add at least one")
    static = _needs_static_binaries(data.get("matrix", {}))
    workloads = [_workload(w, static) for w in workloads_raw]
    levels = _matrix_levels(_typed(data.get("matrix", {}), dict, "[matrix]", "make it a table"))
    suite = Suite(workloads=workloads, levels=levels, source=source,
                  **_study_settings(head, path))
    check_suite(suite)
    return suite


def _suite_text(path: str | None) -> tuple[str, str, str | None]:
    """(the suite's TOML text, its source as stored, the path as named in messages)."""
    if path is None:
        return BUILTIN_SUITE, "builtin", None
    if path.startswith("builtin:") and not Path(path).exists():
        return _builtin_text(path[len("builtin:"):]), path, path[len("builtin:"):]
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read suite {path}: {exc.strerror}; check the path") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"suite {path} is not UTF-8 text; save it as UTF-8 TOML") from None
    return text, str(Path(path).resolve()), path


def _needs_static_binaries(matrix_raw: Any) -> bool:
    """A container image has no C library: bundled workloads go in as static binaries (the
    same binary in every cell, so cells compare the same program)."""
    from benchlab.measure.isolation import container_kinds

    isolations = matrix_raw.get("isolation", []) if isinstance(matrix_raw, dict) else []
    return isinstance(isolations, list) and any(
        isinstance(lv, str) and lv.partition(":")[0] in container_kinds() for lv in isolations)


def _workload(w: Any, static: bool) -> Workload:
    """One ``[[workload]]`` table, checked: a bundled workload with its arguments, or a
    command."""
    from benchlab.workloads import workload_command, workload_names

    w = _typed(w, dict, "workload", "write each workload as a [[workload]] table")
    # A key after [[workload]] belongs to it: "matrix = 3" there is a misplaced [matrix].
    _known_keys(w, ("name", "builtin", "args", "command"), "[[workload]] key")
    name = w.get("name")
    if not name:
        raise UserError("every [[workload]] needs a name")
    _typed(name, str, "workload name", "write name = \"text\"")
    if "builtin" in w:
        _typed(w["builtin"], str, f"workload {name} builtin", "write builtin = \"NAME\"")
        if w["builtin"] not in workload_names():
            raise UserError(f"workload {name}: no bundled workload {w['builtin']!r}; "
                            f"choose one of {', '.join(workload_names())}")
        args = _typed(w.get("args", []), list, f"workload {name} args",
                      "write args = [\"...\", ...]")
        for a in args:
            _typed(a, (str, int, float), f"workload {name} argument", "give strings or numbers")
        argv = workload_command(w["builtin"], *[str(a) for a in args], static=static)
        return Workload(name, shlex.join(argv), True)
    if "command" in w:
        _typed(w["command"], str, f"workload {name} command", "write command = \"...\"")
        return Workload(name, w["command"], False)
    raise UserError(f"workload {name}: give builtin = NAME or command = '...'")


def _matrix_levels(matrix: dict) -> dict[str, list]:
    """The levels of each factor: the defaults, with those the ``[matrix]`` table gives."""
    levels = {k: list(v) for k, v in DEFAULT_LEVELS.items()}
    for key, values in matrix.items():
        if key not in FACTORS:
            raise UserError(f"suite matrix factor {key!r} is unknown; use {', '.join(FACTORS)}")
        if not isinstance(values, list) or not values:
            raise UserError(f"suite matrix {key} must be a non-empty list of levels")
        for v in values:
            _typed(v, _LEVEL_TYPES[key], f"matrix {key} level",
                   f"give {'whole numbers' if _LEVEL_TYPES[key] == (int,) else 'strings'}")
        levels[key] = values
    return levels


def _study_settings(head: dict, path: str | None) -> dict[str, Any]:
    """The ``[study]`` table's name, runs, warmup, seed, perf_events and count, checked."""
    runs = _typed(head.get("runs", 10), int, "study runs", "give a whole number")
    if not 2 <= runs <= 1_000_000:
        raise UserError("study runs must be at least 2 (and at most 1000000) per workload and "
                        "worker")
    warmup = _typed(head.get("warmup", 1), int, "study warmup", "give a whole number >= 0")
    seed = _typed(head.get("seed", 0), int, "study seed", "give a whole number >= 0")
    if warmup < 0 or seed < 0:
        raise UserError("study warmup and seed must be 0 or more")
    perf = head.get("perf_events")
    if perf is not None:
        _typed(perf, str, "study perf_events", "write perf_events = \"cycles,instructions\"")
    count = head.get("count")
    if count is not None and count != "instructions":
        raise UserError(f"suite [study] count is {count!r}; the one count is "
                        "count = \"instructions\"")
    name = _typed(head.get("name", Path(path).stem if path else "builtin"), str, "study name",
                  "write name = \"text\"")
    return {"name": name, "runs": runs, "warmup": warmup, "seed": seed, "perf_events": perf,
            "count": count}


def check_suite(suite: Suite) -> None:
    """Validate every cell's plan (values, executables) so a bad suite creates no session."""
    names = [w.name for w in suite.workloads]
    if len(set(names)) != len(names):
        raise UserError("suite workload names repeat; give each [[workload]] its own name")
    for k, cell in enumerate(suite.cells()):
        plan = cell_protocol(suite, cell, seed=k)
        try:
            plan.validate()  # the placement's isolation and load text included
        except UserError as exc:
            raise UserError(f"suite cell {cell_label(cell)}: {exc}") from None
    from benchlab.core.placement import prepare_execution
    from benchlab.errors import NotAvailable

    seen: set[tuple] = set()
    for k, cell in enumerate(suite.cells()):
        # every cell's placement on this machine: a missing tool, image or refusing runtime,
        # and numa affinity or perf events the level cannot take, is one line before the
        # study exists (the checks are cached for the cells' own)
        placement = cell_protocol(suite, cell, seed=k).placement
        key = (placement.isolation, placement.affinity, placement.workers)
        if key in seen:
            continue
        seen.add(key)
        try:
            prepare_execution(placement, session_label="check")
        except (UserError, NotAvailable) as exc:
            raise UserError(f"suite cell {cell_label(cell)}: {exc}") from None


def cell_protocol(suite: Suite, cell: dict[str, Any], seed: int) -> RunPlan:
    """The run plan of one cell."""
    quota = cell.get("cpu_quota_us") or None
    placement = Placement(
        affinity=str(cell["affinity"]), workers=int(cell["workers"]),
        isolation=str(cell["isolation"]), cpu_quota_us=quota,
        load=None if cell["load"] in (None, "none") else str(cell["load"]),
        perf_events=suite.perf_events)
    any_self = any(w.self_timing for w in suite.workloads)
    return RunPlan(
        benchmarks=[BenchmarkSpec(name=w.name, command=w.command) for w in suite.workloads],
        runs=suite.runs, warmup=suite.warmup, min_runs=1, seed=seed,
        metrics=list(SELF_METRICS) if any_self else [], placement=placement, count=suite.count)
