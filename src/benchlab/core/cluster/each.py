"""Run one function once on each chosen machine of a cluster (profiles, calibrations).

The machines layer gives the function (it runs the existing profile or calibration code on the
worker); the core ships it: one ``benchlab-slot`` per call so nothing else is measured on that
machine meanwhile, the worker kept quiet as for runs, a one-line UserError naming the machine
when it fails there.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

from benchlab.core.cluster.address import (
    SLOT,
    Machine,
    choose_machines,
    machines_of,
    open_cluster,
    parse_cluster,
)
from benchlab.errors import UserError


def _quietly(token: str, fn: Callable[..., Any], label: str, *args: Any) -> Any:
    """On the worker: ``fn(label, *args)`` with the worker's periodic work paused, registered
    under ``token`` so an interrupted client can stop it (None when it was stopped first)."""
    from benchlab.core.cluster.stop import running
    from benchlab.core.cluster.worker_side import quiet_worker

    with running(token) as stopped_before:
        if stopped_before:
            return None
        with quiet_worker([None]):
            return fn(label, *args)


def run_on_each(cluster: str, fn: Callable[..., Any], *args: Any, on: str = "all",
                connect_options: dict[str, Any] | None = None,
                on_result: Callable[[Machine, Any], None] | None = None
                ) -> list[tuple[Machine, Any]]:
    """Call ``fn(machine_label, *args)`` on every machine ``--on`` chooses, concurrently.

    ``on_result(machine, result)`` is called as each finishes (the caller stores it at once).
    Returns (machine, result) pairs in machine order. Raises UserError naming the first machine
    that failed (the others' results were already handed to ``on_result``).
    """
    from benchlab.core.session import interruptible

    spec = parse_cluster(cluster)
    token = f"each-{uuid.uuid4().hex}"
    with interruptible(), open_cluster(spec, connect_options=connect_options) as client:
        machines = choose_machines(machines_of(client), on, spec.text)
        futures = {client.submit(_quietly, token, fn, m.label, *args, workers=[m.address],
                                 allow_other_workers=False, resources={SLOT: 1}, pure=False,
                                 retries=0): m for m in machines}
        try:
            return _collect(client, futures, machines, on_result)
        except KeyboardInterrupt:
            from benchlab.core.cluster.stop import stop_runs_on

            busy = sorted({m.address for fut, m in futures.items() if not fut.done()})
            if busy:
                stop_runs_on(client, token, busy)
            raise


def _collect(client: Any, futures: dict[Any, Machine], machines: list[Machine],
             on_result: Callable[[Machine, Any], None] | None) -> list[tuple[Machine, Any]]:
    """Each call's result as it finishes (handed to ``on_result``); UserError for a failure."""
    from distributed import as_completed

    results: dict[str, Any] = {}
    failure = None
    for fut in as_completed(list(futures), loop=client.loop):
        m = futures[fut]
        try:
            results[m.label] = fut.result()
        except UserError as exc:
            failure = failure or f"on {m.label}: {exc}"
            continue
        except Exception as exc:
            failure = failure or (f"on {m.label}: {type(exc).__name__}: {exc} (the worker "
                                  f"died or failed; check its log)")
            continue
        if on_result is not None:
            on_result(m, results[m.label])
    if failure:
        raise UserError(failure)
    return [(m, results[m.label]) for m in machines]
