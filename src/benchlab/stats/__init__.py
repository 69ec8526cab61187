"""benchlab.stats: pure statistics on numpy arrays (no I/O, no prose).

Units follow the input: a function given durations in ns returns locations,
spreads and interval endpoints in ns; ratios, correlations, p-values and
probabilities are dimensionless. Bad input raises ``InvalidSampleError``
(a ``benchlab.errors.UserError`` and a ``ValueError``) with a one-line message.

The public names below are loaded on first use (PEP 562 module ``__getattr__``):
scipy.stats alone costs about a second to import, and ``benchlab run`` needs only
``benchlab.stats.descriptive`` (numpy) for its summary, so importing this package
must not pull in the modules that use scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> submodule that defines it
_EXPORTS: dict[str, str] = {}


def _export(module: str, *names: str) -> None:
    for name in names:
        _EXPORTS[name] = f"benchlab.stats.{module}"


_export("bootstrap", "KINDS", "ONE_SAMPLE_STATISTICS", "TWO_SAMPLE_STATISTICS", "BootstrapCI",
        "BootstrapDistribution", "bca_acceleration", "bootstrap_ci", "bootstrap_ci_2samp",
        "bootstrap_cis", "bootstrap_distribution", "bootstrap_distribution_2samp", "ci_mean",
        "ci_mean_diff", "ci_median", "ci_median_ratio", "ci_sd", "interval_from_distribution",
        "jackknife_diffs", "norm_inter", "interval_with_fallback")
_export("ci_compare", "GroupComparison", "compare_groups", "compare_intervals")
_export("correlation", "CorrelationResult", "pearson", "spearman")
_export("descriptive", "MAD_NORMAL_SCALE", "InvalidSampleError", "Summary", "as_sample",
        "cdf_points", "iqr", "mad_raw", "mad_scaled", "percentile", "summarize")
_export("equivalence", "TostResult", "tost_welch")
_export("independence", "JAYBEAMS_MAX_ACF", "IndependenceReport", "LjungBoxResult", "acf",
        "check_independence", "default_max_lag", "effective_sample_size", "ljung_box")
_export("multiple", "benjamini_hochberg", "holm", "p_adjust")
_export("outliers", "MadFilteredSummary", "OutlierFlags", "mad_filtered_summary",
        "mad_outliers", "tukey_outliers")
_export("steady", "Segment", "SteadyState", "detect_steady_state", "robust_noise_sigma")
_export("power", "SampleSizePlan", "minimum_interesting_effect", "required_sample_size",
        "t_test_detectable_difference", "t_test_power", "t_test_sample_size")
_export("rank", "HodgesLehmannResult", "MannWhitneyResult", "hodges_lehmann", "mann_whitney_u",
        "pairwise_difference_quantiles", "wilcox_cdf", "wilcox_quantile", "wilcox_sf")
_export("ratio", "median_ratio")
_export("sequential", "Decision", "SequentialDesign", "critical_values", "max_sample_inflation",
        "rejection_probability", "spent_alpha")
_export("verdict", "Check", "CompareOptions", "Comparison", "MultiComparison", "compare",
        "compare_many")
_export("spread", "SdEstimate", "estimate_sd", "robust_spread", "RunsPlan", "plan_runs")
_export("verdict_model", "Verdict", "CandidateVerdict", "Note", "choose_baseline", "verdict_model")

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'benchlab.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
