"""``benchlab bundle``: gather everything a colleague needs to re-analyse and re-measure.

Members (layout and schema in ``docs/bundle.md``):

- ``data/sessions.json``: the sessions (runs, samples, measurements, environment, protocol,
  command line), :mod:`benchlab.store.bundle.data`;
- ``protocols/<uid>.json``: each session's run plan and benchlab command line, on their own;
- ``provenance/executables.json``: for each benchmark, its argv[0] resolved on PATH now, the
  SHA-256 and size (bytes) of that file, or ``exists: false`` when it is gone; the bundled
  workload it was built from, if any;
- ``sources/<workload>.c``: the C source (headers inlined) of each bundled workload measured;
- ``provenance/software.json``: benchlab, Python, numpy and scipy versions and the platform;
  ``provenance/uv.lock`` when benchlab runs from a checkout that has one;
- ``machine/profile.json``: the measuring machine's stress-ng profile, when one is given;
- ``analysis/analysis.json``, ``report/report.md``, ``report/report.html``: the analysis and
  the report of the bundled data (:mod:`.analysis`).

Nothing depends on the clock or on where the store lives, so the same sessions (and profile)
give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

from benchlab import __version__
from benchlab.core.reproduce import file_sha256
from benchlab.report.reproduce.analysis import (
    ANALYSIS_MEMBER,
    ANALYSIS_SEED,
    REPORT_HTML,
    REPORT_MD,
    analysis_bytes,
    render_reports,
)
from benchlab.store.bundle import (
    DATA_MEMBER,
    Bundle,
    bundle_bytes,
    canonical_bytes,
    sessions_data,
    write_bundle,
)
from benchlab.store.bundle.archive import (
    EXECUTABLES_MEMBER,
    LOCK_MEMBER,
    PROFILE_MEMBER,
    SOFTWARE_MEMBER,
)


def workload_of(executable: str) -> str | None:
    """The bundled workload an executable was built from (its cache name is
    ``<workload>-<source hash>-<build hash>``), or None."""
    from benchlab.workloads import workload_names

    stem = Path(executable).name.split("-")[0]
    return stem if stem in workload_names() else None


def source_hash_of(executable: str) -> str | None:
    """The 16-hex-digit source hash in a workload binary's cache name, or None."""
    parts = Path(executable).name.split("-")
    return parts[1] if len(parts) >= 3 else None


def executables(docs: Sequence[dict[str, Any]], cwd: str | None = None) -> list[dict[str, Any]]:
    """Every executable measured: per (session, benchmark), the program (argv[0], or the
    command's first word when it ran through a shell) resolved on PATH now (or relative to the
    session's cwd), its SHA-256 and size in bytes, or ``exists: false``."""
    out = []
    for s in docs:
        plan_cwd = (s.get("protocol") or {}).get("cwd") or cwd
        shell = (s.get("protocol") or {}).get("shell")
        for b in s["benchmarks"]:
            argv = b.get("argv") or []
            argv0 = argv[0] if argv else None
            # through a shell, argv[0] is the shell: the measured program is the command's
            # first word (a bundled workload is recognised, and rebuilt, from that)
            words = _words(b.get("command")) if shell else argv
            program = words[0] if words else None
            entry: dict[str, Any] = {"session": s["uid"], "benchmark": b["name"],
                                     "argv0": argv0, "program": program,
                                     "through_shell": bool(shell)}
            resolved = _resolve(program, plan_cwd)
            entry["resolved"] = resolved
            entry["exists"] = resolved is not None
            if resolved is not None:
                entry["sha256"] = file_sha256(resolved)
                entry["size_bytes"] = os.path.getsize(resolved)
            workload = workload_of(program) if program else None
            entry["workload"] = workload
            if workload:
                entry["source_hash"] = source_hash_of(program)
            out.append(entry)
    return out


def _words(command: str | None) -> list[str]:
    import shlex

    try:
        return shlex.split(command or "")
    except ValueError:  # unbalanced quotes: the shell would have refused it too
        return (command or "").split()


