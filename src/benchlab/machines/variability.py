"""Variability profiles: how much faster or slower each method runs on a target than on a base.

For every method present in both profiles the *ratio* is the target's speedup over the base:
``target / base`` for rates (higher is better) and ``base / target`` for times (lower is
better), so a ratio above 1 always means "faster on the target". The VarSys16 paper bounds
the performance change any CPU-bound application will see by the *range* [min, max] of these
ratios over stress-ng's CPU methods, and reads their histogram in 0.1-wide bins.

By default only CPU methods (kind ``cpu-method``) enter the ratios, as in the paper; memory
stressors and imported application benchmarks are kept apart so they can be *checked against*
the range (:mod:`benchlab.machines.predict`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.machines.documents import read_json_document
from benchlab.machines.profile import Profile

VARIABILITY_FORMAT = "benchlab-variability"
BIN_WIDTH = 0.1
KINDS = ("cpu-method", "stressor", "application")


def speedup(target_value: float, base_value: float, higher_is_better: bool = True) -> float:
    """Speedup of the target over the base (dimensionless; > 1 means the target is faster)."""
    return target_value / base_value if higher_is_better else base_value / target_value


def parse_kinds(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"cpu-method"`` (default), ``"all"`` or a comma list of kinds; UserError when unknown."""
    if text is None:
        return ("cpu-method",)
    items = text.split(",") if isinstance(text, str) else list(text)
    kinds: list[str] = []
    for item in (i.strip() for i in items):
        if item == "all":
            return KINDS
        if item not in KINDS:
            raise UserError(f"unknown method kind {item!r}; use {', '.join(KINDS)} or all")
        kinds.append(item)
    return tuple(kinds)


@dataclass
class Variability:
    """The variability profile TARGET/BASE.

    Attributes:
        target, base: profile names.
        ratios: method -> speedup of target over base (dimensionless), in base's method order.
        only_in_target, only_in_base: methods missing on the other side (left out).
        kinds: method kinds that were included.
    """

    target: str
    base: str
    ratios: dict[str, float]
    only_in_target: list[str] = field(default_factory=list)
    only_in_base: list[str] = field(default_factory=list)
    kinds: tuple[str, ...] = ("cpu-method",)

    def array(self) -> np.ndarray:
        return np.asarray(list(self.ratios.values()), dtype=float)

    @property
    def range(self) -> tuple[float, float]:
        """(min, max) of the ratios."""
        a = self.array()
        return float(a.min()), float(a.max())

    @property
    def length(self) -> float:
        """max - min of the ratios (the paper's "range length")."""
        lo, hi = self.range
        return hi - lo

    def summary(self) -> dict[str, float]:
        """n, min, max, length, median, mean, q1, q3, iqr (quartiles: linear interpolation, R type 7)."""
        a = self.array()
        q1, median, q3 = np.percentile(a, [25, 50, 75])
        return {"n": int(a.size), "min": float(a.min()), "max": float(a.max()),
                "length": float(a.max() - a.min()), "median": float(median), "mean": float(a.mean()),
                "q1": float(q1), "q3": float(q3), "iqr": float(q3 - q1)}

    def histogram(self, width: float = BIN_WIDTH) -> list[dict[str, float]]:
        """Counts in right-closed bins ``(k*width, (k+1)*width]`` from the lowest to the highest
        occupied bin (empty bins between included), as the paper's "(2.3, 2.4] range"."""
        return histogram(self.array(), width)

    def to_dict(self) -> dict[str, Any]:
        """The variability JSON document (read back by :func:`load_variability_file`)."""
        return {"format": VARIABILITY_FORMAT, "version": 1, "target": self.target, "base": self.base,
                "kinds": list(self.kinds), "summary": self.summary(),
                "histogram": self.histogram(), "ratios": self.ratios,
                "only_in_target": self.only_in_target, "only_in_base": self.only_in_base}


def _bin_index(x: float, width: float) -> int:
    # Right-closed bins; rounding first keeps 2.4 (stored as 2.4000000000000004) in (2.3, 2.4].
    return int(math.ceil(round(x / width, 9))) - 1


