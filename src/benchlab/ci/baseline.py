"""Gating against a stored baseline: find it, learn each benchmark's session-to-session noise
from its history, refuse a comparison across machines, and decide.

A fresh run (or a stored session) is compared with a baseline session by benchmark name. The
two were measured in different sessions, maybe days apart, so the difference between them has
two sources: the runs within each session, and the offset every session gets as a whole (a
reboot, another placement, a different frequency state: 0.5-1 % on real machines). A test that
counts only the runs (as if the sessions shared one offset) calls those offsets regressions.

Following Kalibera & Jones (2013), the offsets are a random effect: from the baseline's history
(the sessions of the same branch, or the same name, that measured the benchmark) the between-
session variance of the log medians is estimated as their variance minus the part the runs
explain (the one-way random-effects ANOVA estimator, floored at 0), and the decision's interval
of log(candidate/baseline) is widened by it: half-width z sqrt(se_runs^2 + 2 sigma_s^2) (each
side carries one session offset). With fewer than :data:`MIN_HISTORY` sessions of history the
offset is unknown and :data:`PRIOR_SESSION_SD` (0.5 %) is assumed, which the result notes.

Selectors: a session uid (or prefix), id or name (the newest of that name), or
``branch:NAME``: the newest complete session recorded as the baseline of branch NAME
(``benchlab gate --record NAME``, stored in the session's metadata as ``gate.branch``).

References
----------
Kalibera, T. and Jones, R. (2013). Rigorous benchmarking in reasonable time. *ISMM '13*, 63-74.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from benchlab.ci.gate import GateDecision
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.errors import UserError
from benchlab.store.db import Store

#: Sessions of history needed to estimate the between-session variance.
MIN_HISTORY = 3
#: The session-offset SD (log scale, 0.005 = 0.5 %) assumed without enough history.
PRIOR_SESSION_SD = 0.005
#: Most sessions of history read.
MAX_HISTORY = 30


def branch_of(session: dict[str, Any]) -> str | None:
    """The branch a session was recorded as the baseline of, or None."""
    meta = session.get("metadata") or {}
    gate = meta.get("gate") if isinstance(meta, dict) else None
    return gate.get("branch") if isinstance(gate, dict) else None


def find_baseline(store: Store, selector: str, exclude: tuple[int, ...] = ()) -> dict[str, Any]:
    """The baseline session named by ``selector`` (see the module docstring), with its
    environment; one-line UserError when there is none. ``exclude``: session ids that are not
    candidates (the fresh run itself)."""
    if selector.startswith("branch:"):
        branch = selector.removeprefix("branch:")
        for sess in store.sessions():
            if branch_of(sess) == branch and sess["status"] == "complete" \
                    and sess["id"] not in exclude:
                return store.get_session(sess["uid"])
        raise UserError(f"no baseline of branch {branch!r} in the store; record one on that "
                        f"branch with: benchlab gate --record {branch} COMMANDS")
    return store.get_session(selector)


def history(store: Store, baseline: dict[str, Any], limit: int = MAX_HISTORY) -> list[dict]:
    """The baseline and the complete sessions like it (same branch, else same name), newest
    first: the sessions whose spread teaches the noise between sessions."""
    branch, name = branch_of(baseline), baseline.get("name")
    out = []
    for sess in store.sessions():
        if sess["status"] != "complete" or sess["id"] > baseline["id"]:
            continue
        if (branch and branch_of(sess) == branch) or (not branch and name
                                                       and sess.get("name") == name):
            out.append(sess)
        if len(out) >= limit:
            break
    if not any(s["id"] == baseline["id"] for s in out):
        out.insert(0, baseline)
    return out


def values_of(store: Store, session_id: int, benchmark: str, metric: str) -> np.ndarray:
    """The values of benchmark ``benchmark`` in a session (ns, counts, or a program-reported
    metric's value per run: the median of the run's samples); empty if absent."""
    for bench in store.benchmarks(session_id):
        if bench["name"] == benchmark:
            if metric in ("wall", "cpu"):
                return store.harness_values(bench["id"], metric)[0]
            values, runs = store.sample_values(bench["id"], metric)
            if metric == "instructions" or values.size == 0 or np.unique(runs).size == runs.size:
                return values
            # several samples per run: one value per run (their median), in run order
            order = np.unique(runs, return_index=True)[1]
            return np.array([float(np.median(values[runs == r])) for r in runs[np.sort(order)]])
    return np.array([])


def measuring_seconds(store: Store, session: dict[str, Any]) -> dict[str, float]:
    """Each benchmark's measuring time in a session (s): the sum of its measured runs' wall
    times (what a JUnit test case's ``time`` reports)."""
    out = {}
    for bench in store.benchmarks(session["id"]):
        wall = store.harness_values(bench["id"], "wall")[0]
        out[bench["name"]] = round(float(np.nansum(wall)) / 1e9, 3)
    return out


def _metric_names(store: Store, session_id: int, benchmark: str) -> list[str]:
    """The metrics a session has values of for ``benchmark`` (for the one-line refusal)."""
    names = [m for m in ("wall", "cpu") if values_of(store, session_id, benchmark, m).size]
    return names + [m["name"] for m in store.metrics(session_id) if m["name"] not in names]


def _require_values(store: Store, session: dict[str, Any], role: str, benchmark: str,
                    metric: str, values: np.ndarray) -> None:
    """One-line UserError (exit 2) when ``session`` holds no value of ``metric``: a gate with
    nothing on one side would pass in silence."""
    if values.size:
        return
    have = ", ".join(_metric_names(store, session["id"], benchmark)) or "none"
    raise UserError(f"{benchmark}: the {role} {session['uid']} has no {metric} values "
                    f"(it has: {have}); gate on a metric both sessions have (--metric NAME)")


@dataclass(frozen=True)
class SessionNoise:
    """Between-session SD of one benchmark (log scale) and the sessions it came from."""

    sd: float
    sessions: int
    learned: bool


def session_noise(store: Store, sessions: list[dict], benchmark: str, metric: str
                  ) -> SessionNoise:
    """Kalibera & Jones' between-session SD of the log medians of ``benchmark`` over
    ``sessions`` (the prior when fewer than MIN_HISTORY measured it)."""
    medians, within = [], []
    for sess in sessions:
        vals = values_of(store, sess["id"], benchmark, metric)
        vals = vals[np.isfinite(vals) & (vals > 0)]
        if vals.size >= 3:
            logs = np.log(vals)
            medians.append(float(np.median(logs)))
            # the variance of a median: pi/2 times the mean's, from a robust SD (MAD)
            mad = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
            within.append(math.pi / 2 * mad ** 2 / vals.size)
    if len(medians) < MIN_HISTORY:  # counts of a deterministic program have no offsets
        prior = 0.0 if metric == "instructions" else PRIOR_SESSION_SD
        return SessionNoise(prior, len(medians), False)
    between = float(np.var(medians, ddof=1)) - float(np.mean(within))
    return SessionNoise(math.sqrt(max(between, 0.0)), len(medians), True)


#: Units of a time or a rate: what contention stretches, however coarsely it is printed.
TIME_UNITS = ("ns", "us", "µs", "ms", "s", "sec", "min", "h")


def exact_counts(metric: str, unit: str | None, base_values: np.ndarray,
                 cand_values: np.ndarray) -> bool:
    """True for values no contention moves: instruction counts, or a count (not a time or a
    rate by its unit) that read the same value in every run on each side, at least two runs
    each: a program's loops per operation, its allocations, a byte count."""
    from benchlab.units import higher_is_better

    if metric == "instructions":
        return True
    text = (unit or "").strip().lower()
    if metric in ("wall", "cpu") or higher_is_better(unit) or text.split("/")[0] in TIME_UNITS:
        return False
    return all(v.size >= 2 and float(np.min(v)) == float(np.max(v))
               for v in (base_values, cand_values))


#: Environment fields that must match for a gate across sessions (dotted paths).
MACHINE_FIELDS = ("cpu.model", "cpu.logical_cores", "os.kernel.release")


def _get(env: Any, path: str) -> Any:
    node = env
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def machine_of(session: dict[str, Any]) -> dict[str, Any]:
    """The fields that decide whether two sessions ran on comparable machines: CPU model,
    logical CPUs, kernel release, and the CPU quota the plan set (us per period)."""
    env = session.get("environment") or {}
    out = {path: _get(env, path) for path in MACHINE_FIELDS}
    placement = (session.get("protocol") or {}).get("placement") or {}
    out["cpu quota"] = placement.get("cpu_quota_us")
    return out


def refuse_other_machine(baseline: dict[str, Any], candidate: dict[str, Any]) -> None:
    """One-line UserError when the two sessions' machines differ (see :func:`machine_of`)."""
    a, b = machine_of(baseline), machine_of(candidate)
    differ = [f"{k}: {a[k]!r} vs {b[k]!r}" for k in a if a[k] != b[k]]
    if differ:
        raise UserError(f"the baseline {baseline['uid']} ran on another machine "
                        f"({'; '.join(differ)}); gate on the machine the baseline was recorded "
                        f"on, record a baseline here, or pass --force")


def gate_sessions(store: Store, baseline: dict[str, Any], candidate: dict[str, Any],
                  thresholds: dict[str, dict[str, float]], metrics: dict[str, list[str]],
                  alpha: float, better: dict[str, str] | None = None
                  ) -> tuple[list[GateDecision], list[str]]:
    """Decide every benchmark of ``candidate`` that the baseline has too.

    ``thresholds[name][metric]`` and ``metrics[name]`` are the benchmark's (missing names: the
    defaults and wall time); ``better[metric]`` a metric's direction (default: from its unit).
    Returns the decisions and notes (benchmarks missing from the baseline, noise learned or
    assumed, imported series). One-line UserError when a metric has no values on one side.
    """
    from benchlab.ci.contention import beyond_history
    from benchlab.ci.gate import UNDECIDED, decide_oriented, default_threshold
    from benchlab.ci.reported import direction_of

    better = better or {}
    contended: dict[str, str | None] = {}
    past = history(store, baseline)
    notes: list[str] = [f"{role} {s['uid']} is imported ({s['source']}): its values gate as an "
                        f"unpaired series, widened by the between-session variance"
                        for role, s in (("baseline", baseline), ("candidate", candidate))
                        if s.get("source")]
    decisions: list[GateDecision] = []
    base_names = {b["name"] for b in store.benchmarks(baseline["id"])}
    for bench in store.benchmarks(candidate["id"]):
        name = bench["name"]
        if name not in base_names:
            notes.append(f"{name}: not in the baseline {baseline['uid']}, not gated")
            continue
        for metric in metrics.get(name, ["wall"]):
            base_values = values_of(store, baseline["id"], name, metric)
            cand_values = values_of(store, candidate["id"], name, metric)
            _require_values(store, baseline, "baseline", name, metric, base_values)
            _require_values(store, candidate, "candidate", name, metric, cand_values)
            noise = session_noise(store, past, name, metric)
            threshold = thresholds.get(name, {}).get(metric, default_threshold(metric))
            unit = store.metric_unit(candidate["id"], metric)
            decision = decide_oriented(
                base_values, cand_values, benchmark=name, metric=metric, threshold=threshold,
                alpha=alpha, session_sd=noise.sd, unit=unit,
                direction=better.get(metric, direction_of(unit)))
            why = None if exact_counts(metric, unit, base_values, cand_values) else \
                contended.setdefault(name, beyond_history(store, past, candidate, name))
            if why:
                decision = replace(decision, outcome=UNDECIDED, reason="contention beyond the "
                                   "baseline's history")
                notes.append(f"{name} ({metric}): not decided: the fresh session ran under more "
                             f"contention than the baseline's history covers ({why}); benchlab "
                             f"ab pairs the runs of both revisions and is immune to it")
            decisions.append(decision)
            how = (f"learned from {noise.sessions} sessions" if noise.learned else
                   f"assumed: {noise.sessions} of {MIN_HISTORY} sessions of history")
            notes.append(f"{name} ({metric}): between-session SD {100 * noise.sd:.2f} % ({how})")
    if not decisions:
        raise UserError(f"no benchmark of session {candidate['uid']} is in the baseline "
                        f"{baseline['uid']} ({', '.join(sorted(base_names)) or 'none'}); give "
                        f"the same benchmark names")
    return decisions, notes


def fresh_plan(benches: Sequence[Any], runs: int, warmup: int, count: str | None,
               timeout_s: float | None, root: str = ".", shell: str | None = "sh") -> RunPlan:
    """The plan of a fresh run to gate: every benchmark (an ``AbBenchmark``) ``runs`` times
    interleaved after ``warmup`` runs, ``{root}`` replaced by ``root`` (quoted; ``.`` for
    ``gate``, the head revision's tree for ``ab --baseline``); instructions counted when any
    benchmark gates on them or ``count`` asks; ``timeout_s`` per run (s); ``shell`` as run's
    ``-S`` (None: no shell)."""
    from benchlab.ci.ab_plan import effective_shell, plan_metrics

    where = root if root == "." else shlex.quote(root)
    specs = [BenchmarkSpec(name=b.name, command=b.command.replace("{root}", where))
             for b in benches]
    return RunPlan(benchmarks=specs, runs=runs, warmup=warmup, order="interleaved",
        timeout_s=timeout_s, metrics=plan_metrics(benches),
        shell=effective_shell([s.command for s in specs], shell), count="instructions" if any(
            "instructions" in b.metrics for b in benches) or count else None)


def run_fresh(store: Store, plan: RunPlan, *, argv: Sequence[str], name: str | None,
              on_start: Callable | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """Execute ``plan`` as a normal session: (the session with its environment, None), or
    (None, the failure line) when a benchmark failed once the session existed (exit 3); bad
    input raises UserError before anything is stored."""
    from benchlab.ci.contention import sample, summarise
    from benchlab.core.execute import execute
    from benchlab.core.session_types import RunFailed

    before = sample()
    try:
        result = execute(plan, store, argv=argv, name=name, on_start=on_start)
    except RunFailed as exc:
        return None, str(exc)
    from benchlab.store import session_metadata

    # what the runs ran beside, for a later gate against this session
    session_metadata.merge(store, result.session.uid, contention=summarise(before, sample()))
    return store.get_session(result.session.uid), None


def gate_against(store: Store, baseline: dict[str, Any], candidate: dict[str, Any],
                 thresholds: dict[str, dict[str, float]], metrics: dict[str, list[str]],
                 alpha: float, force: bool = False, better: dict[str, str] | None = None
                 ) -> tuple[list[GateDecision], list[str]]:
    """:func:`gate_sessions` after the checks: not one session twice, and (unless ``force``)
    the same machine; one-line UserError otherwise."""
    if baseline["id"] == candidate["id"]:
        raise UserError(f"the baseline and the candidate are one session "
                        f"({candidate['uid']}); give another --baseline")
    if not force:
        refuse_other_machine(baseline, candidate)
    return gate_sessions(store, baseline, candidate, thresholds, metrics, alpha, better)


def session_revision(session: dict[str, Any]) -> dict[str, Any]:
    """A stored session as a gate report's revision: label, commit and dirty flag (from its
    git environment), subject, uid."""
    git = (session.get("environment") or {}).get("git") or {}
    commit = git.get("commit") if isinstance(git, dict) else None
    return {"label": session.get("name") or session["uid"],
            "commit": commit if isinstance(commit, str) else None,
            "subject": session.get("name") or "",
            "dirty": isinstance(git, dict) and git.get("dirty") is True,
            "session": session["uid"]}
