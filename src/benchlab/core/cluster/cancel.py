"""A worker plugin that kills a run when Dask cancels it while it executes.

A Dask worker cannot interrupt a task: when the scheduler frees the key of an executing task,
the worker marks it cancelled and lets the thread run on, discarding its result. For a
benchmark that means a program still measuring on a machine nobody reads from. It happens when

- the client was killed with SIGKILL (or its machine died): the scheduler notices the closed
  connection and frees every key the client held; an interrupted client (Ctrl-C, SIGTERM) stops
  its runs itself (:func:`benchlab.core.cluster.stop.stop_session_runs`), a killed one cannot;
- the client gave a run up as lost (``--lost-after``) and re-queued it elsewhere while the
  machine was in fact still running it.

:class:`StopCancelledRuns` watches the worker's task transitions and, for a task that leaves
the executing state without finishing, kills what its thread started
(:func:`benchlab.core.cluster.stop.stop_cancelled_task`). Only tasks executing inside
:func:`~benchlab.core.cluster.stop.running` (runs, profiles, calibrations) are known there;
Dask's own tasks are left alone. The client registers the plugin on every worker when it
connects (:func:`register`); on a team's scheduler it stays registered for workers that join
later, which is harmless (the same plugin, idempotent).
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

#: The plugin's name on the workers (registering it again replaces nothing).
PLUGIN_NAME = "benchlab-stop-cancelled-runs"

#: Worker task states a task executes in, and the ones an executing task leaves them for when
#: the scheduler frees it (the worker then holds it as ``cancelled`` until the thread returns).
_EXECUTING = frozenset({"executing", "long-running"})
_GIVEN_UP = frozenset({"released", "cancelled", "forgotten"})


class StopCancelledRuns(WorkerPlugin):
    """Kill the processes of a benchlab task that Dask cancels while it executes."""

    idempotent = True
    name = PLUGIN_NAME

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if start in _EXECUTING and finish in _GIVEN_UP:
            from benchlab.core.cluster.stop import stop_cancelled_task

            stop_cancelled_task(str(key))


def register(client: Any) -> None:
    """Register :class:`StopCancelledRuns` on every worker of ``client``'s cluster (and on
    workers joining later). A scheduler that refuses it is not fatal: the runs still execute,
    only a killed client's runs would not be stopped."""
    import contextlib

    with contextlib.suppress(Exception):
        client.register_plugin(StopCancelledRuns(), name=PLUGIN_NAME)