def histogram(values: Iterable[float], width: float = BIN_WIDTH) -> list[dict[str, float]]:
    """Right-closed histogram of ``values`` with bins of ``width``: list of {low, high, count}."""
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 0:
        return []
    idx = np.array([_bin_index(x, width) for x in arr])
    out = []
    for k in range(int(idx.min()), int(idx.max()) + 1):
        out.append({"low": round(k * width, 10), "high": round((k + 1) * width, 10),
                    "count": int(np.sum(idx == k))})
    return out


def compute_variability(target: Profile, base: Profile, *, kinds: Sequence[str] = ("cpu-method",),
                        methods: Sequence[str] | None = None, per_cpu_second: bool = False) -> Variability:
    """Per-method speedups of ``target`` over ``base`` (see the module docstring).

    ``higher_is_better`` comes from the base profile's method (imported data says so per
    benchmark). ``methods`` restricts to a list of names. ``per_cpu_second`` compares the
    rates per CPU second (stress-ng's usr+sys rate) instead of per wall second: on a shared
    machine those are untouched by other processes' time slicing (but not by a busy SMT
    sibling), and a CPU quota does not change them.

    Raises:
        UserError: the profiles share no method of the chosen kinds, or a value is not positive.
    """
    def chosen(p: Profile) -> dict[str, Any]:
        return {k: m for k, m in p.methods.items() if m.values and m.kind in kinds
                and (methods is None or k in methods) and (m.cpu_values or not per_cpu_second)}

    def value(m) -> float:
        return float(np.median(m.cpu_values)) if per_cpu_second else m.value

    t, b = chosen(target), chosen(base)
    if methods is not None:
        unknown = [m for m in methods if m not in t and m not in b]
        if unknown:
            raise UserError(f"method(s) {', '.join(unknown)} are in neither profile; "
                            f"choose among {', '.join(list(b)[:8])}...")
    common = [k for k in b if k in t]
    if not common:
        raise UserError(f"profiles {target.name!r} and {base.name!r} share no {'/'.join(kinds)} method"
                        f"{' with CPU-time rates' if per_cpu_second else ''}; profile both machines "
                        f"with the same --methods (imported profiles have no CPU-time rates)")
    ratios = {}
    for k in common:
        tv, bv = value(t[k]), value(b[k])
        if not (tv > 0 and bv > 0):
            raise UserError(f"method {k!r} has a non-positive value ({tv} on {target.name}, {bv} on "
                            f"{base.name}); re-profile it")
        ratios[k] = speedup(tv, bv, b[k].higher_is_better)
    return Variability(target=target.name, base=base.name, ratios=ratios,
                       only_in_target=[k for k in t if k not in b],
                       only_in_base=[k for k in b if k not in t], kinds=tuple(kinds))


def load_variability_file(path: str | os.PathLike) -> Variability:
    """Read a variability JSON (from ``benchlab variability --json``); UserError when invalid."""
    doc = read_json_document(path, VARIABILITY_FORMAT, "variability document",
                             "benchlab variability TARGET BASE --json > FILE")
    try:
        ratios = {str(k): float(v) for k, v in doc["ratios"].items()}
    except (KeyError, AttributeError, TypeError, ValueError):
        raise UserError(f"{path}: \"ratios\" must map method names to numbers; regenerate the file") from None
    if not ratios:
        raise UserError(f"{path} has no ratios; regenerate it from two profiles that share methods")
    for method, ratio in ratios.items():
        if not (math.isfinite(ratio) and ratio > 0):
            raise UserError(f"{path}: the ratio of {method} is {ratio:g}; a speedup ratio is a "
                            f"finite number > 0 (regenerate the file)")
    return Variability(target=str(doc.get("target", "target")), base=str(doc.get("base", "base")),
                       ratios=ratios, only_in_target=list(doc.get("only_in_target") or []),
                       only_in_base=list(doc.get("only_in_base") or []),
                       kinds=tuple(doc.get("kinds") or ("cpu-method",)))
