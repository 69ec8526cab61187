"""False regressions of a whole suite: the family-wise rate of k A/A benchmarks, on recorded noise.

``ab --harness`` decides every benchmark of a suite on its own with the gate's rule, which
bounds a false regression by alpha / 2 per benchmark at exactly 1 + threshold. A suite fails
when any of its k benchmarks is called a regression, so what a team sees is the family-wise
rate: the chance that at least one of k benchmarks that did not change fails the job. This
script measures it on the noise of a real suite run:

* ``--record STORE --session UID --out FILE`` keeps, from an ``ab --harness`` session, every
  benchmark's within-pair log ratios d = log(head / base) of its primary metric (one value per
  harness run per side, as the gate pairs them), pairs in their measured order;
* ``--simulate FILE`` draws suites of k benchmarks from those columns. An A/A suite takes each
  benchmark's d minus its median (what two identical builds would show), the pairs in a random
  order and each pair's sign flipped at random (the random order of the two runs in a pair; one
  harness run measures every benchmark, so one sign per pair is shared by all of them, and so is
  the machine's state during the pair: the recorded correlation between benchmarks is kept).
  Up to the recorded benchmarks, distinct columns share one pair order; beyond (k = 500 from a
  suite of 200), each further copy of a column gets its own pair order: as a distinct benchmark
  would, its noise is its own apart from the shared sign.

Each benchmark is decided at ``ab``'s looks (:class:`benchlab.ci.ab.LookClock`, from
``--min-pairs`` to the recorded pairs) by counting, as ``bench/gate_boundary.py`` does, the
Walsh averages at or below log(1 + threshold) against the look's excluded count: exactly the
regression call of :func:`benchlab.ci.gate.decide` (tests/ci/test_gate_quality_replay.py checks
it draw by draw). Benchmarks decided "equivalent" are not stopped, which can only add false
regressions. Two conditions: a true ratio of 1 (A/A) and the worst case, every benchmark at
exactly 1 + threshold. Printed per k and condition: the family-wise rate with its
Clopper-Pearson 95 % interval, the mean false regressions per suite, and 1 - (1 - p)^k for the
pooled per-benchmark rate p (what independent benchmarks would give).

    nice -n 15 .venv/bin/python bench/gate_quality_family.py --record gates.db --session UID \\
        --out suite200.json
    nice -n 15 .venv/bin/python bench/gate_quality_family.py --simulate suite200.json \\
        --k 50,500 --suites 2000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_boundary import clopper_pearson, look_schedule  # noqa: E402  (a sibling script)

from benchlab.ci.gate import DEFAULT_ALPHA  # noqa: E402

THRESHOLD = 0.02


def record(store_path: str, uid: str, out: str) -> None:
    """Write the within-pair log ratios of every benchmark of ``ab --harness`` session ``uid``."""
    from benchlab.store.db import Store

    with Store.open(store_path) as store:
        session = store.get_session(uid)
        names = sorted({b["name"].rsplit("@", 1)[0] for b in store.benchmarks(session["id"])})
        meta = (session.get("metadata") or {}).get("ab", {})
        columns, metric = [], None
        for name in names:
            base = store.resolve_series(f"{session['uid']}:{name}@base")
            head = store.resolve_series(f"{session['uid']}:{name}@head", base.metric)
            n = min(base.values.size, head.values.size)
            columns.append(np.log(head.values[:n]) - np.log(base.values[:n]))
            metric = base.metric
    n = min(c.size for c in columns)
    doc = {"about": f"within-pair log ratios head/base of {metric}, pairs in measured order, "
                    f"one column per benchmark, from ab --harness session {uid} "
                    f"({meta.get('command', '')}); load average before/after "
                    f"{session.get('load_before')} / {session.get('load_after')}",
           "metric": metric, "benchmarks": names,
           "d": [[round(float(c[i]), 6) for c in columns] for i in range(n)]}
    Path(out).write_text(json.dumps(doc))
    print(f"wrote {out}: {len(names)} benchmarks x {n} pairs of {metric}")


def suite_noise(d: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """(pairs, k) A/A log ratios of one simulated suite (see the module docstring)."""
    pairs, recorded = d.shape
    centred = d - np.median(d, axis=0)
    picks = rng.permutation(recorded)[:k] if k <= recorded else np.r_[
        rng.permutation(recorded), rng.integers(0, recorded, k - recorded)]
    shared = rng.permutation(pairs)
    columns = [centred[shared if j < recorded else rng.permutation(pairs), col]
               for j, col in enumerate(picks)]
    signs = rng.choice(np.array([-1.0, 1.0]), size=(pairs, 1))
    return signs * np.stack(columns, axis=1)


def false_regressions(x: np.ndarray, schedule: list[tuple[int, float]]) -> np.ndarray:
    """Which columns of ``x`` (log ratio minus log(1 + threshold), pairs in order) are called a
    regression at some look: at most the excluded count of Walsh averages at or below 0."""
    from benchlab.stats import distributions as special
    from benchlab.stats.paired import excluded_averages

    called = np.zeros(x.shape[1], dtype=bool)
    for n, critical in schedule:
        e = excluded_averages(n, float(special.ndtr(-critical)))
        if e < 0:
            continue
        ranks = np.abs(x[:n]).argsort(axis=0).argsort(axis=0) + 1
        called |= np.where(x[:n] <= 0, ranks, 0).sum(axis=0) <= e
    return called


def simulate(path: str, ks: list[int], suites: int, min_pairs: int, seed: int,
             alpha: float | None = None) -> None:
    """Print the family-wise rates of suites of each size in ``ks`` (``alpha``: each
    benchmark's; None: the default 0.01, or 0.01 / k with ``--per-k``)."""
    doc = json.loads(Path(path).read_text())
    d = np.asarray(doc["d"], dtype=np.float64)
    print(f"{d.shape[1]} recorded benchmarks x {d.shape[0]} pairs ({doc['metric']}); looks "
          f"from {min_pairs} pairs on ab's clock; threshold {THRESHOLD:.0%}; "
          f"load {os.getloadavg()[0]:.1f}")
    print("| k | alpha per benchmark | true ratio | suites | suites with a false regression (95 % CI) | false "
          "regressions per suite | 1 - (1 - p)^k, p per benchmark |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(seed)
    for k in ks:
        level = DEFAULT_ALPHA / k if alpha is None else alpha
        schedule = look_schedule(min_pairs, d.shape[0], level)
        for label, shift in (("1 (A/A)", 0.0), ("1 + threshold", math.log1p(THRESHOLD))):
            counts = np.array([false_regressions(suite_noise(d, k, rng) + shift
                                                 - math.log1p(THRESHOLD), schedule).sum()
                               for _ in range(suites)])
            hit = int((counts > 0).sum())
            low, high = clopper_pearson(hit, suites)
            p = counts.sum() / (suites * k)
            print(f"| {k} | {level:.3g} | {label} | {suites} | {hit / suites:.2%} [{low:.2%}, {high:.2%}] "
                  f"| {counts.mean():.3f} | {1 - (1 - p) ** k:.2%} (p = {p:.3%}) |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", metavar="STORE")
    parser.add_argument("--session", metavar="UID")
    parser.add_argument("--out", metavar="FILE")
    parser.add_argument("--simulate", metavar="FILE")
    parser.add_argument("--k", default="50,500")
    parser.add_argument("--suites", type=int, default=2000)
    parser.add_argument("--min-pairs", type=int, default=20)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                        help="each benchmark's alpha (ab --alpha)")
    parser.add_argument("--per-k", action="store_true",
                        help="each benchmark's alpha 0.01 / k (Bonferroni over the suite)")
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.record:
        record(args.record, args.session, args.out)
    if args.simulate:
        simulate(args.simulate, [int(k) for k in args.k.split(",")], args.suites,
                 args.min_pairs, args.seed, None if args.per_k else args.alpha)
    print(f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
