"""The verdict of a set of commands, as data: one comparison that every output renders.

:func:`verdict_model` turns named series (e.g. wall times in ns) into a frozen :class:`Verdict`:
the baseline and the rule that chose it, and per candidate the ratio with its interval, the
test's p (raw and Holm-adjusted), the outcome and, when undecided, the runs that would decide.
``benchlab run``, ``show``, ``compare``, ``report``, the exports and bundles render this one
object (words: :mod:`benchlab.report.verdict_text`), so they cannot disagree. The schema of
:meth:`Verdict.to_dict` is ``docs/verdict.md`` / ``docs/verdict.schema.json``.

Rules (each numbered rule is tested in ``tests/stats/test_verdict_model.py``):

1. **Baseline** (:func:`choose_baseline`): ``reference`` if given, else the first command with
   ``sort="command"``, else the fastest by the Hodges-Lehmann ratio against the command with
   the smallest median (:func:`benchlab.stats.verdict_pair.fastest_by_ratio`). A fixed baseline (the first
   two rules) makes a family of k - 1 comparisons; the fastest, chosen by looking at the data,
   makes the family all k (k - 1) / 2 pairs, so the chance of any false claim stays <= alpha
   whichever command the data made fastest (with k - 1 only, 5 identical commands at n = 50
   gave 7.2 % false claims at alpha 5 %).
2. **Statistic** (:mod:`benchlab.stats.verdict_pair`): the Hodges-Lehmann ratio (median of the
   pairwise ratios) with the interval that inverts the Mann-Whitney test at Holm's level for
   that comparison (alpha / (family - step + 1)), so "faster" / "slower" is said only when the
   shown interval excludes 1 and the Holm-adjusted p is below alpha, in the interval's
   direction.
3. **Attainable minimum**: with n_a and n_b runs the exact test cannot go below
   2 / C(n_a + n_b, n_a); when that times the family size is >= alpha no outcome can decide,
   the outcome is "undecided" with reason "too_few_runs" and ``attainable_min_n`` says the
   fewest runs per command that could (3 vs 3: 0.1; 4 vs 4: 0.029, 0.057 over two comparisons).
4. **Equivalent within +-margin**: the (1 - 2 alpha / m) interval of the ratio lies inside
   (1 / (1 + margin), 1 + margin): TOST at alpha, Bonferroni over the m candidates.
5. **Runs to decide** (undecided only, same statistic as the stated difference): the interval's
   half-width shrinks as 1 / sqrt(n); with the observed log ratio d held where it is, a test at
   alpha / family with ``power`` needs n ((z_a + z_power) se / |d|)^2 runs; when |d| is below the
   margin the plan is for equivalence within the margin if there is no difference,
   n ((z_(1-alpha/m) + z_((1+power)/2)) se / log(1 + margin))^2, which is also stated beside a
   difference plan (``runs_to_equivalence``: "if there is none"). Never below the attainable
   minimum.

Long because: the verdict's steps (baseline, family, dependence, each candidate's statistic,
outcome and plan) are read in order, each beside the rule above that it implements.

References
----------
Holm, S. (1979). *Scand. J. Statist.* 6, 65-70. Schuirmann, D. J. (1987). *J. Pharmacokinet.
Biopharm.* 15, 657-680 (TOST). Hollander, Wolfe and Chicken (2014), *Nonparametric Statistical
Methods*, 3rd ed., 4.1-4.3.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.descriptive import as_sample, median
from benchlab.stats.verdict_pair import (
    DEPENDENCE_MIN_RUNS,
    MIN_RUNS_DEPENDENCE,
    PairStatistic,
    as_ratio,
    attainable_min_runs,
    attainable_p,
    clock_grid,
    fastest_by_ratio,
    grid_step,
    pair_p_value,
    pair_statistic,
    robust_to_dependence,
    scale_of,
    select_pair_statistics,
    series_dependence,
    session_dependence,
    wald_df,
)
from benchlab.stats.verdict_types import (  # noqa: F401  (public here: the verdict's types)
    BASELINE_RULES,
    OUTCOMES,
    SCHEMA,
    CandidateVerdict,
    Note,
    Verdict,
)

#: Beyond this many runs per command a "runs to decide" is not stated.
MAX_RUNS_STATED = 10**7


def choose_baseline(medians: Mapping[str, float], *, reference: str | None = None,
                    sort: str = "auto") -> tuple[str, str]:
    """The baseline's name and rule: ``reference``, else the first with ``sort="command"``,
    else the smallest median (ties: the first of them). ``medians`` in command order."""
    names = list(medians)
    if not names:
        raise UserError("no series to compare; measure two or more commands")
    if reference is not None:
        if reference not in medians:
            raise UserError(f"reference {reference!r} is not one of the series "
                            f"({', '.join(map(repr, names))}); pick one of them")
        return reference, "reference"
    if sort == "command":
        return names[0], "first"
    return min(names, key=lambda k: medians[k]), "fastest"


def _baseline(data: dict[str, np.ndarray], medians: dict[str, float], baseline: str | None,
              reference: str | None, sort: str) -> tuple[str, str]:
    """The baseline and its rule (given, or :func:`choose_baseline` and :func:`fastest_by_ratio`)."""
    if baseline is not None:
        if baseline not in data:
            raise UserError(f"baseline {baseline!r} is not one of the series "
                            f"({', '.join(map(repr, data))}); pick one of them")
        return baseline, "given"
    base, rule = choose_baseline(medians, reference=reference, sort=sort)
    return (fastest_by_ratio(data, base) if rule == "fastest" else base), rule


def _holm_levels(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted p-values and each hypothesis's step level alpha / (m - step + 1), the
    level of the first non-rejected step for every hypothesis from there on."""
    from benchlab.stats.multiple import holm

    m = p.size
    order = np.argsort(p, kind="stable")
    levels = np.empty(m)
    stopped = None
    for step, i in enumerate(order):
        level = alpha / (m - step)
        if stopped is None and not p[i] < level:
            stopped = level
        levels[i] = level if stopped is None else stopped
    return holm(p), levels


