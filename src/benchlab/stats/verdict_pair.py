"""One candidate against its baseline: the numbers behind a verdict line, as data.

The statistic is the **Hodges-Lehmann ratio**: the median of all pairwise ratios
candidate_i / baseline_j, i.e. the Hodges-Lehmann shift of the logarithms, exponentiated. Its
interval inverts the Mann-Whitney test (Bauer 1972), so the word, the interval and the p-value
come from one statistic: the interval excludes 1 exactly when the test rejects (exact branch),
and on clock-grid ties, where the interval's end is a pairwise ratio of exactly 1, the test's
rejection makes that end open ("(1, 1.05]"), never "cannot tell". Mann-Whitney is invariant
under the logarithm (ranks do not change), so the p-value is R's ``wilcox.test`` on the raw
values. Series with a value <= 0 (corrected times clamped at 0, counts of 0) use the shift on
the raw values; the ratio is then 1 + shift / median(baseline), a monotone map of the same
interval.

Autocorrelated runs (the lag-1 autocorrelation standardised under independence, :func:`lag1_z`,
pooled over the session's series or of one series alone, above its one-sided level, or
Ljung-Box p below :data:`LJUNG_BOX_LEVEL`: levels that hold whatever n, unlike the JayBeams
fixed max |ACF| >= 0.05, which :func:`series_dependence` keeps for ``jaybeams_compatible``)
make every i.i.d. interval too narrow. The variance-inflation factor n / n_eff
(:attr:`Dependence.inflation`, at least the session's pooled one, :func:`session_dependence`,
whose estimate is k times steadier) widens the test: the rank test's z is divided by its
square root (Mann-Whitney itself at inflation 1, and ties are handled as Mann-Whitney handles
them), and where the two series do not overlap or the ranks cannot decide at all
(:func:`separated`), where ranks saturate, the
Wald test of the Hodges-Lehmann estimate with its standard error widened by that root against
a Student t (:func:`inflated_wald`, :func:`wald_df`), so the verdict counts the runs as about
n_eff independent ones and a 9x difference between 12 drifting runs still decides. On a
coarse clock grid, where most values tie, the i.i.d. interval has no width; the Wald standard
error then has a floor from the clock's resolution h (:func:`grid_se`: each value's rounding
error, variance h^2 / 12, Sheppard 1898), and the lag-1 autocorrelation is corrected for that
rounding, which adds to the variance and not to the autocovariance (:func:`latent_lag1`). The
t's degrees of freedom come from the AR(1) factor, not from the inflation that corrects the
sample variance too (:func:`wald_df`: that counted the dependence twice and left a 30x pair
of 10 runs "cannot tell"). Not shrinking the lag-1 estimate toward 0 (it lost AR(1) coverage:
0.886 at phi 0.6, n = 10) nor dropping a slow first run, which is the user's warm-up to
choose (Kalibera and Jones 2013); docs/verdict.md.

Long because: one comparison's rules (dependence, its corrections, the test and its interval)
are read together; each came from a recorded failure and is explained where it is applied.

References
----------
Bartlett, M. S. (1946). On the theoretical specification and sampling properties of
autocorrelated time-series. *JRSS Suppl.* 8, 27-41.
Bayley, G. V. and Hammersley, J. M. (1946). The "effective" number of independent observations
in an autocorrelated time series. *JRSS Suppl.* 8, 184-197.
Bauer, D. F. (1972). Constructing confidence sets using rank statistics. *JASA* 67, 687-690.
Ljung, G. M. and Box, G. E. P. (1978). *Biometrika* 65, 297-303.
Moran, P. A. P. (1948). Some theorems on time series II: the significance of the serial
correlation coefficient. *Biometrika* 35, 255-260.
Kalibera, T. and Jones, R. (2013). Rigorous benchmarking in reasonable time. *ISMM '13*, 63-74.
Sheppard, W. F. (1898). On the calculation of the most probable values of frequency-constants,
for data arranged according to equidistant division of a scale. *Proc. LMS* 29, 353-380.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchlab.stats.descriptive import median
from benchlab.stats.distributions import stdtr, stdtrit
from benchlab.stats.independence import JAYBEAMS_MAX_ACF, independence_and_acf, unit_scaled

#: Level of the Ljung-Box test that flags a series as autocorrelated, over the session's series
#: (Bonferroni): 1 % keeps false alarms on independent runs to about 1 in 100 sessions whatever
#: n (max |ACF| >= 0.05 fires on 97-100 % of independent series of up to 1000 runs, |r| being
#: about 1/sqrt(n)).
LJUNG_BOX_LEVEL = 0.01
#: One-sided level of the test of the lag-1 autocorrelation pooled over a session's series
#: (:func:`session_dependence`), series of :data:`SHORT_SERIES` runs or more: independent runs
#: are widened in about 1 session in 10. Chosen by simulation (bench/verdict_calibration.py,
#: two commands of 20 runs): at 5 % identical commands with AR(1) runs (phi 0.3) were called
#: different in 7.7 % of sets, at 10 % in 5.2 %; each point more costs independent runs about
#: half a point of power at a true 3 % (n = 20), since a widened pair of 20 runs seldom decides.
SESSION_EVIDENCE_LEVEL = 0.10
#: One-sided level of one series' own lag-1 test within a session, over its k series
#: (Bonferroni; 5 % for a series alone, as the analysis report checks it): it finds one command
#: that carries state from run to run when the others do not, where the pooled estimate is
#: diluted.
SERIES_EVIDENCE_LEVEL = 0.01
#: Below this many runs per series both lag-1 tests are at :data:`SHORT_EVIDENCE_LEVEL`: the
#: lag-1 estimate of 10-19 runs is too uncertain (standard deviation 0.21-0.27 on independent
#: runs) for a 5-10 % test to find AR(1) runs (phi 0.3-0.5 at n = 12: 8 % false claims among
#: two identical commands at 10 %, 5 % at 20 %).
SHORT_SERIES = 20
#: One-sided level of the lag-1 tests below :data:`SHORT_SERIES` runs (pooled, and one series
#: alone; a series within a session of k at this level over k).
SHORT_EVIDENCE_LEVEL = 0.20
#: The one-sided upper band of an AR(1) coefficient behind a widened decision of fewer than
#: :data:`DEPENDENCE_MIN_RUNS` runs (:func:`robust_to_dependence`), in standard errors.
SESSION_BAND_Z = 1.645


def lag1_null_sd(n: int) -> float:
    """Standard deviation of the lag-1 autocorrelation of ``n`` independent values,
    (n - 2) / (n sqrt(n - 1)) (Moran 1948; its mean is -1 / n): 0.251 at n = 12, 0.206 at 20,
    0.137 at 50 (1 / sqrt(n) overstates it at small n, and a band on the bias-corrected
    estimate, whose spread is (1 + 3 / n) / sqrt(n), flagged 7.6 % of independent pairs of 20
    runs at a nominal 5 %)."""
    return (n - 2) / (n * math.sqrt(n - 1)) if n > 2 else 1.0


def lag1_z(r1: float, n: int) -> float:
    """The lag-1 autocorrelation ``r1`` of ``n`` runs standardised under independence,
    (r1 + 1 / n) / :func:`lag1_null_sd`: about standard normal for independent runs of any
    usual distribution (checked by simulation on normal, bimodal and t(2) values; the last
    flags a little less often)."""
    return (r1 + 1.0 / n) / lag1_null_sd(n)


def evidence_level(n: int, family: int = 1) -> float:
    """One-sided level of one series' own lag-1 test (:func:`series_dependence`) for ``n``
    runs in a session of ``family`` series: :data:`SHORT_EVIDENCE_LEVEL` below
    :data:`SHORT_SERIES` runs, else 5 % alone and :data:`SERIES_EVIDENCE_LEVEL` within a
    session, divided by ``family``."""
    if n < SHORT_SERIES:
        return SHORT_EVIDENCE_LEVEL / max(family, 1)
    return 0.05 if family <= 1 else SERIES_EVIDENCE_LEVEL / family


#: The normal quantile of a lone series' own test from :data:`SHORT_SERIES` runs on (kept for
#: readers of the threshold, :func:`band_z`).
LAG1_BAND_Z = 1.6448536269514722


def band_z(n: int, z: float = LAG1_BAND_Z) -> float:
    """The lag-1 autocorrelation (in units of 1 / sqrt(n)) above which a lone series of ``n``
    runs counts as evidence of dependence: ``z`` standard errors of :func:`lag1_null_sd` above
    the mean -1 / n from :data:`SHORT_SERIES` runs on, the :data:`SHORT_EVIDENCE_LEVEL`
    quantile below."""
    q = z if n >= SHORT_SERIES else _ndtri(1 - SHORT_EVIDENCE_LEVEL)
    return (q * lag1_null_sd(n) - 1.0 / n) * math.sqrt(n)


#: Fewest runs for an autocorrelation check (Ljung-Box with n // 5 lags needs a few).
MIN_RUNS_DEPENDENCE = 10
#: Fewer runs than this cannot estimate their own dependence well enough to decide on a widened
#: test whose decision would not survive the upper end of that estimate
#: (:func:`robust_to_dependence`).
DEPENDENCE_MIN_RUNS = 30


@dataclass(frozen=True)
class Dependence:
    """Autocorrelation of one series: ``flagged`` (evidence of dependence) warns the reader and
    makes the verdict widen its interval by ``inflation``; ``adjusted`` is ``flagged`` (kept
    for readers of the field: the verdict widens exactly when it says so)."""

    n: int
    effective_n: float
    ljung_box_p: float | None
    max_abs_acf: float | None
    flagged: bool
    adjusted: bool = False
    #: lag-1 autocorrelation r1 (dimensionless; None: not checked): with Ljung-Box, what the
    #: flag rests on, so a warning can name it when Ljung-Box alone would not have flagged
    lag1: float | None = None

    @property
    def inflation(self) -> float:
        """Variance-inflation factor of the mean applied when ``adjusted`` (else 1): n / n_eff
        times (n - 1) / (n - n / n_eff), since the sample variance of autocorrelated runs
        underestimates their variance by that factor (Bayley and Hammersley 1946); at most n
        (the runs count as one)."""
        if not (self.adjusted or self.flagged) or self.effective_n <= 0:
            return 1.0
        return variance_inflation(self.n, self.n / self.effective_n)


def variance_inflation(n: int, vif: float) -> float:
    """The inflation of the estimate's variance for ``n`` runs whose mean's variance is
    ``vif`` times the i.i.d. one, with the sample variance's own bias under autocorrelation
    (E s^2 = sigma^2 (n - vif) / (n - 1)) corrected; between 1 and n."""
    if vif <= 1.0 or n < 2:
        return 1.0
    return float(min(vif * (n - 1) / max(n - vif, 1.0), n))


@dataclass(frozen=True)
class SessionDependence:
    """The lag-1 autocorrelation pooled over a session's series (runs measured one after
    another on one machine share its drift): ``lag1`` over ``n_total`` runs in ``series``
    series of about ``n`` runs each, ``vif`` the AR(1) variance inflation it implies;
    ``flagged`` (and ``adjusted``, the same) when the bias-corrected lag-1 is above its
    one-sided 95 % band 1.645 / sqrt(n_total)."""

    lag1: float
    n_total: int
    series: int
    vif: float
    adjusted: bool
    flagged: bool

    def inflation(self, n: int) -> float:
        """Inflation for one series of ``n`` runs (1 when not adjusted, or for a series too
        short to have been pooled)."""
        return (variance_inflation(n, self.vif) if self.adjusted and n >= MIN_RUNS_DEPENDENCE
                else 1.0)


def session_dependence(samples: list[np.ndarray],
                       grids: list[tuple[float, float] | None] | None = None
                       ) -> SessionDependence:
    """Pool the lag-1 autocorrelation of every series with :data:`MIN_RUNS_DEPENDENCE` runs or
    more (weighted by their runs) and test it against independence.

    One series' lag-1 estimate has a standard error of about 1 / sqrt(n): at n = 20 a series
    of AR(1) runs with phi 0.5 often reads as nearly independent, and with 5 commands one such
    pair was enough for 6.5 % false claims at alpha 5 %. The pooled estimate's error is about
    1 / sqrt(k n). Evidence: the pooled estimate (each series' corrected for a clock grid's
    rounding, :func:`latent_lag1`) standardised by its mean and spread under independence
    (:func:`lag1_null_sd` of each series, weighted as the estimate) above the one-sided
    :data:`SESSION_EVIDENCE_LEVEL` quantile (:data:`SHORT_EVIDENCE_LEVEL` below
    :data:`SHORT_SERIES` runs per series). The inflation is AR(1)'s with the pooled estimate
    bias-corrected as in :func:`series_dependence`. ``grids``: each sample's
    :func:`clock_grid` if known.
    """
    pairs = [(x, g) for x, g in zip(samples, grids or [None] * len(samples))
             if x.size >= MIN_RUNS_DEPENDENCE and x.min() < x.max()]
    used = [x for x, _ in pairs]
    if not used:
        return SessionDependence(0.0, 0, 0, 1.0, False, False)
    n_total = sum(int(x.size) for x in used)
    lags = [_lag1(x) for x in used]
    lag1 = sum(r * x.size for r, x in zip(lags, used)) / n_total
    latent = sum(latent_lag1(x, r, g) * x.size for r, (x, g) in zip(lags, pairs)) / n_total
    n = n_total / len(used)
    rho = min(0.9, max(0.0, latent + (1 + 3 * latent) / n))
    # the bar was a band on the bias-corrected estimate, whose spread is (1 + 3 / n) / sqrt(n):
    # it flagged 7.6 % of independent pairs of 20 runs at a nominal 5 % (and its per-series
    # bands as many again), and widened pairs of 20 runs seldom decide; now the level is what
    # it says (SESSION_EVIDENCE_LEVEL)
    mean0 = -len(used) / n_total
    sd0 = math.sqrt(sum((x.size * lag1_null_sd(int(x.size))) ** 2 for x in used)) / n_total
    level = SHORT_EVIDENCE_LEVEL if n < SHORT_SERIES else SESSION_EVIDENCE_LEVEL
    evidence = (latent - mean0) / sd0 > _ndtri(1 - level)
    return SessionDependence(float(lag1), n_total, len(used), float((1 + rho) / (1 - rho)),
                             bool(evidence), bool(evidence))


def clock_grid(x: np.ndarray) -> tuple[float, float]:
    """(the clock's step h, :func:`grid_step`; the variance s^2) of one series, with which
    :func:`latent_lag1` corrects its lag-1 autocorrelation: a verdict corrects two estimates
    of each series' (its own test's and the session's pooled one) and computes this once
    (~9 ms of CPU for 500,000 values)."""
    with np.errstate(over="ignore"):
        return grid_step(x), float(np.var(x))


def latent_lag1(x: np.ndarray, r1: float, grid: tuple[float, float] | None = None) -> float:
    """The lag-1 autocorrelation ``r1`` of ``x`` corrected for the clock's rounding: values
    read off a grid of step h (:func:`grid_step`) carry independent rounding errors of
    variance h^2 / 12 (Sheppard's correction) that add to the variance s^2 but not to the
    autocovariance, so the runs' own autocorrelation is r1 s^2 / (s^2 - h^2 / 12). Where most
    values tie, s^2 is near h^2 / 12 and the drift of the runs is hidden by the grid: 1 ms
    runs on a 1 µs grid drifting by a third of a tick (AR(1) 0.5) read r1 about 0.3, and 2-5
    identical commands of 12 runs were called different in 7-10 % of sets at alpha 5 % (with
    it and :func:`benchlab.stats.verdict_model.unresolved_inflation`: 3-6 %). At or below
    h^2 / 12 nothing of the runs' variation is resolved and a positive r1 counts as 0.9 (the
    cap of the AR(1) factor). Values on no grid (h = 0) keep r1. ``grid``: ``x``'s
    :func:`clock_grid` if known."""
    h, s2 = clock_grid(x) if grid is None else grid
    if not (r1 > 0 and h > 0 and math.isfinite(s2 * h * h)):
        return r1
    latent = s2 - h * h / 12.0
    return 0.9 if latent <= 0 else min(r1 * s2 / latent, 0.9)


def _lag1(x: np.ndarray) -> float:
    d = unit_scaled(x - x.mean())  # exact; values near 1e300 do not overflow
    return float(np.einsum("i,i->", d[:-1], d[1:]) / np.einsum("i,i->", d, d))


def series_dependence(x: np.ndarray, *, jaybeams_compatible: bool = False,
                      family: int = 1, grid: tuple[float, float] | None = None) -> Dependence:
    """Whether ``x`` (values in run order) is autocorrelated enough to distrust i.i.d. intervals.

    Flagged when the lag-1 autocorrelation r1 is positive and either its standardised form
    (:func:`lag1_z`, on r1 corrected for a clock grid's rounding) is above the one-sided
    quantile of :func:`evidence_level` (n runs, ``family`` series in the session) or Ljung-Box
    (min(10, n // 5) lags) rejects at :data:`LJUNG_BOX_LEVEL` / ``family``, so independent
    series are flagged at those levels whatever n. With ``jaybeams_compatible`` the JayBeams
    max |ACF| >= 0.05. ``adjusted`` (the verdict widens its interval) is ``flagged``.
    ``effective_n`` is n over the larger of two variance-inflation factors: Geyer's initial
    positive sequence (:func:`benchlab.stats.independence.effective_sample_size`) and AR(1)'s
    (1 + rho) / (1 - rho) with r1 corrected for its small-sample bias, rho = r1 + (1 + 3 r1) / n
    (Marriott and Pope 1954), at most 0.9. Series shorter than :data:`MIN_RUNS_DEPENDENCE` or
    constant are not checked (``flagged`` False). ``grid``: ``x``'s :func:`clock_grid` if
    known.
    """
    n = int(x.size)
    if n < MIN_RUNS_DEPENDENCE or x.min() == x.max():
        return Dependence(n, float(n), None, None, False)
    from benchlab.stats.independence import ljung_box

    report, r = independence_and_acf(x)
    lb = ljung_box(x, lag=max(1, min(10, n // 5)))
    r1 = float(r[1])
    latent = latent_lag1(x, r1, grid)
    rho = min(0.9, max(0.0, latent + (1 + 3 * latent) / n))
    if jaybeams_compatible:
        flagged = report.max_abs_acf >= JAYBEAMS_MAX_ACF
    else:
        # standardised under independence (lag1_null_sd): a band on the bias-corrected
        # estimate at 1.645 / sqrt(n) flagged about twice its nominal share of independent
        # series, and widened pairs of 20 runs seldom decide
        level = evidence_level(n, family)
        flagged = r1 > 0 and (lag1_z(latent, n) > _ndtri(1 - level)
                              or lb.p_value < LJUNG_BOX_LEVEL / max(family, 1))
    adjusted = flagged
    vif = max(n / report.effective_n if report.effective_n > 0 else 1.0, (1 + rho) / (1 - rho))
    return Dependence(n, float(n / vif), float(lb.p_value), float(report.max_abs_acf),
                      bool(flagged), bool(adjusted), r1)


@dataclass(frozen=True)
class PairStatistic:
    """Candidate against baseline on the scale of the test (log for "ratio", raw for "shift").

    ``estimate``, ``low``, ``high`` are on that scale (log ratio, or a shift in the series'
    unit); ``low_open`` / ``high_open`` mark an end that the test itself excludes (a tie at
    exactly no-change on a clock grid). ``level`` is the interval's confidence: the nominal level, or the exact interval's achieved
    level when that is lower (too few runs for the nominal one).
    """

    scale: str
    estimate: float
    low: float
    high: float
    low_open: bool
    high_open: bool
    level: float
    p_value: float
    method: str
    inflation: float

    @property
    def excludes_no_change(self) -> bool:
        """True when the interval, with its open ends, excludes 0 (ratio 1)."""
        return (self.low > 0 or (self.low == 0 and self.low_open)
                or self.high < 0 or (self.high == 0 and self.high_open))


def scale_of(*samples: np.ndarray) -> str:
    """"ratio" (test on log values) when every value is > 0, else "shift"."""
    return "ratio" if all(s.size and s.min() > 0 for s in samples) else "shift"


def pair_p_value(a: np.ndarray, b: np.ndarray, inflation: float = 1.0) -> tuple[float, str]:
    """Two-sided p-value of a against b: Mann-Whitney (R's ``wilcox.test``) for independent
    runs; for autocorrelated ones (``inflation`` > 1) its z divided by sqrt(inflation), or,
    where the two series do not overlap (:func:`separated`), the Wald test of the
    Hodges-Lehmann estimate with its standard error widened by sqrt(inflation)
    (:func:`inflated_wald`). 1 for two identical constants."""
    from benchlab.stats.rank import mann_whitney_u

    if a.min() == a.max() == b.min() == b.max():
        return 1.0, "constant"
    mw = mann_whitney_u(a, b)
    if inflation > 1.0 and separated(a, b, inflation):
        wald = inflated_wald(a, b, scale_of(a, b), inflation)
        if wald is not None:
            return wald[2], mw.method
    return _deflate(mw.p_value, inflation, mw.z), mw.method


def separated(a: np.ndarray, b: np.ndarray, inflation: float = 1.0) -> bool:
    """True when every value of one series lies below every value of the other, or when the
    ranks could not decide at 5 % even so (the largest z of the rank test,
    sqrt(3 n_a n_b / (n_a + n_b + 1)), over sqrt(``inflation``) below 1.96: 12 runs each
    counted as fewer than about 3): the rank test's z is then at or near its largest whatever
    the gap, and a widened comparison is decided by the magnitude (:func:`inflated_wald`).
    (Twelve drifting runs of a 6x-slower sleep, one of them delayed into the other's range on
    a loaded machine, left the rank test's z saturated and the pair undecided.)

    Why not the Wald test for every widened comparison: its standard error comes from the
    rank interval, moved out on a clock grid by the rounding error (:func:`grid_slack`), and
    it lost a third of Mann-Whitney's power on independent runs of 50 µs on a 1 µs grid
    (50 % against 81 % at a true 3 %, n = 50, unwidened); the rank test's z divided by
    sqrt(inflation) is Mann-Whitney itself at inflation 1 and handles ties. Where the series
    do not overlap the ranks saturate (a 9x difference between 12 drifting runs gives the z of
    a 1 % one) and only the magnitude can tell."""
    if a.max() < b.min() or b.max() < a.min():
        return True
    z_max = math.sqrt(3.0 * a.size * b.size / (a.size + b.size + 1))
    return bool(inflation > 1.0 and z_max / math.sqrt(inflation) < 1.959963984540054)


def inflated_wald(a: np.ndarray, b: np.ndarray, scale: str,
                  inflation: float) -> tuple[float, float, float] | None:
    """(estimate, standard error, p) of the Hodges-Lehmann estimate of a against b on
    ``scale``, its standard error widened by sqrt(``inflation``); None only when that is not a
    positive finite number (values whose squared resolution over- or underflows), where the
    rank test's z is deflated instead.

    Why not deflate the rank test's z alone: ranks saturate. Every run of one command faster
    than every run of the other gives the same z whether the gap is 1 % or 9x, so a noisy
    variance-inflation estimate (12 drifting runs read as about 1 independent one) left a 9x
    difference "cannot tell". Widening the estimate's standard error, as for any
    autocorrelated mean (Thiébaux and Zwiers 1984), keeps the magnitude: the standard error
    comes from the i.i.d. interval that inverts Mann-Whitney at 95 % (its half-width over its
    achieved level's z), so at inflation 1 it is the rank test's own precision. Tied values
    leave that interval without width: the standard error is at least :func:`grid_se`, the
    rounding error of values read off the clock's grid, so the magnitude decides there too.
    """
    from benchlab.stats.rank import hodges_lehmann

    x, y = (np.log(a), np.log(b)) if scale == "ratio" else (a, b)
    hl = hodges_lehmann(x, y, conf_level=0.95)
    achieved = min(max(hl.achieved_conf_level, 0.5), 1 - 1e-12)
    se = max((hl.ci_high - hl.ci_low + 2 * grid_slack(a, b, scale))
             / (2 * _ndtri((1 + achieved) / 2)), grid_se(a, b, scale))
    if not (math.isfinite(se) and se > 0):
        return None
    se *= math.sqrt(inflation)
    df = wald_df(a.size, b.size, inflation)
    return float(hl.estimate), float(se), min(float(2 * stdtr(df, -abs(hl.estimate) / se)), 1.0)


def grid_step(*samples: np.ndarray) -> float:
    """The resolution of the clock the values were read from: the greatest common divisor of
    the differences between distinct values when all are whole numbers (ns counts), else the
    smallest gap, or a tenth of it at most, of which every gap is a whole multiple (seconds
    read to the ms); 0 when the values lie on no grid (continuous, as simulated or corrected
    times) or are all the same."""
    v = np.sort(np.concatenate(samples))  # distinct values, sorted: np.unique imports numpy.ma
    v = v[np.concatenate(([True], v[1:] != v[:-1]))]
    if v.size < 2:
        return 0.0
    d = np.diff(v)
    if np.abs(v).max() < 2.0**53 and np.array_equal(v, np.round(v)):
        return float(np.gcd.reduce(d.astype(np.int64)))
    for k in range(1, 11):  # the smallest gap may be a few ticks: 0.004 s on a 0.001 s grid
        h = float(d.min()) / k
        q = d / h
        if np.all(np.abs(q - np.round(q)) <= 1e-6 * q):
            return h
    return 0.0


def grid_slack(a: np.ndarray, b: np.ndarray, scale: str) -> float:
    """How far each end of the rank interval of values read off a clock grid of step h
    (:func:`grid_step`) typically lies from that of the unrounded values, on ``scale``: each
    value carries a rounding error of variance h^2 / 12 (Sheppard 1898), so a pairwise
    difference one of sqrt(h^2 / 12 + h^2 / 12) (on the log scale, h over each median). 0 off
    a grid.

    Why: the Hodges-Lehmann estimate of tied values jumps by whole ticks and the interval of
    tied values can be a tick too narrow; a Wald test that read its standard error from that
    interval treated a 2 % jump as continuous and called identical 50 µs commands on a 1 µs
    grid different in 7-14 % of sets (alpha 5 %). Each end of the interval is widened by the
    rounding error of one difference. (By its bound, h, the widened test lost all power on
    independent runs at n = 50.)"""
    h = grid_step(a, b)
    if h <= 0:
        return 0.0
    ra, rb = (h / median(a), h / median(b)) if scale == "ratio" else (h, h)
    return math.sqrt((ra * ra + rb * rb) / 12.0)


def grid_se(a: np.ndarray, b: np.ndarray, scale: str) -> float:
    """Floor of the standard error of the Hodges-Lehmann estimate of independent runs of a
    against b on ``scale``, from the clock's resolution h (:func:`grid_step`): each value read
    off a grid of step h carries a rounding error of variance h^2 / 12 (Sheppard 1898), h^2 /
    (12 m^2) on the log scale near the median m, so sqrt(h^2 / 12 (1 / (n_a m_a^2) +
    1 / (n_b m_b^2))) (the medians, not each value: one run of 1 ns among 1 ms ones does not
    make the estimate's rounding error large).

    Tied values give the i.i.d. interval no width (every pairwise ratio near the middle is
    the same), and a standard error of 0 made the inflated test impossible: 12 runs at 1000
    and 1001 ticks against twice that read "cannot tell" (interval [1.0, 2.002]). The runs'
    own rounding error is the least uncertainty the data carry; widened by the inflation like
    the rest, at the cap (the runs count as one) it is one value's rounding error, which does
    not average out over runs that all tie."""
    h = grid_step(a, b)
    if h <= 0:
        return 0.0
    if scale == "ratio":  # relative to the medians: the estimate's own values, not outliers
        ra, rb = h / median(a), h / median(b)  # np.median's NaN check imports numpy.ma
    else:
        ra = rb = h
    return math.sqrt((ra * ra / a.size + rb * rb / b.size) / 12.0)


def wald_df(n_a: int, n_b: int, inflation: float) -> float:
    """Degrees of freedom of the inflated Wald test's Student t reference.

    The spread of n AR(1) runs with coefficient rho carries about n (1 - rho^2) / (1 + rho^2)
    values' worth of information (Bartlett 1946), n 2v / (v^2 + 1) for the AR(1) factor
    v = (1 + rho) / (1 - rho); summed over both series, minus 2, at least 1. A normal
    reference with 5 AR(1) commands at n = 20 gave 5.5 % false claims at alpha 5 %.

    v is the AR(1) factor itself, recovered from ``inflation`` = v (n - 1) / (n - v)
    (:func:`variance_inflation`: v times the sample variance's own bias) as
    v = inflation n / (n - 1 + inflation), for each series' n. Feeding the corrected
    inflation into Bartlett's formula counted the dependence twice: 10 runs each with a pooled
    lag-1 of 0.50 (v 7, inflation 10, the cap) gave 1.96 degrees of freedom, a t quantile of
    4.3 on top of sqrt(10), and two commands 30x apart whose runs never overlap read "cannot
    tell" (p = 0.051); with v (5.3 at the cap) 5.3 degrees of freedom, t 2.5.

    Parameters
    ----------
    n_a, n_b : int
        Runs of each series (>= 1).
    inflation : float
        The variance inflation the standard error was widened by (>= 1; 1: independent).
    """

    def information(n: int) -> float:
        v = max(inflation, 1.0) * n / (n - 1 + max(inflation, 1.0))
        return n * 2 * v / (v * v + 1)

    return max(information(n_a) + information(n_b) - 2, 1.0)


def _ndtr(x: float) -> float:
    """The standard normal CDF from math.erfc (as scipy's ndtr computes it, to ~1e-15
    relative), and below its quantile from the standard library (AS 241, ~1e-16): scipy.special
    costs `benchlab show` ~0.15 s of import for these two numbers."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _ndtri(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def _deflate(p: float, inflation: float, z: float | None = None) -> float:
    # A p-value that underflowed to 0 (the normal branch far out, e.g. two series of thousands
    # of runs that do not overlap) has no quantile; its z, kept by the test, still deflates.
    if inflation <= 1.0 or p >= 1.0:
        return float(p)
    if p > 0.0:
        z = -_ndtri(p / 2)
    elif z is None:
        return 0.0
    return float(2 * _ndtr(-abs(z) / math.sqrt(inflation)))


def _inflated_level(level: float, inflation: float) -> float:
    if inflation <= 1.0:
        return level
    z = _ndtri((1 + level) / 2) * math.sqrt(inflation)
    return float(min(2 * _ndtr(z) - 1, 1 - 1e-12))


def select_pair_statistics(a: np.ndarray, b: np.ndarray, levels: list[float], scale: str,
                           inflation: float = 1.0) -> None:
    """Select at once what :func:`pair_statistic` of ``a`` against ``b`` at each of ``levels``
    will read (the Hodges-Lehmann estimate and the ends of each interval); nothing for few
    runs. A verdict asks for its interval and its equivalence interval of each pair: one
    selection instead of two (the verdict of 2 x 500,000 runs: 1.38 -> 1.10 s of CPU)."""
    from benchlab.stats.rank import select_hodges_lehmann

    x, y = (np.log(a), np.log(b)) if scale == "ratio" else (a, b)
    wanted = [_inflated_level(level, inflation) for level in levels]
    if inflation > 1.0:
        wanted.append(0.95)  # the Wald test's standard error, where the series do not overlap
    select_hodges_lehmann(x, y, wanted)


def pair_statistic(a: np.ndarray, b: np.ndarray, *, level: float, scale: str,
                   inflation: float = 1.0) -> PairStatistic:
    """Hodges-Lehmann estimate of a against b with the interval at ``level`` that inverts the
    Mann-Whitney test, on ``scale`` ("ratio": logs; "shift": raw values).

    Parameters
    ----------
    a, b : ndarray
        Candidate and baseline values (e.g. ns), at least 3 each, finite.
    level : float
        Confidence level of the interval (e.g. 0.975 for Holm's step over two comparisons).
    scale : {"ratio", "shift"}
        See :func:`scale_of`.
    inflation : float
        Variance-inflation factor n / n_eff of autocorrelated runs (1: independent).
    """
    from benchlab.stats.rank import hodges_lehmann

    x, y = (np.log(a), np.log(b)) if scale == "ratio" else (a, b)
    p, method = pair_p_value(a, b, inflation)
    if method == "constant":
        return PairStatistic(scale, 0.0, 0.0, 0.0, False, False, 1.0, 1.0, "constant", 1.0)
    wald = (inflated_wald(a, b, scale, inflation) if inflation > 1 and separated(a, b, inflation)
            else None)
    if wald is not None:
        # the interval that inverts the inflated Wald test: it excludes no-change exactly when
        # p < 1 - level
        est, se, _ = wald
        half = stdtrit(wald_df(a.size, b.size, inflation), (1 + level) / 2) * se
        return PairStatistic(scale, est, est - half, est + half, False, False, float(level),
                             float(p), "inflated", float(inflation))
    # Widened series that overlap (or a Wald standard error that over- or underflows): the
    # rank test's z is divided by sqrt(inflation), and the interval that inverts that test is
    # the i.i.d. interval at the level whose z is sqrt(inflation) larger.
    hl = hodges_lehmann(x, y, conf_level=_inflated_level(level, inflation))
    est, low, high = hl.estimate, hl.ci_low, hl.ci_high
    rejects = p < 1 - level
    if inflation > 1 and not rejects:
        # Too few independent runs for the exact interval to reach the inflated level: its
        # widest form can still exclude no-change while the inflated test does not reject.
        # The interval that inverts the test then reaches no-change, so word, interval and p
        # agree. (This is where [1.0, 2.002] came from for tied runs 2x apart: an end at
        # no-change that no pairwise ratio allowed; on a grid the Wald test above now runs.)
        low, high = min(low, 0.0), max(high, 0.0)
    return PairStatistic(scale, float(est), float(low), float(high),
                         low_open=bool(low == 0 and rejects), high_open=bool(high == 0 and rejects),
                         # an exact interval covers at least its nominal level (say that
                         # level); below it (too few runs for any rejection) say what it has
                         level=float(min(level, hl.achieved_conf_level) if inflation <= 1
                                     else level),
                         p_value=float(p),
                         method=hl.method, inflation=float(inflation))


def robust_to_dependence(a: np.ndarray, b: np.ndarray, st: PairStatistic, level: float) -> bool:
    """Whether a widened test's rejection at ``level`` survives the dependence the runs may
    have: True for a test that was not widened or with :data:`DEPENDENCE_MIN_RUNS` runs or
    more; else the widened test (:func:`pair_p_value`) is redone at the upper end of a
    one-sided 95 % band of the AR(1) coefficient behind ``st.inflation`` (rho + 1.645
    sqrt((1 - rho^2) / n), Bartlett 1946; at most 0.9) and must still reject.

    Twelve runs cannot estimate their own dependence: with AR(1) runs (phi 0.8) two to five
    identical commands of 12 runs were called different in 7.5-9 % of sets at alpha 5 %, since
    the lag-1 estimate of 12 runs is off by 0.2-0.3 either way. Where the decision rests on the
    low side of that estimate, the verdict says "cannot tell yet" with advice (more runs, so
    that the dependence can be estimated), and a difference large enough to survive the
    upper end (a 9x one among drifting runs) still decides."""
    if st.inflation <= 1.0:
        return True
    n = int(min(a.size, b.size))
    if n >= DEPENDENCE_MIN_RUNS:
        return True
    v = st.inflation * n / (n - 1 + st.inflation)  # the AR(1) factor, as in wald_df
    rho = (v - 1) / (v + 1)
    upper = min(0.9, rho + SESSION_BAND_Z * math.sqrt(max(1 - rho * rho, 0.0) / n))
    inflation = variance_inflation(n, (1 + upper) / (1 - upper))
    if inflation <= st.inflation:
        return True
    return pair_p_value(a, b, inflation)[0] < 1 - level


def fastest_by_ratio(data: dict[str, np.ndarray], base: str) -> str:
    """The fastest command by the verdict's own estimate: from the command with the smallest
    median, the one whose Hodges-Lehmann ratio against it is smallest (below 1), again from
    that one until no ratio against it is below 1 (or the steps come back: no command is then
    below all the others). Medians and the Hodges-Lehmann ratio can disagree on skewed or tied runs, and "baseline:
    A, the fastest" was followed by "B ran 1.031x faster than A". Series with fewer than 3
    values or a value <= 0 keep the median's choice."""
    from benchlab.stats.rank import hodges_lehmann_estimate

    if any(v.size < 3 or v.min() <= 0 for v in data.values()):
        return base
    logs = {k: np.log(v) for k, v in data.items()}
    # The estimate is not transitive: the command below the one with the smallest median may
    # itself have one below it (22 of 600 sessions of skewed, tied or bimodal runs then read
    # "ratio 0.975" under "the fastest"), so step down until none is, or a cycle returns.
    seen = {base}
    while True:
        best, lowest = base, 0.0
        for k in data:
            if k == base or (data[k].min() == data[k].max() == data[base].min()
                             == data[base].max()):
                continue
            shift = hodges_lehmann_estimate(logs[k], logs[base])
            if shift < lowest:
                best, lowest = k, shift
        if best in seen:
            return base
        seen.add(best)
        base = best


def as_ratio(value: float, scale: str, baseline_median: float) -> float | None:
    """A value on the test's scale as a ratio candidate / baseline (None: baseline median 0)."""
    if scale == "ratio":  # 1e300 against 1e-300: a ratio beyond floats is inf, not an error
        return float(math.exp(value)) if value < 709.0 else math.inf
    if baseline_median <= 0:
        return None
    return float(1 + value / baseline_median)


def attainable_p(n_a: int, n_b: int) -> float:
    """Smallest two-sided p-value the exact rank test can give with n_a and n_b runs:
    2 / C(n_a + n_b, n_a), reached when every run of one is below every run of the other."""
    if n_a < 1 or n_b < 1:
        return 1.0
    log_comb = math.lgamma(n_a + n_b + 1) - math.lgamma(n_a + 1) - math.lgamma(n_b + 1)
    return min(1.0, 2.0 * math.exp(-log_comb))  # exp underflows to 0, never overflows


def attainable_min_runs(alpha: float, family: int, n_max: int = 10**6) -> int:
    """Fewest runs per command with which any comparison can reach Holm's first level
    ``alpha / family``: the smallest n with 2 / C(2n, n) < alpha / family (n >= 2)."""
    target = alpha / max(family, 1)
    n = 2
    while attainable_p(n, n) >= target and n < n_max:
        n += 1
    return n
