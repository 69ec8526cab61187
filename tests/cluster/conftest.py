"""A LocalCluster of two worker processes shared by the tests of a module (starting one costs
seconds); tests that kill workers or schedulers start their own."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def two_workers() -> str:
    """The scheduler address of a LocalCluster of two worker processes (names 0 and 1), each
    offering one benchlab slot, started with benchlab's quiet Dask settings."""
    import dask
    from distributed import LocalCluster

    from benchlab.core.cluster.address import SLOT, quiet_config

    with dask.config.set(quiet_config()):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               resources={SLOT: 1}, dashboard_address=":0", silence_logs=50)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
