"""Bootstrap intervals against R's boot/boot.ci, exactly (R's replicates) and within
Monte-Carlo error (our own replicates); jackknife shortcuts; memory bound; errors."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from _core_vectors import datasets, vectors  # noqa: F401  (fixtures)
from scipy import special
from scipy import stats as sps

from benchlab.stats import (
    BootstrapDistribution,
    InvalidSampleError,
    bootstrap_ci,
    bootstrap_ci_2samp,
    bootstrap_cis,
    bootstrap_distribution,
    bootstrap_distribution_2samp,
    interval_from_distribution,
    jackknife_diffs,
    norm_inter,
)
from benchlab.stats.bootstrap import median_order_sampler

SD_BAND = 4.0  # Monte-Carlo bands are +-4 standard deviations: P(false failure) ~ 6e-5 each


def _boot_data(datasets, name: str) -> np.ndarray:
    if name == "jaybeams_array_first5000":
        return datasets["jaybeams_array"][:5000]
    return datasets[name]


# ------------------------------------------------------------------ exact, on R's replicates


def test_intervals_equal_r_exactly_on_r_replicates(vectors, datasets):
    """Given R's own t* (R = 1999, so (R+1)*0.025 is an integer and both norm.inter branches
    run), percentile/basic/normal equal boot.ci to 1e-12 and BCa equals
    boot.ci(L = empinf(type = "jack")) to 1e-12: norm.inter is reproduced exactly."""
    for case in vectors["bootstrap_exact"]:
        x = datasets[case["dataset"]]
        dist = BootstrapDistribution(
            estimate=case["t0"], replicates=np.asarray(case["t"]),
            jackknife_diffs=jackknife_diffs(x, case["statistic"]), jackknife_method="exact",
            statistic=case["statistic"], seed=None, sampler="R",
        )
        for kind in ("percentile", "basic", "normal"):
            ci = interval_from_distribution(dist, kind, 0.95)
            assert [ci.low, ci.high] == pytest.approx(case[kind], rel=1e-12), (case, kind)
        if case["bca_jack_L"] is None:
            with pytest.raises(InvalidSampleError, match="BCa"):
                interval_from_distribution(dist, "bca", 0.95)
        else:
            ci = interval_from_distribution(dist, "bca", 0.95)
            assert [ci.low, ci.high] == pytest.approx(case["bca_jack_L"], rel=1e-12)


def test_acceleration_equals_r_jackknife(vectors, datasets):
    from benchlab.stats import bca_acceleration

    for case in vectors["bootstrap"]:
        if case["acceleration_jack"] is None:
            continue
        d = jackknife_diffs(_boot_data(datasets, case["dataset"]), case["statistic"])
        assert bca_acceleration(d) == pytest.approx(case["acceleration_jack"], rel=1e-9, abs=1e-15)


def test_norm_inter_rule_by_hand():
    t = np.arange(1.0, 20.0)  # B = 19
    assert norm_inter(t, [0.5])[0] == 10.0  # (19+1)*0.5 = 10, an integer: t_(10)
    assert norm_inter(t, [0.01])[0] == 1.0  # k = 0: smallest
    z = special.ndtri
    expect = 2 + (z(0.125) - z(2 / 20)) / (z(3 / 20) - z(2 / 20)) * (3 - 2)
    assert norm_inter(t, [0.125])[0] == pytest.approx(expect, rel=1e-14)


# ------------------------------------------------------------------ Monte-Carlo agreement


def _quantile_band(reps: np.ndarray, level: float, extra_level_sd: float, n_r: int) -> float:
    """Half-width, in the statistic's unit, that covers +-4 MC sd of the difference between two
    independent B-replicate estimates of the level-quantile (R's and ours). The level's MC sd is
    sqrt(p(1-p)/B) for each run (binomial count of replicates below the quantile), plus
    `extra_level_sd` for BCa's estimated z0; it is mapped to the statistic's unit through the
    replicates' own quantile function, which also handles discrete (median) distributions."""
    B = reps.size
    sd_level = np.sqrt(level * (1 - level) / B + level * (1 - level) / n_r) + extra_level_sd
    lo_p = max(level - SD_BAND * sd_level, 0.0)
    hi_p = min(level + SD_BAND * sd_level, 1.0)
    q = norm_inter(reps, [lo_p, level, hi_p])
    return float(max(q[2] - q[1], q[1] - q[0])) + 1e-12 * abs(q[1])


def _normal_band(reps: np.ndarray, conf: float, n_r: int) -> float:
    """+-4 MC sd of (2 t0 - mean(t*)) +- z sd(t*) across two runs: var(mean) = s^2/B and
    var(sd) ~ (m4 - s^4)/(4 s^2 B) with the replicates' own fourth moment."""
    B = reps.size
    s2 = reps.var(ddof=1)
    m4 = np.mean((reps - reps.mean()) ** 4)
    z = special.ndtri((1 + conf) / 2)
    var_one = s2 / B + z**2 * max(m4 - s2**2, 0.0) / (4 * s2 * B)
    return float(SD_BAND * np.sqrt(var_one * (1 + B / n_r)))


def _check_against_r(dist: BootstrapDistribution, case: dict) -> None:
    reps = dist.replicates
    n_r = int(case["R"])
    assert dist.estimate == pytest.approx(case["t0"], rel=1e-12)
    for kind in ("percentile", "basic"):
        ci = interval_from_distribution(dist, kind, 0.95)
        for end, level in ((0, 0.025), (1, 0.975)):
            lvl = level if kind == "percentile" else 1 - level
            tol = _quantile_band(reps, lvl, 0.0, n_r)
            assert abs([ci.low, ci.high][end] - case[kind][end]) <= tol, (case["statistic"], kind)
    ci = interval_from_distribution(dist, "normal", 0.95)
    tol = _normal_band(reps, 0.95, n_r)
    assert abs(ci.low - case["normal"][0]) <= tol and abs(ci.high - case["normal"][1]) <= tol
    if case.get("bca_jack_L") is None:
        return
    ci = interval_from_distribution(dist, "bca", 0.95)
    B = reps.size
    p0 = special.ndtr(ci.z0)
    sd_z0 = np.sqrt(p0 * (1 - p0) * (1 / B + 1 / n_r)) / sps.norm.pdf(ci.z0)
    for end, level in enumerate(ci.extra["adjusted_levels"]):
        za = special.ndtri([0.025, 0.975][end])
        w = ci.z0 + (ci.z0 + za) / (1 - ci.acceleration * (ci.z0 + za))
        dw_dz0 = 1 + 1 / (1 - ci.acceleration * (ci.z0 + za)) ** 2
        extra = sps.norm.pdf(w) * dw_dz0 * sd_z0
        tol = _quantile_band(reps, level, extra, n_r)
        assert abs([ci.low, ci.high][end] - case["bca_jack_L"][end]) <= tol, (case["statistic"],)


def test_one_sample_intervals_match_r_within_monte_carlo_error(vectors, datasets):
    """Our resampling (seeded) vs R's boot (set.seed(1)), 10,000 resamples each, for the mean,
    median and sd of the lognormal, tied, small-n and JayBeams (first 5000) datasets."""
    for i, case in enumerate(vectors["bootstrap"]):
        x = _boot_data(datasets, case["dataset"])
        dist = bootstrap_distribution(x, case["statistic"], n_resamples=10_000, seed=100 + i)
        _check_against_r(dist, case)


def test_two_sample_intervals_match_r_within_monte_carlo_error(vectors, datasets):
    """Stratified resampling (R: boot(strata = group)) of JayBeams array vs map, 3000 each:
    ratio of medians and difference of means."""
    if not vectors["bootstrap_two_sample"]:
        pytest.skip("vectors were generated without ../shared (no JayBeams two-sample case)")
    x = datasets["jaybeams_array"][:3000]
    y = datasets["jaybeams_map"][:3000]
    for i, case in enumerate(vectors["bootstrap_two_sample"]):
        dist = bootstrap_distribution_2samp(x, y, case["statistic"], n_resamples=10_000, seed=7 + i)
        _check_against_r(dist, case)


# ------------------------------------------------------------------ jackknife and samplers


@pytest.mark.parametrize("n", [7, 8, 31])
@pytest.mark.parametrize("statistic", ["mean", "median", "sd", "var"])
def test_fast_jackknife_equals_brute_force(n, statistic):
    rng = np.random.default_rng(n)
    x = np.round(rng.lognormal(size=n), 1)  # rounding makes ties
    f = {"mean": np.mean, "median": np.median, "sd": lambda a: np.std(a, ddof=1),
         "var": lambda a: np.var(a, ddof=1)}[statistic]
    brute = np.array([f(x) - f(np.delete(x, i)) for i in range(n)])
    assert jackknife_diffs(x, statistic) == pytest.approx(brute, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n", [11, 12])
def test_median_order_statistic_sampler_has_the_resampling_distribution(n):
    """P(median* <= s_j): exact binomial formula for odd n; for even n (average of two order
    statistics) compared with plain resampling. B = 200,000; band 4/sqrt(B) on the CDF."""
    s = np.arange(1.0, n + 1)
    B = 200_000
    reps = median_order_sampler(s, B, np.random.default_rng(3))
    grid = np.arange(1.0, n + 1, 0.5)
    ecdf = np.searchsorted(np.sort(reps), grid, side="right") / B
    if n % 2:
        k = (n + 1) // 2
        exact = sps.binom.sf(k - 1, n, np.floor(grid) / n)
        assert np.max(np.abs(ecdf - exact)) < 4 * 0.5 / np.sqrt(B)
    else:
        rng = np.random.default_rng(4)
        direct = np.median(s[rng.integers(0, n, size=(B, n))], axis=1)
        ecdf2 = np.searchsorted(np.sort(direct), grid, side="right") / B
        assert np.max(np.abs(ecdf - ecdf2)) < 4 * np.sqrt(2) * 0.5 / np.sqrt(B)


def test_grouped_jackknife_used_for_large_n_callable_and_close_to_exact():
    """A callable at n > max_exact_jackknife gets the grouped (1000 blocks) jackknife; its
    acceleration estimates the exact one (for the mean the closed form gives the truth)."""
    x = np.random.default_rng(5).lognormal(sigma=0.8, size=20_000)
    ci = bootstrap_ci(x, lambda a, axis=-1: a.mean(axis=axis), n_resamples=200, seed=1)
    exact = bootstrap_ci(x, "mean", n_resamples=200, seed=1)
    assert ci.jackknife_method == "grouped(1000)" and exact.jackknife_method == "exact"
    assert ci.acceleration == pytest.approx(exact.acceleration, rel=0.35)


def test_callable_with_and_without_axis_give_identical_replicates():
    x = np.random.default_rng(6).normal(size=300)
    a = bootstrap_ci(x, lambda v, axis=-1: np.mean(v, axis=axis), kind="percentile",
                     n_resamples=500, seed=9)
    b = bootstrap_ci(x, lambda v: float(np.mean(v)), kind="percentile", n_resamples=500, seed=9)
    c = bootstrap_ci(x, "mean", kind="percentile", n_resamples=500, seed=9)
    assert (a.low, a.high) == (b.low, b.high) == (c.low, c.high)


def test_seed_reproduces_and_none_records_a_seed():
    x = np.random.default_rng(7).lognormal(size=100)
    a = bootstrap_ci(x, "sd", seed=11, n_resamples=1000)
    b = bootstrap_ci(x, "sd", seed=11, n_resamples=1000)
    c = bootstrap_ci(x, "sd", seed=12, n_resamples=1000)
    assert (a.low, a.high) == (b.low, b.high) != (c.low, c.high)
    d = bootstrap_ci(x, "sd", seed=None, n_resamples=1000)
    e = bootstrap_ci(x, "sd", seed=d.seed, n_resamples=1000)
    assert isinstance(d.seed, int) and (d.low, d.high) == (e.low, e.high)


def test_batch_size_does_not_change_the_result():
    x = np.random.default_rng(8).normal(size=200)
    a = bootstrap_ci(x, "sd", seed=3, n_resamples=1000, batch=7)
    b = bootstrap_ci(x, "sd", seed=3, n_resamples=1000, batch=1000)
    assert a.low == pytest.approx(b.low, rel=1e-12) and a.high == pytest.approx(b.high, rel=1e-12)


def test_memory_stays_bounded_at_one_million_values():
    """20 resamples of 1M values with the default batch: traced peak well under 500 MB (the
    unbatched index+value matrix alone would be 320 MB per 20 resamples, 160 GB for 10,000)."""
    x = np.random.default_rng(9).lognormal(size=1_000_000)
    tracemalloc.start()
    try:
        ci = bootstrap_ci(x, "sd", kind="bca", n_resamples=20, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ci.low < ci.estimate < ci.high
    assert peak < 400 * 2**20, peak


def test_two_sample_named_statistics_and_direction():
    rng = np.random.default_rng(10)
    base, cand = rng.normal(100, 5, 400), rng.normal(120, 5, 400)
    r = bootstrap_ci_2samp(base, cand, "median_ratio", seed=1, n_resamples=2000)
    assert 1.15 < r.low < r.estimate < r.high < 1.25
    d = bootstrap_ci_2samp(base, cand, "mean_diff", seed=1, n_resamples=2000, kind="percentile")
    assert 15 < d.low < d.high < 25
    many = bootstrap_cis(base, "median_ratio", y=cand, seed=1, n_resamples=2000)
    assert set(many) == {"percentile", "basic", "normal", "bca"}
    assert many["bca"].low == r.low


def test_coverage_of_bca_mean_is_near_nominal():
    """Property check: over 200 lognormal samples (n = 60) the 90% BCa interval of the mean
    covers the true mean exp(1/2) about 90% of the time (binomial 4-sd band: 0.79..0.99;
    BCa is known to undercover a little for skewed small samples)."""
    rng = np.random.default_rng(11)
    truth = np.exp(0.5)
    hits = 0
    for i in range(200):
        x = rng.lognormal(size=60)
        ci = bootstrap_ci(x, "mean", confidence=0.9, n_resamples=1000, seed=i)
        hits += ci.low <= truth <= ci.high
    assert 0.79 <= hits / 200 <= 0.99


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(x=[3.0, 3.0, 3.0, 3.0]), "constant"),
        (dict(x=[1.0, 2.0, 3.0], kind="student"), "unknown interval kind"),
        (dict(x=[1.0, 2.0, 3.0], confidence=95), "confidence"),
        (dict(x=[1.0, 2.0, 3.0], statistic="mode"), "unknown statistic"),
        (dict(x=[1.0, 2.0, 3.0], n_resamples=1), "n_resamples"),
    ],
)
def test_bad_input_raises_one_line_error(kwargs, words):
    with pytest.raises(InvalidSampleError, match=words):
        bootstrap_ci(**kwargs)


def test_bca_undefined_when_all_replicates_on_one_side():
    x = np.array([1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0])
    with pytest.raises(InvalidSampleError, match="BCa"):
        bootstrap_ci(x, "median", n_resamples=500, seed=1)


def test_extreme_order_statistics_are_flagged_as_r_warns():
    """With 50 resamples a 95% BCa endpoint falls on the most extreme replicate (R warns
    'extreme order statistics used as endpoints'); 5000 resamples do not."""
    x = np.random.default_rng(1).lognormal(size=50)
    assert bootstrap_ci(x, "sd", n_resamples=50, seed=1).extra["extreme_order_statistics"]
    ok = bootstrap_ci(x, "sd", n_resamples=5000, seed=1, kind="percentile")
    assert not ok.extra["extreme_order_statistics"]
