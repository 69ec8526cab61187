"""Stability studies (as in the grading platform's study, docs/sources.md): a matrix of workloads × isolation × workers × affinity × load.

A suite (TOML) names workloads and the levels of each factor. Every combination of factor
levels is a **cell**; a cell runs as an ordinary run session (all workloads interleaved, each
worker running its own stream of runs, the stability study's homogeneous parallel setup) under that cell's
control options. Cells run in a seeded random order so drift does not line up with a factor.
A study session (kind ``study``) records the suite and which run session belongs to which cell,
so an interrupted study resumes: complete cells are kept, an interrupted cell resumes, cells not
started are started.

The suite (its format, cells and plans) is :mod:`benchlab.core.suite`.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

import numpy as np

from benchlab.core.execute import HERE, Cluster, Here, execute
from benchlab.core.execute import resume as resume_cell
from benchlab.core.session import interruptible, raise_if_terminated
from benchlab.core.session_types import Observer, SessionInterrupted
from benchlab.core.suite import Suite, cell_label, cell_protocol
from benchlab.errors import UserError
from benchlab.store import session_metadata
from benchlab.store.db import SessionRef, Store
from benchlab.store.writer import SessionWriter


def run_study(store: Store, suite: Suite | None, *, argv: list[str] | None = None,
              observer: Observer | None = None, resume: str | None = None,
              cluster: str | None = None, lost_after_s: float | None = None,
              here: Here = HERE) -> SessionRef:
    """Run (or resume) every cell of a study; return the study session.

    ``cluster`` (``--cluster``): every cell runs on each machine of that Dask cluster
    (:mod:`benchlab.core.cluster`), started once for the whole study; stored with the study,
    so a resume uses it too. ``lost_after_s`` (``--lost-after``, s): how long a lost machine is
    waited for (default 60 s), stored with the study too. ``here``: how cells execute on this
    machine (tests give a runner that spawns no process).

    Raises :class:`SessionInterrupted` (for the study session) on Ctrl-C or SIGTERM after
    marking it interrupted; completed cells stay stored.
    """
    with interruptible() as received:
        study, suite, meta = _open_study(store, suite, argv, resume,
                                         cluster_flag=_cluster_flag(cluster, lost_after_s))
        try:
            _run_cells(store, study, suite, meta, argv, observer, cluster, lost_after_s, here)
            # a SIGTERM whose KeyboardInterrupt was lost on the way (a __del__, the cluster's
            # shutdown) still ends the study as interrupted, never as done with exit 0
            raise_if_terminated()
        except (SessionInterrupted, KeyboardInterrupt):
            # A bare KeyboardInterrupt: the signal came between cells or while a cell's
            # session was being created; the study is interrupted all the same.
            study.finish("interrupted")
            raise SessionInterrupted(study.ref, 0, received.signum or signal.SIGINT) from None
        except BaseException:
            study.finish("failed")
            raise
        study.finish("done")
        return study.ref


def _cluster_flag(cluster: str | None, lost_after_s: float | None) -> str | None:
    """The cluster option given ("--cluster", "--lost-after") or None."""
    if cluster is not None:
        return "--cluster"
    return "--lost-after" if lost_after_s is not None else None


def _open_study(store: Store, suite: Suite | None, argv: list[str] | None,
                resume: str | None, cluster_flag: str | None = None,
                ) -> tuple[SessionWriter, Suite, dict[str, Any]]:
    """Create the study session, or claim an unfinished one to resume.

    ``cluster_flag``: the cluster option given with a resume; refused (before the study is
    claimed) when the study's cells ran on this machine, whose remaining cells must too.
    """
    if resume:
        sess = store.get_session(resume)
        if sess["kind"] != "study":
            raise UserError(f"session {sess['uid']} is not a study; pass a study session")
        if sess["status"] == "complete":
            raise UserError(f"study {sess['uid']} is already complete; nothing to resume")
        if cluster_flag and not (sess.get("metadata") or {}).get("cluster"):
            raise UserError(f"study {sess['uid']} did not run on a cluster; resume it without "
                            f"{cluster_flag}")
        suite = Suite.from_dict(sess["protocol"])
        writer = SessionWriter.resume(store, sess["uid"])
        return writer, suite, dict(sess.get("metadata") or {})
    assert suite is not None
    from benchlab.environment import collect_environment

    writer = SessionWriter.create(store, "study", name=suite.name, command_line=argv,
                                  protocol=suite.to_dict(),
                                  environment=collect_environment(env_key=store.env_key()),
                                  metadata={"cells": {}}, source=suite.source)
    return writer, suite, {"cells": {}}


def _run_cells(store: Store, study: SessionWriter, suite: Suite, meta: dict[str, Any],
               argv: list[str] | None, observer: Observer | None,
               cluster: str | None = None, lost_after_s: float | None = None,
               here: Here = HERE) -> None:
    """Every cell in the study's seeded order: skip complete ones, resume or start the rest.

    On a cluster, one cluster serves every cell (started once, shut down however this ends).
    """
    cells = suite.cells()
    order = np.random.default_rng(suite.seed).permutation(len(cells))
    meta.setdefault("cells", {})
    if cluster is not None:
        meta["cluster"] = cluster
    if lost_after_s is not None:
        meta["lost_after_s"] = lost_after_s
    cluster = meta.get("cluster")
    meta["order"] = [cell_label(cells[i]) for i in order]
    session_metadata.merge(store, study.ref.id, **meta)
    shared_cluster = contextlib.nullcontext()
    if cluster:
        from benchlab.core.cluster.session import open_shared_cluster

        shared_cluster = open_shared_cluster(
            cluster, slots=max(int(cell["workers"]) for cell in cells))
    with shared_cluster as shared:
        where: Here | Cluster = here
        if cluster:
            where = Cluster(cluster, lost_after_s=meta.get("lost_after_s"), shared=shared)
        for k, idx in enumerate(order):
            raise_if_terminated()  # no cell starts after a SIGTERM, even one whose raise was lost
            cell = cells[int(idx)]
            label = cell_label(cell)
            known = meta["cells"].get(label)
            if known:
                if store.get_session(known["session"])["status"] != "complete":
                    resume_cell(store, known["session"], where if cluster or here.runner
                                else None, observer=observer)
                continue

            def started(ref, label=label, cell=cell):
                meta["cells"][label] = {"session": ref.uid, "cell": cell}
                session_metadata.merge_under(store, study.ref.id, "cells",
                                             {label: meta["cells"][label]})

            execute(cell_protocol(suite, cell, seed=suite.seed * 1000 + k), store, where,
                    argv=argv, name=f"{suite.name}/{label}", parent=study.ref,
                    observer=observer, on_start=started)
