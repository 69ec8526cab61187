"""The planner's random order without numpy: :class:`OrderRng` is numpy's
``default_rng(entropy).permutation`` bit for bit, so sessions stored by a benchlab that used
numpy resume and reproduce in the order they always had."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchlab.core.execute import Here, execute, resume
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.core.planner import OrderRng
from benchlab.core.session_types import SessionInterrupted
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner

#: Benchmark order of a 4-command, 5-run, seed-19 session as the numpy planner (before the planner left numpy)
#: executed it: whole, then interrupted after 7 runs and resumed.
NUMPY_ORDER = [3, 1, 0, 2, 3, 0, 2, 1, 3, 2, 0, 1, 1, 0, 2, 3, 3, 2, 1, 0]
NUMPY_RESUMED = ([3, 1, 0, 2, 3, 0, 2], [3, 2, 0, 1, 0, 2, 3, 1, 1, 0, 3, 2, 1])


def test_permutations_equal_numpys_default_rng():
    draw = random.Random(19)
    for _ in range(1500):
        entropy = [draw.choice([0, 1, draw.randrange(2**31), draw.randrange(2**64),
                                draw.randrange(2**100)]) for _ in range(draw.choice([1, 3, 6]))]
        theirs, ours = np.random.default_rng(entropy), OrderRng(entropy)
        for n in (1, 2, 3, 7, 40):
            assert ours.permutation(list(range(n))) == theirs.permutation(list(range(n))).tolist()
    raw = np.random.default_rng(5)
    assert OrderRng([5]).next64() == int(raw.integers(0, 2**64, dtype=np.uint64))


def _plan() -> RunPlan:
    return RunPlan(benchmarks=[BenchmarkSpec(n, "true") for n in "abcd"], runs=5, min_runs=1,
                   cwd="/tmp", seed=19)


def test_a_session_and_its_resume_keep_the_order_numpy_gave(db_path):
    with Store.open(db_path) as store:
        whole = ScriptedRunner()
        execute(_plan(), store, Here(whole))
        assert [entry[1] for entry in whole.log] == NUMPY_ORDER
        first = ScriptedRunner(interrupt_after=7)
        with pytest.raises(SessionInterrupted) as info:
            execute(_plan(), store, Here(first))
        rest = ScriptedRunner()
        resume(store, info.value.session.uid, Here(rest))
    assert ([e[1] for e in first.log], [e[1] for e in rest.log]) == NUMPY_RESUMED
