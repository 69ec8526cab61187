"""Statistical code never crashes on legal data (ties, constants, zeros, outliers, tiny n,
extreme magnitudes, drift): every function the analysis calls either answers or raises the
one-line ``UserError`` of data it cannot use (too few values, a constant series where a change
is sought), and the verdict's words are always produced.

The families are adversarial on purpose; found this way: ``detect_steady_state`` overflowed
(``OverflowError``) on values near 1e300, because its penalty squared the noise level.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.report.speed_verdict import speed_verdict
from benchlab.report.verdict_text import check_lines, notes_text, verdict_text
from benchlab.stats.bootstrap import bootstrap_ci
from benchlab.stats.descriptive import summarize
from benchlab.stats.independence import independence_and_acf
from benchlab.stats.outliers import mad_filtered_summary
from benchlab.stats.steady import detect_steady_state
from benchlab.stats.verdict import CompareOptions, compare


def _families() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "constant": np.full(20, 5.0),
        "zeros": np.zeros(20),
        "one value": np.array([1000.0]),
        "two values": np.array([1000.0, 1001.0]),
        "three with a tie": np.array([7.0, 7.0, 8.0]),
        "clock grid": np.round(rng.lognormal(math.log(1e6), 0.004, 30), -3),
        "one huge outlier": np.r_[rng.normal(1000, 10, 49), 1e9],
        "near 1e-300": rng.random(30) * 1e-300,
        "near 1e300": rng.random(30) * 1e300,
        "half zeros": np.r_[np.zeros(15), rng.random(15)],
        "bimodal": np.r_[rng.normal(1000, 1, 25), rng.normal(2000, 1, 25)],
        "small integers": rng.integers(0, 3, 40).astype(float),
        "drift": np.linspace(1000, 2000, 60) + rng.normal(0, 5, 60),
        "all tied but one": np.r_[np.full(29, 1000.0), 1001.0],
        "zeros and a one": np.r_[np.zeros(19), 1.0],
        "3000 runs": rng.lognormal(7, 0.1, 3000),
    }


FAMILIES = _families()
# numpy's overflow/invalid-value warnings on the 1e±300 families are expected (they are what
# the degraded results are made of); they are not what this test checks
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
FAST = CompareOptions(bootstrap_resamples=200)
SEED001 = CompareOptions(bootstrap_resamples=200, jaybeams_compatible=True)


def _answers_or_refuses(fn) -> None:
    """``fn()`` answers, or refuses with a UserError of one line (never another exception)."""
    try:
        fn()
    except UserError as exc:
        assert "\n" not in str(exc) and str(exc), exc


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_one_sample_analyses_answer_or_refuse(name):
    x = FAMILIES[name]
    for fn in (summarize, mad_filtered_summary, independence_and_acf, detect_steady_state,
               lambda v: bootstrap_ci(v, np.median)):
        _answers_or_refuses(lambda: fn(x))


def test_steady_state_of_values_near_1e300_is_that_of_the_same_values_scaled_down():
    rng = np.random.default_rng(3)
    x = np.r_[rng.normal(2.0, 0.01, 40), rng.normal(1.0, 0.01, 60)]
    small, huge = detect_steady_state(x), detect_steady_state(x * 1e300)
    assert small.classification == huge.classification == "warmup"
    assert huge.steady_from == small.steady_from == 40


PAIRS = sorted(itertools.combinations_with_replacement(sorted(FAMILIES), 2))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}|{b}" for a, b in PAIRS])
def test_every_pair_gets_a_verdict_in_words(a, b):
    x, y = FAMILIES[a], FAMILIES[b]
    for options in (FAST, SEED001):
        def judged() -> None:
            c = compare(x, y, options=options)
            words = [verdict_text(c), *(t for _, t in check_lines(c)), *notes_text(c)]
            assert words[0] and all(isinstance(w, str) for w in words)
        _answers_or_refuses(judged)
    lines = speed_verdict([("A", x), ("B", y), ("C", x[::-1])])
    assert lines and all(isinstance(line, str) and line for line in lines)
