"""The noise an idle Dask worker adds to a CPU-bound run on its own node.

Two conditions, interleaved in random order (pairs), on the same CPU-bound stressor (the bundled
``exp_float`` workload, ~0.2 s):

- **worker**: a Dask scheduler and one worker (separate processes, benchlab's quiet settings
  unless ``--untuned``) are alive and the run is executed *by the worker*, exactly as
  ``benchlab run --cluster`` does (``benchlab.core.cluster.worker_side.run_one``: the task thread
  blocks in ``wait4`` while the exec helper runs the stressor; the worker's other threads are
  moved to a spare CPU when the run is pinned);
- **no worker**: the scheduler and worker processes are frozen with SIGSTOP (a stopped process
  cannot run, so it adds nothing) and this script runs the same stressor with the same
  placement through the same exec helper.

Wall times come from the exec helper (CLOCK_MONOTONIC around fork/wait4). Printed: the median
of each condition, the relative difference of the medians (worker / no worker - 1) with a
percentile bootstrap interval (resampling each condition, 4000 resamples), and the coefficient
of variation (SD / mean) of each. The machine may be shared: interleaving puts other load on
both conditions alike, but it widens the interval; the load average is printed.

Usage: .venv/bin/python bench/cluster_noise.py [--pairs 40] [--count 2000000]
                                               [--affinity core:0|none] [--untuned]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from benchlab.core.cluster.address import SLOT, quiet_config  # noqa: E402
from benchlab.core.cluster.worker_side import run_one  # noqa: E402
from benchlab.core.placement import prepare_execution  # noqa: E402
from benchlab.core.plan import BenchmarkSpec, Placement, RunPlan  # noqa: E402
from benchlab.workloads import workload_command  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _signal_all(procs: list[subprocess.Popen], sig: int) -> None:
    for proc in procs:
        os.killpg(proc.pid, sig)  # the group: a nanny and its worker process


def bootstrap_ratio(a: np.ndarray, b: np.ndarray, resamples: int = 4000, seed: int = 1,
                    level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of median(a) / median(b) - 1, each sample resampled."""
    rng = np.random.default_rng(seed)
    ra = np.median(rng.choice(a, (resamples, a.size)), axis=1)
    rb = np.median(rng.choice(b, (resamples, b.size)), axis=1)
    rel = ra / rb - 1
    tail = (1 - level) / 2
    return float(np.quantile(rel, tail)), float(np.quantile(rel, 1 - tail))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--count", type=int, default=2_000_000, help="exp_float iterations")
    ap.add_argument("--affinity", default="core:0", help="placement of the stressor")
    ap.add_argument("--untuned", action="store_true", help="Dask's default worker settings")
    args = ap.parse_args()

    import dask
    from distributed import Client

    command = workload_command("exp_float", args.count)
    plan = RunPlan(benchmarks=[BenchmarkSpec("stressor", " ".join(command))], runs=1,
                   cwd="/tmp", placement=Placement(affinity=args.affinity))
    execution = prepare_execution(plan.placement)
    settings = {} if args.untuned else quiet_config()
    with dask.config.set(settings):
        env = dict(os.environ, DASK_INTERNAL_INHERIT_CONFIG=dask.config.serialize(
            dask.config.global_config))
        port = _free_port()
        address = f"tcp://127.0.0.1:{port}"
        procs = [_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                         str(port), "--no-dashboard"], env)]
        procs.append(_start(["distributed.cli.dask_worker", address, "--nthreads", "1",
                             "--resources", f"{SLOT}=1", "--no-dashboard"], env))
        client = None
        try:
            client = Client(address, timeout="30s", set_as_default=False)
            client.wait_for_workers(1, timeout=60)
            worker_runs, bare_runs = [], []
            uid = f"noise{os.getpid()}"
            planned = {"benchmark": 0, "warmup": False, "iteration": 0}
            quiet = None
            rng = np.random.default_rng(0)
            # one untimed run each way first: page cache, the worker's imports
            client.submit(run_one, plan.to_dict(), uid, planned, 0, False, pure=False,
                          resources={SLOT: 1}).result()
            for _ in range(args.pairs):
                for condition in rng.permutation(["worker", "bare"]):
                    if condition == "worker":
                        res = client.submit(run_one, plan.to_dict(), uid, planned, 0, False,
                                            pure=False, resources={SLOT: 1}).result()
                        assert res["measurement"]["status"] == "ok", res
                        worker_runs.append(res["measurement"]["wall_ns"])
                        quiet = res["quiet"]
                    else:
                        _signal_all(procs, signal.SIGSTOP)
                        try:
                            time.sleep(0.05)  # the stop lands before the run starts
                            m, _, _ = execution.run(command, worker=0, cwd="/tmp",
                                                    timeout_s=None, stdout_path=None,
                                                    stderr_path=None, scratch="/tmp")
                        finally:
                            _signal_all(procs, signal.SIGCONT)
                        assert m.status == "ok", m
                        bare_runs.append(m.wall_ns)
        finally:
            if client is not None:
                client.close()
            _signal_all(procs, signal.SIGCONT)
            _signal_all(procs, signal.SIGKILL)
            for proc in procs:
                proc.wait(10)

    w = np.array(worker_runs, float) / 1e6
    b = np.array(bare_runs, float) / 1e6
    rel = np.median(w) / np.median(b) - 1
    lo, hi = bootstrap_ratio(w, b)
    print(f"stressor: exp_float {args.count} (placement {args.affinity}); {args.pairs} "
          f"interleaved pairs; worker {'untuned (Dask defaults)' if args.untuned else 'tuned'}")
    print(f"worker kept quiet: {quiet}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print(f"median wall, idle worker on the node : {np.median(w):9.3f} ms   "
          f"CV {np.std(w, ddof=1) / np.mean(w) * 100:5.2f}%")
    print(f"median wall, no worker (SIGSTOPped)  : {np.median(b):9.3f} ms   "
          f"CV {np.std(b, ddof=1) / np.mean(b) * 100:5.2f}%")
    print(f"relative difference of medians (worker / none - 1): {rel * 100:+.2f}%  "
          f"95% bootstrap CI [{lo * 100:+.2f}%, {hi * 100:+.2f}%]   goal: <= 1%")


if __name__ == "__main__":
    main()
