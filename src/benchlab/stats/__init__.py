"""benchlab.stats: pure statistics on numpy arrays (no I/O).

Units follow the input: a function given durations in ns returns locations,
spreads and interval endpoints in ns; ratios, correlations, p-values and
probabilities are dimensionless. Bad input raises ``InvalidSampleError``
(a ``benchlab.errors.UserError`` and a ``ValueError``) with a one-line message.
"""

# --- core: descriptive, outliers, bootstrap, independence, correlation, multiple
#     comparisons, equivalence, CI comparison, steady state -------------------------
from benchlab.stats.bootstrap import (
    KINDS,
    ONE_SAMPLE_STATISTICS,
    TWO_SAMPLE_STATISTICS,
    BootstrapCI,
    BootstrapDistribution,
    bca_acceleration,
    bootstrap_ci,
    bootstrap_ci_2samp,
    bootstrap_cis,
    bootstrap_distribution,
    bootstrap_distribution_2samp,
    ci_mean,
    ci_mean_diff,
    ci_median,
    ci_median_ratio,
    ci_sd,
    interval_from_distribution,
    jackknife_diffs,
    norm_inter,
)
from benchlab.stats.ci_compare import GroupComparison, compare_groups, compare_intervals
from benchlab.stats.correlation import CorrelationResult, pearson, spearman
from benchlab.stats.descriptive import (
    MAD_NORMAL_SCALE,
    InvalidSampleError,
    Summary,
    as_sample,
    cdf_points,
    iqr,
    mad_raw,
    mad_scaled,
    percentile,
    summarize,
)
from benchlab.stats.equivalence import TostResult, tost_welch
from benchlab.stats.independence import (
    SEED001_MAX_ACF,
    IndependenceReport,
    LjungBoxResult,
    acf,
    check_independence,
    default_max_lag,
    effective_sample_size,
    ljung_box,
)
from benchlab.stats.multiple import benjamini_hochberg, holm, p_adjust
from benchlab.stats.outliers import (
    MadFilteredSummary,
    OutlierFlags,
    mad_filtered_summary,
    mad_outliers,
    tukey_outliers,
)
from benchlab.stats.steady import Segment, SteadyState, detect_steady_state, robust_noise_sigma

# --- power analysis, rank tests, verdict, sequential (other engineer) -------------------
# Add imports from power.py, rank.py, verdict.py, sequential.py below this line.
from benchlab.stats.power import (
    SampleSizePlan,
    minimum_interesting_effect,
    required_sample_size,
    t_test_detectable_difference,
    t_test_power,
    t_test_sample_size,
)
from benchlab.stats.rank import (
    HodgesLehmannResult,
    MannWhitneyResult,
    hodges_lehmann,
    mann_whitney_u,
    median_ratio,
    pairwise_difference_quantiles,
    wilcox_cdf,
    wilcox_quantile,
    wilcox_sf,
)
from benchlab.stats.sequential import (
    Decision,
    SequentialDesign,
    critical_values,
    max_sample_inflation,
    rejection_probability,
    spent_alpha,
)
from benchlab.stats.verdict import (
    Check,
    CompareOptions,
    Comparison,
    MultiComparison,
    SdEstimate,
    compare,
    compare_many,
    estimate_sd,
)
