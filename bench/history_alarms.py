"""False alarms and detections of ``benchlab history`` on simulated 30-session histories.

Each history: 30 sessions of ``--runs`` runs each; a run is lognormal with a CV of ``--cv``
(2 %) around its session's level; each session's level is offset by a normal draw whose SD is
drawn uniformly in [0.5 %, 1 %] per history (what reboots and placement do on real machines).
With no change, any flagged regression is a false alarm; with a 5 % step at a random session
(between the 8th and the 23rd), a flagged regression at that session (+-1) is a detection.

Two rules on the same histories:

- ``session level``: :func:`benchlab.stats.change_points` as ``history`` uses it now (session
  medians, permutation-calibrated binary segmentation, alpha 0.01, min effect 1 %);
- ``runs only`` (the rule before): Mann-Whitney between consecutive sessions' runs, Holm over
  the 29 pairs, p < 0.05 and a Hodges-Lehmann shift >= 1 % of the previous median.

Prints each rate with its Clopper-Pearson 95 % interval. Pure computation, no processes:

    .venv/bin/python bench/history_alarms.py --histories 200
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from benchlab.stats.changepoint import change_points
from benchlab.stats.multiple import holm
from benchlab.stats.rank import hodges_lehmann, mann_whitney_u


def history(rng: np.random.Generator, sessions: int, runs: int, cv: float,
            step_at: int | None, step: float) -> list[np.ndarray]:
    """Runs (ns) of each session of one simulated history."""
    offset_sd = rng.uniform(0.005, 0.01)
    out = []
    for j in range(sessions):
        level = 1e7 * np.exp(rng.normal(0, offset_sd)) * (1 + step if step_at is not None
                                                           and j >= step_at else 1.0)
        out.append(level * np.exp(rng.normal(0, cv, runs)))
    return out


def session_rule(sessions: list[np.ndarray]) -> set[int]:
    """Indices flagged as regressions by the session-level change points."""
    return {c.index for c in change_points([float(np.median(s)) for s in sessions])
            if c.regression}


def runs_rule(sessions: list[np.ndarray]) -> set[int]:
    """Indices flagged by the rule before: consecutive Mann-Whitney on runs, Holm."""
    p, shifts = [], []
    for i in range(1, len(sessions)):
        p.append(mann_whitney_u(sessions[i], sessions[i - 1]).p_value)
        shifts.append(hodges_lehmann(sessions[i], sessions[i - 1]).estimate
                      / float(np.median(sessions[i - 1])))
    return {i + 1 for i, (pa, s) in enumerate(zip(holm(p), shifts)) if pa < 0.05 and s >= 0.01}


def rate(k: int, n: int) -> str:
    """k/n as a percentage with its Clopper-Pearson 95 % interval."""
    ci = stats.binomtest(k, n).proportion_ci(0.95)
    return f"{100 * k / n:5.1f} % [{100 * ci.low:4.1f}, {100 * ci.high:5.1f}] ({k}/{n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cv", type=float, default=0.02)
    parser.add_argument("--step", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=2026)
    a = parser.parse_args()
    rng = np.random.default_rng(a.seed)
    start = time.time()
    false = {"session level": 0, "runs only": 0}
    flags = {"session level": 0, "runs only": 0}
    caught = {"session level": 0, "runs only": 0}
    rules = {"session level": session_rule, "runs only": runs_rule}
    for _ in range(a.histories):
        null = history(rng, a.sessions, a.runs, a.cv, None, 0.0)
        at = int(rng.integers(8, a.sessions - 7))
        stepped = history(rng, a.sessions, a.runs, a.cv, at, a.step)
        for name, rule in rules.items():
            flagged = rule(null)
            false[name] += bool(flagged)
            flags[name] += len(flagged)
            caught[name] += bool(rule(stepped) & {at - 1, at, at + 1})
    n = a.histories
    print(f"{n} histories of {a.sessions} sessions x {a.runs} runs, CV {100 * a.cv:g} %, "
          f"session offsets SD 0.5-1 %; step {100 * a.step:g} % ({time.time() - start:.0f} s)")
    print(f"{'rule':<14}  {'histories with a false regression':<34}  {'false flags':>11}  "
          f"detected {100 * a.step:g} % step")
    for name in rules:
        print(f"{name:<14}  {rate(false[name], n):<34}  {flags[name] / n:>11.2f}  "
              f"{rate(caught[name], n)}")


if __name__ == "__main__":
    main()
