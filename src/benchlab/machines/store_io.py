"""Profiles in the store: a session of kind ``profile`` per profile.

Layout (no schema change): the session's ``name`` is the profile name, its ``metadata`` the
profile's metadata (stress-ng version, duration_s, repeat, limits, ``higher_is_better`` per
method, ...), its ``environment`` the machine's. One benchmark per method (``parameters``:
kind, higher_is_better), one run per repetition (status ``ok`` for measured runs, ``imported``
for imported data), whose sample metric :data:`~benchlab.machines.profile.METRIC` holds the
rate (bogo-ops/s for stress-ng, the source's unit for imported application benchmarks).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from benchlab.errors import UserError
from benchlab.machines.profile import (
    CPU_METRIC,
    METRIC,
    METRIC_UNIT,
    MethodResult,
    Profile,
    load_profile_file,
)
from benchlab.store.db import SessionRef, Store
from benchlab.store.writer import SessionWriter

SESSION_KIND = "profile"


def create_profile_writer(store: Store, profile: Profile, *,
                          argvs: Mapping[str, list[str]] | None = None,
                          source: str | None = None) -> tuple[SessionWriter, dict[str, int]]:
    """Start a profile session through the one session writer, with one benchmark per method;
    return (writer, method -> benchmark id). The profile's environment is stored as given."""
    writer = SessionWriter.create(store, SESSION_KIND, name=profile.name,
                                  environment=profile.environment or None,
                                  metadata=profile.metadata,
                                  source=source or profile.metadata.get("source"))
    writer.add_metric(METRIC, unit=METRIC_UNIT, origin="stress-ng --yaml bogo-ops-per-second-real-time")
    writer.add_metric(CPU_METRIC, unit=METRIC_UNIT,
                      origin="stress-ng --yaml bogo-ops-per-second-usr-sys-time")
    bench_ids = {}
    for position, (name, method) in enumerate(profile.methods.items()):
        argv = list(argvs[name]) if argvs and name in argvs else None
        bench_ids[name] = writer.add_benchmark(
            name, position=position, argv=argv, command=" ".join(argv) if argv else None,
            parameters={"kind": method.kind, "higher_is_better": method.higher_is_better})
    return writer, bench_ids


def save_profile(store: Store, profile: Profile, *, run_status: str = "imported",
                 source: str | None = None) -> SessionRef:
    """Write a finished profile (imported or read from JSON) as a complete session, in one
    transaction (all or nothing)."""
    with store.transaction():
        writer, bench_ids = create_profile_writer(store, profile, source=source)
        for name, method in profile.methods.items():
            for i, value in enumerate(method.values):
                samples = {METRIC: [value]}
                if i < len(method.cpu_values):
                    samples[CPU_METRIC] = [method.cpu_values[i]]
                writer.add_run(bench_ids[name], iteration=i, fields={"status": run_status},
                               samples=samples)
        writer.finish("done")
    return writer.ref


def load_profile(store: Store, key: str) -> Profile:
    """Read the profile session ``key`` (uid, id or name: the newest of that name)."""
    session = store.get_session(key)
    if session["kind"] != SESSION_KIND:
        raise UserError(f"session {key!r} is a {session['kind']} session, not a profile; "
                        f"give a profile name (see `benchlab list`) or a profile JSON file")
    metadata = session.get("metadata") or {}
    methods: dict[str, MethodResult] = {}
    for bench in store.benchmarks(session["id"]):
        params = bench.get("parameters") or {}
        values, _ = store.sample_values(bench["id"], METRIC)
        cpu_values, _ = store.sample_values(bench["id"], CPU_METRIC)
        methods[bench["name"]] = MethodResult(
            name=bench["name"], values=[float(v) for v in values],
            higher_is_better=bool(params.get("higher_is_better", True)),
            kind=str(params.get("kind", "cpu-method")), cpu_values=[float(v) for v in cpu_values])
    metadata = dict(metadata)
    metadata.setdefault("session_uid", session["uid"])
    return Profile(name=session["name"] or session["uid"], methods=methods, metadata=metadata,
                   environment=session.get("environment"))


def resolve_profile(spec: str, db: str | None = None) -> Profile:
    """A profile from a JSON file path (when ``spec`` names an existing file or ends in .json)
    or from the store (a profile session's name, uid or id).

    Raises:
        UserError: neither a readable profile file nor a profile in the store, saying both.
    """
    if spec.endswith(".json") or os.path.isfile(spec):
        return load_profile_file(spec)
    from benchlab.store.db import default_db_path
    path = db or default_db_path()
    if not Path(path).exists():
        raise UserError(f"profile {spec!r} is not a file and there is no database at {path}; "
                        f"give a profile JSON file or --db PATH of a store holding it")
    store = Store.open(path, readonly=True)
    try:
        try:
            return load_profile(store, spec)
        except UserError as err:
            if "no session" in str(err):
                raise UserError(f"no profile {spec!r}: not a file and not a session in {path}; "
                                f"measure one with `benchlab profile --name {spec}` or import it") from None
            raise
    finally:
        store.close()
