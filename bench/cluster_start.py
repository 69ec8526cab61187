"""What authentication costs a ``local:N`` cluster's start: seconds from nothing to N workers
joined, for a plain-``tcp://`` LocalCluster (how ``local:N`` started before it used TLS) and for
benchlab's TLS one (certificates made for each start), alternated; plus the time to make the
certificates alone.

    .venv/bin/python bench/cluster_start.py [STARTS] [N]     # defaults: 4 starts, 2 workers

Prints the median and every start of each kind. docs/cluster.md quotes a run of it.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time


def _plain(n: int) -> None:
    import dask
    from distributed import Client, LocalCluster

    from benchlab.core.cluster.address import SLOT, quiet_config

    with dask.config.set(quiet_config()):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               resources={SLOT: 1}, dashboard_address=":0", silence_logs=50)
        client = Client(cluster, set_as_default=False)
        client.wait_for_workers(n)
        client.close()
        cluster.close()


def _tls(n: int) -> None:
    import dask
    from distributed import Client

    from benchlab.core.cluster.address import SLOT, quiet_config
    from benchlab.core.cluster.local import local_config, start_local_cluster
    from benchlab.core.scratch import make_scratch, remove_scratch

    scratch = make_scratch("cluster")
    try:
        with dask.config.set(quiet_config()), dask.config.set(local_config(scratch, False)):
            cluster = start_local_cluster(n, {SLOT: 1}, scratch)
            client = Client(cluster, set_as_default=False)
            client.wait_for_workers(n)
            client.close()
            cluster.close()
    finally:
        remove_scratch(scratch)


def _certificates_ms(times: int = 10) -> float:
    from benchlab.core.cluster.tls import make_certificates

    spent = []
    for _ in range(times):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            make_certificates(os.path.join(d, "tls"), ["127.0.0.1", "localhost"], days=30)
            spent.append(time.perf_counter() - t0)
    return statistics.median(spent) * 1e3


def main() -> None:
    starts = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    spent: dict[str, list[float]] = {"plain tcp": [], "TLS": []}
    for _ in range(starts):
        for name, start in (("plain tcp", _plain), ("TLS", _tls)):
            t0 = time.monotonic()
            start(n)
            spent[name].append(time.monotonic() - t0)
    for name, values in spent.items():
        print(f"{name}: median {statistics.median(values):.2f} s "
              f"({', '.join(f'{v:.2f}' for v in values)}) for local:{n}")
    print(f"certificates: median {_certificates_ms():.1f} ms")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
