"""Importer for the published varsys16 data (the VarSys16 paper's ``exp/alltests.csv``) and its checks.

The CSV has ``machine,limits,benchmark,lower_is_better,class,repetition,result`` rows. One
profile is built per (machine, limits), named ``MACHINE`` for limits ``without`` and
``MACHINE@quota-N`` otherwise (N: CPU quota in microseconds per 10,000 us period).

Which rows are stress-ng CPU *methods* (the paper's 68)? The benchmark names are
``stressng-<class>-<name>``; the ``cpu`` prefix mixes two kinds of run:

* ``stress-ng --cpu 1 --cpu-method NAME`` runs (the methods), and
* class-level runs (``stress-ng --class cpu --sequential 1``), one per *stressor* of the cpu
  class, which stress-ng names after the stressor (``bsearch``, ``crypt``, ``cpu`` ...).

A stressor belongs to several classes, so the class-level runs show up again under another
prefix: every ``stressng-cpu-X`` that also exists as ``stressng-memory-X`` is a stressor
(af-alg, bsearch, cpu, crypt, hsearch, longjmp, lsearch, qsort, str, stream, tsc, tsearch,
vecmath, wcs). Of the rest, ``numa`` and ``rdrand`` are stressors too (``--numa``,
``--rdrand``; neither is in any stress-ng's ``--cpu-method`` list), and
``stressng-cpu-cache-*`` are the cpu-cache class (their rows are malformed: ``lower_is_better``
holds the class, ``class`` the repetition and ``repetition`` the result, see
:func:`_parse_row`). What remains is exactly 68 names, the paper's count; 63 of them are
methods of today's stress-ng 0.15, and the other 5 (djb2a, fnv1a, jenkin, pjw, sdbm) are the
hash methods later moved to stress-ng's ``hash`` stressor. :data:`CPU_METHODS_0_05_09`
hard-codes that list and :func:`derive_cpu_methods` recomputes it from the data; a test checks
they agree.

Repetitions are averaged (the profile value is the median of the repetitions, which for two
equals their mean). CPU methods are imported under their bare method name (``int64``) so that
they compare with profiles measured by ``benchlab profile``; other rows keep their benchmark
name, as kind ``stressor`` (``stressng-*``) or ``application`` (STREAM, crafty, unixbench ...).
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections import defaultdict
from dataclasses import dataclass

from benchlab.errors import UserError
from benchlab.machines.profile import MethodResult, Profile
from benchlab.store.db import SessionRef, Store
from benchlab.store.formats import register_import_format

BASE_MACHINE = "piha.soe.ucsc.edu"
#: Paper's Table 1 ids, from the comment in the paper's source (base - piha, t1 - nibbler,
#: t2 - dwill, t3 - proliant, t4 - rackform, t5 - clemson); 192.168.140.86 is T3 (README),
#: which leaves 192.168.140.82 as T4.
MACHINE_IDS = {
    "piha.soe.ucsc.edu": "base",
    "nibbler.soe.ucsc.edu": "T1",
    "dwill.soe.ucsc.edu": "T2",
    "192.168.140.86": "T3",
    "192.168.140.82": "T4",
    "clnode056.clemson.cloudlab.us": "T5",
}

CPU_METHODS_0_05_09 = (
    "ackermann bitops callfunc cdouble cfloat clongdouble correlate crc16 decimal128 decimal32 "
    "decimal64 dither djb2a double euler explog fft fibonacci float fnv1a gamma gcd gray hamming "
    "hanoi hyperbolic idct int128 int128decimal128 int128decimal32 int128decimal64 int128double "
    "int128float int128longdouble int16 int32 int32double int32float int32longdouble int64 "
    "int64double int64float int64longdouble int8 jenkin jmp ln2 longdouble loop matrixprod nsqrt "
    "omega parity phi pi pjw prime psi queens rand rand48 rgb sdbm sieve sqrt trig union zeta"
).split()

#: Stressors of the cpu class that are not CPU methods and appear under no other prefix.
_CPU_CLASS_ONLY_STRESSORS = frozenset({"numa", "rdrand"})


@dataclass(frozen=True)
class Row:
    machine: str
    limits: str
    benchmark: str
    lower_is_better: bool
    klass: str
    repetition: str
    result: float


def _parse_row(raw: dict, line: int, path: str) -> Row:
    try:
        if raw["lower_is_better"] not in ("true", "false"):
            # stressng-cpu-cache-* rows are shifted one column left: lower_is_better holds the
            # class ("cpu-cache"), class the repetition, repetition the result (bogo-ops/s,
            # higher is better like every stress-ng rate).
            return Row(raw["machine"], raw["limits"], raw["benchmark"], False, raw["lower_is_better"],
                       raw["class"], float(raw["repetition"]))
        return Row(raw["machine"], raw["limits"], raw["benchmark"], raw["lower_is_better"] == "true",
                   raw["class"], raw["repetition"], float(raw["result"]))
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path}:{line}: not a varsys16 row (machine,limits,benchmark,lower_is_better,"
                        f"class,repetition,result): {raw!r}"[:200]) from None


def read_rows(path: str | os.PathLike) -> list[Row]:
    """All rows of an ``alltests.csv``; UserError when missing or not in the varsys16 format."""
    from benchlab.store.formats.readers import iter_lines, open_text

    # the store's reader: binary, UTF-16, corrupt gzip and endless lines are one-line errors
    with open_text(path, "varsys16 alltests.csv") as f:
        lines = (line for _, line in iter_lines(f, path))
        reader = csv.DictReader(lines)
        expected = ["machine", "limits", "benchmark", "lower_is_better", "class", "repetition", "result"]
        try:
            fieldnames = reader.fieldnames
        except csv.Error as err:
            raise UserError(f"{path} is not varsys16 alltests.csv ({err}); give the path of "
                            f"varsys16's alltests.csv") from None
        if fieldnames != expected:
            raise UserError(f"{path} is not varsys16 alltests.csv: header {fieldnames} "
                            f"should be {','.join(expected)}")
        try:
            rows = [_parse_row(r, i + 2, str(path)) for i, r in enumerate(reader)]
        except csv.Error as err:
            raise UserError(f"{path}: malformed CSV ({err}); fix the file") from None
    if not rows:  # an import of nothing would exit 0 and store nothing, without a word
        raise UserError(f"{path} has the varsys16 header but no rows; give the full "
                        f"alltests.csv")
    for i, row in enumerate(rows):
        if not math.isfinite(row.result) or row.result < 0:
            raise UserError(f"{path}:{i + 2}: result {row.result!r} is not a finite number >= 0 "
                            f"(stress-ng rates and benchmark results cannot be); fix the row")
    return rows


def derive_cpu_methods(rows: list[Row]) -> list[str]:
    """The stress-ng CPU methods among the rows, by the reasoning in the module docstring."""
    names = {r.benchmark for r in rows}
    cpu = {n[len("stressng-cpu-"):] for n in names if n.startswith("stressng-cpu-")}
    other_classes = {n.split("-", 2)[2] for n in names
                     if n.startswith("stressng-") and not n.startswith("stressng-cpu-") and n.count("-") >= 2}
    return sorted(m for m in cpu if m not in other_classes and m not in _CPU_CLASS_ONLY_STRESSORS
                  and not m.startswith("cache-"))


def profile_name(machine: str, limits: str) -> str:
    """``MACHINE`` for limits ``without``, ``MACHINE@quota-N`` otherwise."""
    return machine if limits == "without" else f"{machine}@{limits}"


def quota_of(limits: str) -> int | None:
    """The CPU quota in us (per 10,000 us period) of a limits label, None for ``without``."""
    m = re.fullmatch(r"quota-(\d+)", limits)
    return int(m.group(1)) if m else None


def read_profiles(path: str | os.PathLike) -> dict[str, Profile]:
    """Profiles of every (machine, limits) in ``alltests.csv``, by profile name, in file order."""
    rows = read_rows(path)
    methods = set(derive_cpu_methods(rows))
    grouped: dict[tuple[str, str], dict[str, MethodResult]] = defaultdict(dict)
    for r in rows:
        short = r.benchmark[len("stressng-cpu-"):] if r.benchmark.startswith("stressng-cpu-") else None
        if short in methods:
            name, kind = short, "cpu-method"
        else:
            name, kind = r.benchmark, ("stressor" if r.benchmark.startswith("stressng-") else "application")
        entry = grouped[(r.machine, r.limits)].setdefault(
            name, MethodResult(name, [], higher_is_better=not r.lower_is_better, kind=kind))
        entry.values.append(r.result)
    profiles = {}
    for (machine, limits), results in grouped.items():
        quota = quota_of(limits)
        meta = {"source": "varsys16", "file": str(path), "machine": machine,
                "machine_id": MACHINE_IDS.get(machine), "limits": limits,
                "cpu_quota_us": quota, "cpu_period_us": 10_000 if quota else None,
                "tool": "stress-ng", "stress_ng_version": "0.05.09", "metric": "bogo_ops_per_s",
                "value": "median of repetitions (their mean for two)",
                "higher_is_better": {k: m.higher_is_better for k, m in results.items()},
                "cpu_methods": len([m for m in results.values() if m.kind == "cpu-method"])}
        name = profile_name(machine, limits)
        profiles[name] = Profile(name=name, methods=results, metadata=meta,
                                 environment={"host": {"hostname": machine}, "source": "varsys16"})
    return profiles


def import_varsys16(store: Store, path: str | os.PathLike) -> list[SessionRef]:
    """Store one profile session per (machine, limits) of varsys16's ``alltests.csv``.

    Runs have status ``imported``; see :mod:`benchlab.machines.store_io` for the layout. Returns
    the session references in file order. ``benchlab variability 192.168.140.86
    piha.soe.ucsc.edu`` then reproduces the paper's T3/base profile.
    """
    from benchlab.machines.store_io import save_profile

    profiles = read_profiles(path)
    with store.transaction():  # one import, all or nothing
        return [save_profile(store, p, run_status="imported", source=f"varsys16:{path}")
                for p in profiles.values()]


def _import_format(store: Store, path: str | os.PathLike, *, name=None, unit=None, metrics=(),
                   command_line=None) -> list[SessionRef]:
    """``benchlab import --format varsys16`` (registered with the store's format registry)."""
    if name is not None or unit is not None or metrics:
        raise UserError("--format varsys16 names its profiles MACHINE[@quota-N]; drop "
                        "--name, --unit and --metric")
    return import_varsys16(store, path)


register_import_format("varsys16", _import_format)