def _z(q: float) -> float:
    # The standard library's normal quantile (AS 241, ~1e-16 relative, as scipy's ndtri): the
    # plan's z values without importing scipy.special (~0.15 s of every `benchlab show`).
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def _square(x: float) -> float:
    """x * x, inf beyond floats (``x ** 2`` raises OverflowError there: values near 1e300)."""
    return x * x


def _plan(st: PairStatistic, n: int, alpha_plan: float, alpha_eq: float, margin_scale: float,
          power: float, floor: int) -> tuple[int | None, str, float, int | None]:
    """(runs per command, "difference" | "equivalence", effect on the test's scale, runs per
    command to show equivalence if there is no difference)."""
    z_level = _z(1 - (1 - st.level) / 2) if st.level < 1 else math.inf
    se = (st.high - st.low) / (2 * z_level) if math.isfinite(z_level) and z_level > 0 else 0.0
    d = abs(st.estimate)

    def runs(target: float) -> int | None:
        return max(math.ceil(target), floor, n + 1) if target < MAX_RUNS_STATED else None

    if se <= 0:
        return None, "", d, None
    eq_runs = None
    if margin_scale > 0:
        eq_runs = runs(n * _square((_z(1 - alpha_eq) + _z((1 + power) / 2)) * se / margin_scale))
    if margin_scale > 0 and d < margin_scale:
        return eq_runs, "equivalence", margin_scale, eq_runs
    if d > 0:
        return (runs(n * _square((_z(1 - alpha_plan / 2) + _z(power)) * se / d)), "difference",
                d, eq_runs)
    return None, "", d, eq_runs


