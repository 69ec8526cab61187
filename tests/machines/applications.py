"""Application results from two stored profiles, for the tests that check predictions on the
VarSys16 paper's published data (its stressor and application benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence

from benchlab.machines.predict import AppResult


def applications_of_profiles(target, base, kinds: Sequence[str] = ("stressor", "application")) -> list[AppResult]:
    """The non-CPU-method benchmarks present in two profiles (e.g. imported varsys16 ones),
    as application results: base and target values with the base's higher-is-better. A
    benchmark with a non-positive result on either side (a failed run recorded as 0) is left
    out: it has no speedup."""
    out = []
    for name, m in base.methods.items():
        t = target.methods.get(name)
        if m.kind in kinds and t is not None and m.values and t.values and m.value > 0 and t.value > 0:
            out.append(AppResult(name, m.value, t.value, not m.higher_is_better))
    return out
