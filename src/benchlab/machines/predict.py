"""Predict where an application's result lands on another machine, from a variability range.

The VarSys16 paper's claim: a CPU-bound application moved from the base machine to the target sees a
speedup inside the variability range [min, max] of the stress-ng CPU methods' speedups. So a
result measured on the base bounds the result on the target:

* higher is better (a rate): ``[base * min, base * max]``;
* lower is better (a time): ``[base / max, base / min]``.

Given the target's result too, the application's speedup (target/base for rates, base/target
for times) is checked against [min, max]; a result outside is flagged (for example a
memory-bound benchmark, such as STREAM in the paper, against a CPU range).

Inputs of ``benchlab predict --profile-ratio VARIABILITY APP_RESULT``:

* VARIABILITY: a variability JSON written by ``benchlab variability TARGET BASE --json``;
* APP_RESULT: either a number (the application's result on the base machine; add
  ``--target VALUE`` to check a result measured on the target, and ``--lower-is-better`` for
  times), or a file of several applications: CSV with a header ``name,base,target`` and an
  optional ``lower_is_better`` column (true/false), or JSON: a list of objects with the same
  keys. ``target`` may be empty (only bounds are printed).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from benchlab.errors import UserError
from benchlab.machines.variability import Variability, speedup


@dataclass(frozen=True)
class AppResult:
    """An application's result on the base (and maybe the target) machine, in its own unit."""

    name: str
    base: float
    target: float | None = None
    lower_is_better: bool = False


@dataclass(frozen=True)
class Prediction:
    """Bounds of an application's result on the target, and the check of a measured one.

    Attributes:
        name: application name.
        base: its result on the base machine (its unit).
        low, high: bounds of its result on the target (same unit).
        target: the result measured on the target, if given.
        speedup: speedup of the target over the base (dimensionless), if target given.
        inside: whether the speedup lies in the variability range (None without target).
        lower_is_better: the result is a time-like value.
    """

    name: str
    base: float
    low: float
    high: float
    target: float | None
    speedup: float | None
    inside: bool | None
    lower_is_better: bool

    def to_dict(self) -> dict:
        return asdict(self)


def bounds(base_value: float, ratio_range: tuple[float, float], lower_is_better: bool = False) -> tuple[float, float]:
    """Bounds of the result on the target, in the result's unit (see the module docstring)."""
    lo, hi = ratio_range
    if not (lo > 0 and hi >= lo):
        raise UserError(f"invalid variability range [{lo}, {hi}]; it must be positive with min <= max")
    if lower_is_better:
        return base_value / hi, base_value / lo
    return base_value * lo, base_value * hi


def predict_one(app: AppResult, ratio_range: tuple[float, float]) -> Prediction:
    """Bounds for one application and, when its target result is known, the in-range check."""
    if not (app.base > 0 and math.isfinite(app.base)):
        raise UserError(f"application {app.name!r}: base result {app.base} must be a positive number")
    low, high = bounds(app.base, ratio_range, app.lower_is_better)
    s = inside = None
    if app.target is not None:
        if not (app.target > 0 and math.isfinite(app.target)):
            raise UserError(f"application {app.name!r}: target result {app.target} must be a positive number")
        s = speedup(app.target, app.base, not app.lower_is_better)
        # A relative tolerance of 1e-9 keeps a method at the range's own edge inside.
        inside = ratio_range[0] * (1 - 1e-9) <= s <= ratio_range[1] * (1 + 1e-9)
    return Prediction(app.name, app.base, low, high, app.target, s, inside, app.lower_is_better)


def predict(variability: Variability, apps: Sequence[AppResult]) -> list[Prediction]:
    """Predictions for every application against ``variability``'s range."""
    return [predict_one(a, variability.range) for a in apps]


def _bool(text: str, where: str) -> bool:
    t = str(text).strip().lower()
    if t in ("true", "1", "yes", "y"):
        return True
    if t in ("false", "0", "no", "n", ""):
        return False
    raise UserError(f"{where}: lower_is_better must be true or false, not {text!r}")


def _num(text, where: str, allow_empty: bool = False) -> float | None:
    if allow_empty and (text is None or str(text).strip() == ""):
        return None
    try:
        return float(text)
    except (TypeError, ValueError):
        raise UserError(f"{where}: {text!r} is not a number") from None


def read_app_results(path: str | os.PathLike) -> list[AppResult]:
    """Applications from a CSV (``name,base,target[,lower_is_better]``) or JSON list file.

    Read through the store's one reader (binary, UTF-16, corrupt gzip, over-long lines and
    deep JSON are one-line errors); a row missing a field and a name given twice are refused.
    """
    from benchlab.store.formats.readers import iter_lines, open_text, parse_json_text

    what = "application results"
    with open_text(path, what) as fh:
        lines = [line for _, line in iter_lines(fh, path)]
    text = "\n".join(lines)
    apps: list[AppResult] = []
    if str(path).endswith(".json") or text.lstrip().startswith(("[", "{")):
        doc = parse_json_text(text, path, what)
        if not isinstance(doc, list):
            raise UserError(f"{path}: expected a JSON list of applications, each with name and base")
        for i, e in enumerate(doc):
            where = f"{path}[{i}]"
            if not isinstance(e, dict) or "base" not in e:
                raise UserError(f"{where}: each application needs at least \"name\" and \"base\"")
            apps.append(AppResult(str(e.get("name", f"app{i + 1}")), _num(e["base"], where),
                                  _num(e.get("target"), where, allow_empty=True),
                                  _bool(e.get("lower_is_better", False), where)))
    else:
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or "base" not in reader.fieldnames:
            raise UserError(f"{path}: CSV needs a header with at least name,base (and target, "
                            f"lower_is_better)")
        for i, row in enumerate(reader):
            where = f"{path}:{i + 2}"
            # DictReader fills a missing field with None (an empty one is ""): a cut-off row.
            if None in row.values() or None in row:
                fields = sum(v is not None for k, v in row.items() if k is not None)
                fields += len(row.get(None) or [])
                raise UserError(f"{where}: the row has {fields} fields where the header has "
                                f"{len(reader.fieldnames)}; fix or re-create the file")
            apps.append(AppResult(row.get("name") or f"app{i + 1}", _num(row["base"], where),
                                  _num(row.get("target"), where, allow_empty=True),
                                  _bool(row.get("lower_is_better") or "", where)))
    if not apps:
        raise UserError(f"{path} lists no application; add rows name,base,target")
    names = [a.name for a in apps]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UserError(f"{path}: application {repeated[0]!r} is listed twice; keep one result "
                        f"per application (or give them different names)")
    return apps