def _resolve(program: str | None, cwd: str | None) -> str | None:
    if not program:
        return None
    if "/" not in program:
        return shutil.which(program)
    candidate = Path(program) if os.path.isabs(program) else Path(cwd or ".", program)
    return str(candidate) if candidate.is_file() else None


def software() -> dict[str, Any]:
    """The versions the analysis ran with (compared with a warning by ``reproduce``)."""
    import numpy

    try:  # not part of the base install; recorded when present
        from importlib.metadata import version

        scipy_version: str | None = version("scipy")
    except Exception:  # PackageNotFoundError, or metadata unreadable
        scipy_version = None
    return {"benchlab": __version__, "python": platform.python_version(),
            "implementation": platform.python_implementation(), "numpy": numpy.__version__,
            "scipy": scipy_version, "platform": sys.platform,
            "machine": platform.machine(), "analysis_seed": ANALYSIS_SEED}


def _lock_file() -> Path | None:
    import benchlab

    root = Path(benchlab.__file__).resolve().parents[2]
    lock = root / "uv.lock"
    return lock if lock.is_file() else None


def bundle_members(store, selectors: Sequence[str], *,
                   profile: dict[str, Any] | None = None) -> tuple[dict[str, bytes], dict]:
    """The members of the bundle of ``selectors`` (session uids, ids or names) and the
    manifest's extra fields. ``profile`` is the measuring machine's profile document."""
    from benchlab.workloads import amalgamated_source

    data, docs = sessions_data(store, selectors)
    members: dict[str, bytes] = {DATA_MEMBER: data}
    for s in docs:
        members[f"protocols/{s['uid']}.json"] = canonical_bytes(
            {"protocol": s.get("protocol"), "command_line": s.get("command_line")})
    exes = executables(docs)
    for entry in exes:
        name = entry.get("workload")
        if name and f"sources/{name}.c" not in members:
            text = amalgamated_source(name)
            entry_hash = hashlib.sha256(text.encode()).hexdigest()[:16]
            if entry.get("source_hash") not in (None, entry_hash):
                entry["source_note"] = ("the workload's source changed since it was measured; "
                                        "the bundled source is the current one")
            members[f"sources/{name}.c"] = text.encode("utf-8")
    members[EXECUTABLES_MEMBER] = canonical_bytes(exes)
    members[SOFTWARE_MEMBER] = canonical_bytes(software())
    lock = _lock_file()
    if lock is not None:
        members[LOCK_MEMBER] = lock.read_bytes()
    if profile is not None:
        members[PROFILE_MEMBER] = canonical_bytes(profile)
    members[ANALYSIS_MEMBER] = analysis_bytes(docs)
    # the report is rendered from the bundle's own data, exactly as reproduce will render it
    draft = Bundle("<bundle being written>", {}, {DATA_MEMBER: data}, "")
    markdown, html = render_reports(draft)
    members[REPORT_MD] = markdown.encode("utf-8")
    members[REPORT_HTML] = html.encode("utf-8")
    extra = {"benchlab_version": __version__, "sessions": [s["uid"] for s in docs]}
    return members, extra


def newest_profile(store) -> dict[str, Any] | None:
    """The newest profile stored in ``store`` as a profile document, or None."""
    from benchlab.machines.store_io import load_profile

    uid = store.newest_session_uid("profile")
    return None if uid is None else load_profile(store, uid).to_dict()


def make_bundle(store, selectors: Sequence[str], output: str | os.PathLike, *,
                profile: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the bundle of ``selectors`` to ``output``; returns its size (bytes), SHA-256,
    member count and whether a profile is included."""
    from benchlab.store.bundle import sha256_hex

    if profile is None:
        profile = newest_profile(store)
    members, extra = bundle_members(store, selectors, profile=profile)
    size = write_bundle(output, members, extra)
    return {"path": str(output), "size_bytes": size, "members": len(members) + 1,
            "sha256": sha256_hex(Path(output).read_bytes()), "profile": profile is not None,
            "sessions": extra["sessions"],
            "missing_executables": [e["program"] for e in json.loads(members[EXECUTABLES_MEMBER])
                                    if e["program"] and not e["exists"]]}


__all__ = ["make_bundle", "bundle_members", "bundle_bytes", "executables", "software",
           "newest_profile", "file_sha256"]