def verdict_model(
    series: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    baseline: str | None = None,
    reference: str | None = None,
    sort: str = "auto",
    metric: str = "wall",
    unit: str = "ns",
    confidence_level: float = 0.95,
    equivalence_margin: float = 0.01,
    equivalence_margin_abs: float | None = None,
    power: float = 0.5,
    jaybeams_compatible: bool = False,
) -> Verdict:
    """Decide every series against one baseline: faster, slower, equivalent or undecided.

    Parameters
    ----------
    series : mapping or sequence of (name, array_like)
        Two or more series in command order, values in ``unit`` (e.g. wall times in ns) in run
        order (the order matters for the autocorrelation check). At least 1 finite value each;
        fewer than 3 gives "too_few_runs", never an error.
    baseline : str, optional
        An explicit baseline (``benchlab compare --baseline``): rule "given", a fixed baseline.
    reference, sort : str
        hyperfine's ``--reference`` and ``--sort`` (see :func:`choose_baseline`), used when
        ``baseline`` is None.
    metric, unit : str
        Carried into the result for the words and the JSON.
    confidence_level : float
        1 - alpha, the family-wise error rate of the claims.
    equivalence_margin : float
        Relative margin of equivalence (0.01 = 1 %), > 0.
    equivalence_margin_abs : float, optional
        The margin in ``unit`` instead (``--min-effect 5ns``), > 0; needed where the
        baseline's median is 0.
    power : float
        Power of the "runs to decide" plan. 0.5 (the runs at which the observed difference
        would just decide): redrawn at the stated n, the plan decides in about 65-88 % of
        cases with a real 3 % difference (bench/verdict_calibration.py); 0.6 gave 86-93 % on
        independent runs and 0.8 85-96 %, above the 50-90 % goal: a pilot left undecided
        tends to have seen less than the true difference, so its plan over-asks.
    jaybeams_compatible : bool
        The JayBeams fixed max |ACF| >= 0.05 autocorrelation rule.

    Returns
    -------
    Verdict

    Raises
    ------
    UserError
        Fewer than two series, a baseline that is not one of them, a level outside (0, 1), a
        margin <= 0, or a series that is empty or holds NaN/inf.
    """
    if not (0 < confidence_level < 1 and 0 < power < 1 and equivalence_margin > 0):
        raise UserError("confidence_level and power lie in (0, 1) and the equivalence margin "
                        "is > 0; e.g. 0.95, 0.5, 0.01")
    data = _series_data(series)
    medians = {k: median(v) for k, v in data.items()}
    base, rule = _baseline(data, medians, baseline, reference, sort)
    alpha = 1 - confidence_level
    cands = [k for k in data if k != base]
    pairs = _family_pairs(list(data), base, rule)
    family = len(pairs)
    infl, notes = _dependence(data, jaybeams_compatible)
    p_adj, levels = _holm_levels(_pair_p_values(data, pairs, infl), alpha)
    index = {frozenset(pr): i for i, pr in enumerate(pairs)}
    min_n = attainable_min_runs(alpha, family)
    if equivalence_margin_abs is not None and not equivalence_margin_abs > 0:
        raise UserError("the equivalence margin must be > 0; e.g. --min-effect 1us")
    margin = (equivalence_margin, equivalence_margin_abs)
    at = {k: index[frozenset((k, base))] for k in cands}
    out = [_candidate(k, data[k], data[base], alpha, family, len(cands), margin, power, min_n,
                      levels[at[k]], float(p_adj[at[k]]), max(infl[k], infl[base]),
                      (medians[k], medians[base])) for k in cands]
    return Verdict(base, rule, metric, unit, float(confidence_level), float(alpha),
                   "holm" if family > 1 else "none", family, float(equivalence_margin),
                   float(power), min_n, tuple(out), notes,
                   None if equivalence_margin_abs is None else float(equivalence_margin_abs))


