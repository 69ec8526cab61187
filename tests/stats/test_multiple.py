"""Holm and Benjamini-Hochberg against R's p.adjust."""

from __future__ import annotations

import numpy as np
import pytest
from _core_vectors import vectors  # noqa: F401  (fixture)

from benchlab.stats import InvalidSampleError, benjamini_hochberg, holm, p_adjust


def test_matches_r_p_adjust(vectors):
    ref = vectors["p_adjust"]
    assert holm(ref["p"]) == pytest.approx(ref["holm"], rel=1e-12)
    assert benjamini_hochberg(ref["p"]) == pytest.approx(ref["BH"], rel=1e-12)
    assert p_adjust(ref["p"], "BH") == pytest.approx(ref["BH"], rel=1e-12)


def test_nan_is_kept_and_not_counted():
    """As R: p.adjust(c(0.01, NA, 0.04), "holm") = c(0.02, NA, 0.04)."""
    out = holm([0.01, np.nan, 0.04])
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.04)


def test_invalid_p_values_are_rejected():
    with pytest.raises(InvalidSampleError, match=r"\[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(InvalidSampleError, match="unknown"):
        p_adjust([0.1], "bonferroni-ish")
