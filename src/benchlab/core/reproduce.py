"""Re-measuring a bundle here: what it would run, read without running anything; then its plans,
confined to the reproduction's own scratch directory, run through the execution core.

A bundle comes from someone else: its commands, hooks, shell and C sources are code that runs
on this machine, as this user. So re-measuring is two steps, and the caller puts the user's
consent between them (``benchlab reproduce`` shows :func:`describe` and runs nothing unless
the user confirms or passes ``--trust``):

1. :func:`read_reproduction` parses every bundled run session's plan and checks its shape
   (a plan with ``"benchmarks": "x"`` is one line, not a traceback). It builds nothing, runs
   nothing, and touches no file. :func:`describe` says, as plain data, everything that would
   run: commands, hooks, shell, the programs with their bundled SHA-256, the C sources that
   would be compiled with their SHA-256, and what the bundle asked for that is not done.
2. :func:`prepared_plans` (after consent) rebuilds bundled workloads from the bundle's sources
   and confines each plan: **no path of the bundle reaches the file system**. The working
   directory is a new empty directory in the reproduction's scratch (``benchlab-reproduce-p<pid>-*``,
   swept after a kill -9); the stdout file and the samples file are put there under their base
   names; stdin is /dev/null; the bundle's isolation (``wrap:TEMPLATE`` is code too),
   calibration file, worker and host are dropped, and the isolation is the one the user chose.
   :func:`remeasure` runs them and removes the scratch directory.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

from benchlab.core.plan import RunPlan
from benchlab.core.scratch import make_scratch, remove_scratch
from benchlab.errors import UserError
from benchlab.store.bundle import Bundle, session_documents
from benchlab.store.bundle.archive import EXECUTABLES_MEMBER
from benchlab.store.bundle.plan_shape import HOOKS, plan_problem

_WORKLOAD_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
#: The plan fields that name a file or directory of the machine the bundle was made on.
PATH_FIELDS = ("cwd", "stdout", "samples_csv", "stdin_path")


@dataclass
class ToRun:
    """One bundled run session as it would run here: its document, its plan as bundled (not
    yet rebuilt or confined) and, per benchmark name, its ``provenance/executables.json``
    entry."""

    doc: dict[str, Any]
    plan: RunPlan
    programs: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Reproduction:
    """What re-measuring ``bundle`` would run (read by :func:`read_reproduction`)."""

    bundle: Bundle
    sessions: list[ToRun]


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (64 hex characters) of the file at ``path``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _damaged(bundle: Bundle, uid: Any, what: str) -> UserError:
    return UserError(f"{bundle.path}: the plan of session {uid} is damaged ({what}); make the "
                     f"bundle again with benchlab bundle")


def plan_from_bundle(bundle: Bundle, uid: Any, protocol: Any) -> RunPlan:
    """A bundled protocol as a :class:`RunPlan`, its shape checked first: one-line UserError
    for anything ``RunPlan.from_dict`` would trip on (a string for the benchmark list, a list
    for the placement, a number for a command...)."""
    what = plan_problem(protocol)  # the rule import applies too
    if what is not None:
        raise _damaged(bundle, uid, what)
    try:
        plan = RunPlan.from_dict(protocol)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise _damaged(bundle, uid, " ".join(str(exc).split())[:120]) from None
    if plan.shell is not None and plan.shell.strip() in ("", "none"):
        plan.shell = None  # hyperfine's --shell=none: no shell, as shown before it runs
    return plan


def read_reproduction(bundle: Bundle) -> Reproduction:
    """Every bundled run session with a plan, parsed and checked; nothing built, run or
    written. UserError when the bundle has none (imports and profiles have no plan)."""
    exes = bundle.json(EXECUTABLES_MEMBER) if EXECUTABLES_MEMBER in bundle.members else []
    if not isinstance(exes, list) or not all(isinstance(e, dict) for e in exes):
        raise UserError(f"{bundle.path}: {EXECUTABLES_MEMBER} is not a list of objects; make "
                        f"the bundle again with benchlab bundle")
    sessions = []
    for doc in session_documents(bundle):
        if doc.get("kind") != "run" or doc.get("protocol") is None:
            continue
        uid = doc.get("uid")
        plan = plan_from_bundle(bundle, uid, doc["protocol"])
        programs = {e.get("benchmark"): e for e in exes if e.get("session") == uid
                    and isinstance(e.get("benchmark"), str)}
        sessions.append(ToRun(doc, plan, programs))
    if not sessions:
        raise UserError(f"{bundle.path} holds no run session with a protocol to re-measure "
                        f"(imports and profiles have none); use --analysis-only")
    return Reproduction(bundle, sessions)


def _workload_of(bundle: Bundle, entry: dict[str, Any]) -> tuple[str, str] | None:
    """(workload name, source member) when ``entry`` is a bundled workload built from source."""
    name = entry.get("workload")
    if not isinstance(name, str) or not _WORKLOAD_NAME.fullmatch(name):
        return None  # not a name benchlab gives a workload: never a path to write to
    return name, f"sources/{name}.c"


def _digest_listed(bundle: Bundle, member: str) -> str | None:
    for entry in bundle.manifest.get("members", []):
        if entry.get("name") == member:
            return entry.get("sha256")
    return None


def describe(rep: Reproduction, *, isolation: str = "bare") -> dict[str, Any]:
    """Everything re-measuring would run and change, as plain data (rendered for the user by
    ``benchlab.report.reproduce.disclosure``); reads nothing but the bundle.

    Per session: uid, name, the shell (None: commands split into words), per benchmark its
    command as bundled, its hooks, the program and its bundled SHA-256 (or the workload rebuilt
    here from which source); what of the bundle is not used (``ignored``: path fields, the
    bundle's isolation, CPU quota). ``sources``: the C sources compiled here, with SHA-256.
    ``user``: who runs it (``uid``, and whether that is root).
    """
    bundle = rep.bundle
    sessions = []
    sources: dict[str, str | None] = {}
    for item in rep.sessions:
        plan = item.plan
        benches = []
        for bench in plan.benchmarks:
            entry = item.programs.get(bench.name) or {}
            workload = _workload_of(bundle, entry)
            program: dict[str, Any] = {"name": entry.get("program") or entry.get("argv0"),
                                       "sha256": entry.get("sha256")}
            if workload:
                program["workload"], program["source"] = workload
                sources[workload[1]] = _digest_listed(bundle, workload[1])
            benches.append({"name": bench.name, "command": bench.command,
                            "hooks": {h: getattr(bench, h) for h in HOOKS if getattr(bench, h)},
                            "program": program})
        ignored = {f: getattr(plan, f) for f in PATH_FIELDS
                   if getattr(plan, f) not in (None, "", "null", "pipe", "inherit")}
        if plan.placement.isolation not in (None, "bare", isolation):
            ignored["isolation"] = plan.placement.isolation
        if plan.placement.calibration:
            ignored["calibration"] = plan.placement.calibration
        has_hooks = any(b["hooks"] for b in benches)
        sessions.append({"uid": item.doc.get("uid"), "name": item.doc.get("name"),
                         "shell": plan.shell, "benchmarks": benches, "ignored": ignored,
                         "isolation": isolation, "count": plan.count,
                         "metrics_from_stdout": bool(plan.metrics),
                         # the core runs hooks through the spawn path, not the isolation level
                         "hooks_outside_isolation": has_hooks and isolation != "bare"})
    return {"bundle": bundle.path, "bundle_sha256": bundle.sha256, "sessions": sessions,
            "sources": sources, "user": {"uid": os.geteuid(), "root": os.geteuid() == 0}}


def _rebuild(bundle: Bundle, workload: str, member: str) -> str:
    """Build a bundled workload from the bundle's source; the new executable's path."""
    from benchlab.measure import build
    from benchlab.workloads import CFLAGS, LDLIBS

    if member not in bundle.members:
        raise UserError(f"{bundle.path} lacks {member}, the source of workload {workload}; "
                        f"make the bundle again with benchlab bundle")
    return str(build.build_source_text(workload, bundle.text(member), flags=CFLAGS,
                                        libs=LDLIBS))


def _confined_name(path: str, fallback: str) -> str:
    """The base name a bundled path keeps inside the scratch directory (``{worker}`` kept)."""
    base = os.path.basename(path.rstrip("/")) or fallback
    if base in (".", ".."):
        base = fallback
    if "{worker}" in path and "{worker}" not in base:
        base += "-{worker}"
    return base


def confine(plan: RunPlan, workdir: str, warnings: list[str], *, isolation: str) -> None:
    """Point every path field of ``plan`` into ``workdir`` (an empty directory of the
    reproduction's scratch) and drop what described the other machine; a warning per change
    the user would not expect."""
    if plan.stdin_path:
        warnings.append(f"the bundle's stdin file {plan.stdin_path} is not read; the commands "
                        f"read /dev/null")
    plan.stdin_path = None
    if plan.stdout not in ("null", "pipe", "inherit"):
        plan.stdout = os.path.join(workdir, _confined_name(plan.stdout, "stdout"))
    if plan.samples_csv:
        plan.samples_csv = os.path.join(workdir, _confined_name(plan.samples_csv, "samples.csv"))
    plan.cwd = workdir
    placement = plan.placement
    if placement.isolation not in (None, "bare", isolation):
        warnings.append(f"the bundle's isolation {placement.isolation!r} is not used; "
                        f"measured with --isolation {isolation}")
    placement.isolation = isolation
    placement.calibration = placement.worker_label = placement.host = None


def prepared_plans(rep: Reproduction, workdir: str, warnings: list[str], *,
                   quota: tuple[int, int] | None = None,
                   isolation: str = "bare") -> list[tuple[dict, RunPlan]]:
    """(session document, plan ready to run here) per bundled run session: **builds** bundled
    workloads from the bundle's sources (call it only after the user agreed), puts their new
    path into the commands, confines the plan to ``workdir`` (:func:`confine`). An executable
    whose SHA-256 differs from the bundled one adds a warning. ``quota`` is (quota, period) in
    us to measure under, else none."""
    bundle = rep.bundle
    out = []
    built: dict[str, str] = {}
    for item in rep.sessions:
        plan = RunPlan.from_dict(copy.deepcopy(item.plan.to_dict()))
        for bench in plan.benchmarks:
            entry = item.programs.get(bench.name) or {}
            argv0 = entry.get("program", entry.get("argv0"))
            workload = _workload_of(bundle, entry)
            if workload and isinstance(argv0, str) and argv0:
                new = built.get(workload[0]) or _rebuild(bundle, *workload)
                built[workload[0]] = new
                bench.command = bench.command.replace(argv0, new)
                here = file_sha256(new)
            else:
                found = shutil.which(argv0) if isinstance(argv0, str) and argv0 \
                    and "/" not in argv0 else argv0
                here = file_sha256(found) if isinstance(found, str) and os.path.isfile(found) \
                    else None
                if here is None and argv0:
                    warnings.append(f"{bench.name}: {argv0} does not exist here; its runs will "
                                    f"fail")
            if entry.get("sha256") and here and here != entry["sha256"]:
                warnings.append(f"{bench.name}: the executable's SHA-256 differs from the "
                                f"bundled one ({str(entry['sha256'])[:12]} there, {here[:12]} "
                                f"here): another build or version")
        placement = plan.placement
        if placement.cpu_quota_us is not None and quota is None:
            warnings.append(f"session {item.doc.get('uid')} ran under a CPU quota of "
                            f"{placement.cpu_quota_us} us per "
                            f"{placement.cpu_period_us or 100000} us; measured here without it")
        placement.cpu_quota_us, placement.cpu_period_us = quota if quota else (None, None)
        session_dir = os.path.join(workdir, f"session-{len(out)}")
        os.makedirs(session_dir, exist_ok=True)
        confine(plan, session_dir, warnings, isolation=isolation)
        plan.planned_runs = {}
        out.append((item.doc, plan))
    return out


def remeasure(store, rep: Reproduction, *, quota: tuple[int, int] | None = None,
              isolation: str = "bare", observer=None,
              argv: list[str] | None = None) -> tuple[list[tuple[dict, dict]], list[str]]:
    """Run every bundled plan here, confined to a scratch directory removed afterwards; returns
    ((original doc, new doc) per session, warnings). The new sessions are stored in ``store``
    with metadata ``reproduces`` (the original uid and the bundle's SHA-256)."""
    from benchlab.core.executor import run_session
    from benchlab.core.session import interruptible, start_session
    from benchlab.store.bundle import sessions_data

    warnings: list[str] = []
    pairs = []
    scratch = make_scratch("reproduce")
    try:
        for doc, plan in prepared_plans(rep, scratch, warnings, quota=quota,
                                        isolation=isolation):
            with interruptible():
                writer = start_session(
                    store, plan, argv=argv, name=f"reproduce-{doc.get('uid')}",
                    metadata={"reproduces": {"uid": doc.get("uid"),
                                             "bundle_sha256": rep.bundle.sha256,
                                             "cpu_quota": list(quota) if quota else None}},
                    observer=observer)
                result = run_session(writer, plan, observer=observer)
            _, new_docs = sessions_data(store, [result.session.uid])
            pairs.append((doc, new_docs[0]))
    finally:
        remove_scratch(scratch)
    return pairs, warnings


__all__ = ["Reproduction", "ToRun", "read_reproduction", "plan_from_bundle", "describe",
           "prepared_plans", "confine", "remeasure", "file_sha256", "HOOKS", "PATH_FIELDS"]