def _series_data(series: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> dict[str, np.ndarray]:
    """The named series as checked arrays, in command order (two or more, distinct names)."""
    items = list(series.items()) if isinstance(series, Mapping) else list(series)
    if len(items) < 2:
        raise UserError("a verdict needs two or more series; measure at least two commands")
    data = {str(k): as_sample(v, name=f"series {k!r}", min_n=1) for k, v in items}
    if len(data) != len(items):
        raise UserError("two series have the same name; give them distinct names")
    return data


def _pair_p_values(data: dict[str, np.ndarray], pairs: list[tuple[str, str]],
                   infl: dict[str, float]) -> np.ndarray:
    """Each pair's p-value (:func:`pair_p_value`, widened by the larger of the two series'
    inflations); 1 where a series has fewer than 3 runs."""
    return np.array([pair_p_value(data[a], data[b], max(infl[a], infl[b]))[0]
                     if min(data[a].size, data[b].size) >= 3 else 1.0 for a, b in pairs])


def _family_pairs(names: list[str], base: str, rule: str) -> list[tuple[str, str]]:
    """The comparisons Holm's procedure runs over: every pair when the baseline is the fastest
    (chosen by looking at the data), else each candidate against the fixed baseline."""
    if rule == "fastest":
        return [(i, j) for ai, i in enumerate(names) for j in names[ai + 1:]]
    return [(k, base) for k in names if k != base]


def pair_inflation(a: np.ndarray, b: np.ndarray) -> float:
    """The variance inflation :func:`verdict_model` widens a against b by (1: not widened), for
    ``run --until-decided``'s looks: they count dependent runs as the fixed-n verdict does."""
    infl, _ = _dependence({"a": a, "b": b}, False)
    return max(infl["a"], infl["b"])


def _dependence(data: dict[str, np.ndarray],
                jaybeams_compatible: bool) -> tuple[dict[str, float], tuple[Note, ...]]:
    """Each series' variance inflation (the larger of its own and the session's pooled one)
    and the autocorrelation notes."""
    grids = {k: clock_grid(v) for k, v in data.items()  # once per series, used twice
             if v.size >= MIN_RUNS_DEPENDENCE and v.min() < v.max()}
    deps = {k: series_dependence(v, jaybeams_compatible=jaybeams_compatible, family=len(data),
                                 grid=grids.get(k)) for k, v in data.items()}
    pooled = session_dependence([] if jaybeams_compatible else list(data.values()),
                                [grids.get(k) for k in data])
    infl = {k: max(d.inflation, pooled.inflation(d.n)) for k, d in deps.items()}
    if not jaybeams_compatible:
        infl.update(unresolved_inflation(data))
    notes = tuple(Note("autocorrelated", {"series": k, "n": d.n, "effective_n": d.effective_n,
                                          "ljung_box_p": d.ljung_box_p,
                                          "max_abs_acf": d.max_abs_acf, "lag1": d.lag1})
                  for k, d in deps.items() if d.flagged)
    if pooled.flagged and not any(d.flagged for d in deps.values()):
        notes += (Note("session_autocorrelated", {"lag1": pooled.lag1, "n": pooled.n_total,
                                                  "series": pooled.series}),)
    return infl, notes


def unresolved_inflation(data: dict[str, np.ndarray]) -> dict[str, float]:
    """The inflation of each series of :data:`MIN_RUNS_DEPENDENCE` runs or more that reads one
    value throughout beside a series that varies on the same clock grid: n, the runs count as
    one.

    Its variation lies below the clock's resolution, so its drift is not resolved at all (as
    when s^2 <= h^2 / 12, :func:`benchlab.stats.verdict_pair.latent_lag1`), while the other
    series shows that the commands' runs do cross a tick. Unwidened, such a constant series
    against one that reads 1000 and 1001 ticks was called different on a one-tick drift: a
    third of the false claims among two identical commands of 12 runs drifting on a 1 µs grid
    (bench/verdict_calibration.py, "griddrift"). The Wald test then has the grid's floor
    (:func:`benchlab.stats.verdict_pair.grid_se`) as its standard error: a 2x difference
    still decides."""
    constant = {k: float(v.size) for k, v in data.items()
                if v.size >= MIN_RUNS_DEPENDENCE and v.min() == v.max()}
    if (not constant or all(v.min() == v.max() for v in data.values())
            or grid_step(*data.values()) <= 0):
        return {}  # the grid (~18 ms of CPU for 2 x 500,000 values) only when it decides
    return constant


def _outcome(st: PairStatistic, notes: list[Note], p_adj: float, alpha: float, inside: bool,
             margin: float) -> tuple[str, str]:
    """(outcome, reason) of one comparison from its test (Holm-adjusted ``p_adj`` against
    ``alpha``) and its equivalence interval (``inside`` the margin); notes appended."""
    rejects = p_adj < alpha
    if st.method == "constant":
        notes.append(Note("identical"))
        return "equivalent", "identical"
    if any(n.code == "too_few_runs" for n in notes):
        return "undecided", "too_few_runs"
    if rejects and st.excludes_no_change:
        if st.low_open or st.high_open:
            notes.append(Note("open_end"))
        if inside:
            notes.append(Note("within_margin", {"margin": margin}))
        return ("faster" if (st.high < 0 or (st.high == 0 and st.high_open)) else "slower",
                "significant")
    if inside:
        return "equivalent", "inside_margin"
    if rejects:
        notes.append(Note("test_interval_disagree", {"p_adjusted": p_adj}))
    return "undecided", "not_significant"


def _candidate(name: str, a: np.ndarray, b: np.ndarray, alpha: float, family: int, m: int,
               margins: tuple[float, float | None], power: float, min_n: int, level_alpha: float, p_adj: float,
               inflation: float, medians: tuple[float, float]) -> CandidateVerdict:
    med_a, med_b = medians  # of a and b, taken once by the verdict (a partition each)
    n_have = min(a.size, b.size)
    scale = scale_of(a, b)
    notes: list[Note] = []
    if scale == "shift":
        notes.append(Note("shift_scale"))
    base = dict(name=name, n=int(a.size), median=med_a, n_baseline=int(b.size),
                median_baseline=med_b, scale=scale)
    floor_p = attainable_p(int(a.size), int(b.size)) * family
    if n_have < 3 or floor_p >= alpha:
        notes.append(Note("too_few_runs", {"n": int(n_have), "attainable_min_n": min_n,
                                           "family": family, "attainable_p": floor_p}))
    if n_have < 3:
        ratio = (med_a / med_b if scale == "ratio" else as_ratio(med_a - med_b, scale, med_b))
        return CandidateVerdict(**base, ratio=ratio, ratio_low=None, ratio_high=None,
                                shift=None, shift_low=None, shift_high=None, low_open=False,
                                high_open=False, interval_level=None, p_value=1.0, p_adjusted=1.0,
                                test="none", outcome="undecided", reason="too_few_runs",
                                equivalence_low=None, equivalence_high=None,
                                runs_to_decide=min_n, additional_runs=max(min_n - n_have, 0),
                                plan="", plan_effect=None, notes=tuple(notes))
    eq_alpha = alpha / max(m, 1)
    select_pair_statistics(a, b, [1 - level_alpha, 1 - 2 * eq_alpha], scale, inflation)
    st = pair_statistic(a, b, level=1 - level_alpha, scale=scale, inflation=inflation)
    if st.inflation > 1:  # say what the interval was widened by (and its t's df)
        notes.append(Note("widened", {"inflation": st.inflation, "df": (
            wald_df(int(a.size), int(b.size), st.inflation) if st.method == "inflated" else None)}))
    eq = pair_statistic(a, b, level=1 - 2 * eq_alpha, scale=scale, inflation=inflation)
    margin, margin_abs = margins
    if margin_abs is not None:  # a margin in the series' unit
        margin_scale = (margin_abs if scale == "shift" else
                        math.log1p(margin_abs / abs(med_b)) if med_b else 0.0)
    else:
        margin_scale = math.log1p(margin) if scale == "ratio" else margin * abs(med_b)

    def r(v: float) -> float | None:
        return as_ratio(v, scale, med_b)

    inside = margin_scale > 0 and -margin_scale < eq.low and eq.high < margin_scale
    outcome, reason = _outcome(st, notes, p_adj, alpha, inside, margin)
    if reason == "significant" and not robust_to_dependence(a, b, st, 1 - level_alpha):
        outcome, reason = "undecided", "dependence_unresolved"
    needed = additional = eq_runs = None
    plan, effect = "", None
    if reason == "dependence_unresolved":
        needed, plan = max(DEPENDENCE_MIN_RUNS, n_have + 1), "dependence"
        additional = needed - n_have
    elif outcome == "undecided":
        needed, plan, eff, eq_runs = _plan(st, n_have, alpha / family, eq_alpha, margin_scale, power,
                                  min_n)
        effect = (math.expm1(eff) if scale == "ratio" else
                  (eff / abs(med_b) if med_b else None)) if plan else None
        if needed is not None:
            additional = needed - n_have
    if scale == "shift" and med_b <= 0:
        notes.append(Note("no_ratio"))
    return CandidateVerdict(
        **base, ratio=r(st.estimate), ratio_low=r(st.low), ratio_high=r(st.high),
        shift=st.estimate if scale == "shift" else None,
        shift_low=st.low if scale == "shift" else None,
        shift_high=st.high if scale == "shift" else None,
        low_open=st.low_open, high_open=st.high_open, interval_level=st.level,
        p_value=st.p_value, p_adjusted=float(p_adj), test=st.method, outcome=outcome,
        reason=reason, equivalence_low=r(eq.low), equivalence_high=r(eq.high),
        runs_to_decide=needed, additional_runs=additional, plan=plan, plan_effect=effect,
        runs_to_equivalence=eq_runs,
        notes=tuple(notes))
