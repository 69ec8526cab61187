"""Stability studies (seed 000): a matrix of workloads × isolation × workers × affinity × load.

A suite (TOML) names workloads and the levels of each factor. Every combination of factor
levels is a **cell**; a cell runs as an ordinary run session (all workloads interleaved, each
worker running its own stream of runs, seed 000's homogeneous parallel setup) under that cell's
control options. Cells run in a seeded random order so drift does not line up with a factor.
A study session (kind ``study``) records the suite and which run session belongs to which cell,
so an interrupted study resumes: complete cells are kept, an interrupted cell resumes, cells not
started are started.

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
"""

from __future__ import annotations

import itertools
import shlex
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchlab.control.execution import ControlOptions
from benchlab.errors import UserError
from benchlab.measure.protocol import BenchmarkSpec, MetricSpec, Protocol
from benchlab.measure.session import (Observer, SessionInterrupted, resume_session, run_protocol,
                                      start_session)
from benchlab.store.db import SessionRef, Store

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


def load_suite(path: str | None) -> Suite:
    """Parse a suite file (None: the built-in small suite). One-line UserErrors on bad input."""
    if path is None:
        text, source = BUILTIN_SUITE, "builtin"
    else:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise UserError(f"cannot read suite {path}: {exc.strerror}; check the path") from None
        source = str(Path(path).resolve())
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"suite {path} is not valid TOML ({exc}); fix the file") from None
    head = data.get("study", {})
    workloads_raw = data.get("workload", [])
    if not workloads_raw:
        raise UserError(f"suite {path or 'builtin'} has no [[workload]]; add at least one")
    from benchlab.workloads import workload_command, workload_names

    workloads = []
    for w in workloads_raw:
        name = w.get("name")
        if not name:
            raise UserError("every [[workload]] needs a name")
        if "builtin" in w:
            if w["builtin"] not in workload_names():
                raise UserError(f"workload {name}: no bundled workload {w['builtin']!r}; "
                                f"choose one of {', '.join(workload_names())}")
            argv = workload_command(w["builtin"], *[str(a) for a in w.get("args", [])])
            workloads.append(Workload(name, shlex.join(argv), True))
        elif "command" in w:
            workloads.append(Workload(name, str(w["command"]), False))
        else:
            raise UserError(f"workload {name}: give builtin = NAME or command = '...'")
    levels = {k: list(v) for k, v in DEFAULT_LEVELS.items()}
    for key, values in data.get("matrix", {}).items():
        if key not in FACTORS:
            raise UserError(f"suite matrix factor {key!r} is unknown; use {', '.join(FACTORS)}")
        if not isinstance(values, list) or not values:
            raise UserError(f"suite matrix {key} must be a non-empty list of levels")
        levels[key] = values
    runs = int(head.get("runs", 10))
    if runs < 2:
        raise UserError("study runs must be at least 2 per workload and worker")
    return Suite(name=str(head.get("name", Path(path).stem if path else "builtin")), runs=runs,
                 warmup=int(head.get("warmup", 1)), seed=int(head.get("seed", 0)),
                 workloads=workloads, levels=levels, perf_events=head.get("perf_events"),
                 source=source)


def cell_protocol(suite: Suite, cell: dict[str, Any], seed: int) -> Protocol:
    """The run protocol of one cell."""
    quota = cell.get("cpu_quota_us") or None
    control = ControlOptions(
        affinity=str(cell["affinity"]), workers=int(cell["workers"]),
        isolation=str(cell["isolation"]), cpu_quota_us=quota,
        load=None if cell["load"] in (None, "none") else str(cell["load"]),
        perf_events=suite.perf_events)
    any_self = any(w.self_timing for w in suite.workloads)
    return Protocol(
        benchmarks=[BenchmarkSpec(name=w.name, command=w.command) for w in suite.workloads],
        runs=suite.runs, warmup=suite.warmup, min_runs=1, seed=seed,
        metrics=list(SELF_METRICS) if any_self else [], control=control.to_dict())


def run_study(store: Store, suite: Suite, *, argv: list[str] | None = None,
              observer: Observer | None = None, resume: str | None = None) -> SessionRef:
    """Run (or resume) every cell of a study; return the study session.

    Raises :class:`SessionInterrupted` (for the study session) on Ctrl-C after marking it
    interrupted; completed cells stay stored.
    """
    if resume:
        sess = store.get_session(resume)
        if sess["kind"] != "study":
            raise UserError(f"session {sess['uid']} is not a study; pass a study session")
        suite = Suite.from_dict(sess["protocol"])
        study = SessionRef(sess["id"], sess["uid"])
        meta = sess.get("metadata") or {}
        store.update_session(study.id, status="running", finished_utc=None)
    else:
        study = store.create_session("study", name=suite.name, command_line=argv,
                                     protocol=suite.to_dict(), source=suite.source)
        meta = {"cells": {}}
    cells = suite.cells()
    order = np.random.default_rng(suite.seed).permutation(len(cells))
    meta.setdefault("cells", {})
    meta["order"] = [cell_label(cells[i]) for i in order]
    store.update_session(study.id, metadata=meta)
    try:
        for k, idx in enumerate(order):
            cell = cells[int(idx)]
            label = cell_label(cell)
            known = meta["cells"].get(label)
            if known:
                status = store.get_session(known["session"])["status"]
                if status == "complete":
                    continue
                resume_session(store, known["session"], observer=observer)
                continue
            protocol = cell_protocol(suite, cell, seed=suite.seed * 1000 + k)
            ref = start_session(store, protocol, argv=argv, name=f"{suite.name}/{label}")
            meta["cells"][label] = {"session": ref.uid, "cell": cell}
            store.update_session(study.id, metadata=meta)
            run_protocol(store, ref, protocol, observer=observer)
    except SessionInterrupted:
        store.finish_session(study.id, "interrupted")
        raise SessionInterrupted(study, 0) from None
    except BaseException:
        store.finish_session(study.id, "failed")
        raise
    store.finish_session(study.id, "complete")
    return study
