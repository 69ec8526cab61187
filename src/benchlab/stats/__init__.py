"""benchlab.stats"""

# --- comparison half: power, rank tests, seed 001's verdict, sequential design ---------------
# (appended by the comparison engineer; the core half's re-exports go above this block)
from benchlab.stats.power import (  # noqa: E402
    SampleSizePlan,
    minimum_interesting_effect,
    required_sample_size,
    t_test_detectable_difference,
    t_test_power,
    t_test_sample_size,
)
from benchlab.stats.rank import (  # noqa: E402
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
from benchlab.stats.sequential import (  # noqa: E402
    Decision,
    SequentialDesign,
    critical_values,
    max_sample_inflation,
    rejection_probability,
    spent_alpha,
)
from benchlab.stats.verdict import (  # noqa: E402
    Check,
    CompareOptions,
    Comparison,
    MultiComparison,
    SdEstimate,
    compare,
    compare_many,
    estimate_sd,
)
