"""stress-ng as a source of machine microbenchmarks: find it, list its methods, run one, parse it.

A *method* is one microbenchmark of a machine profile:

* a CPU method of the ``cpu`` stressor (``stress-ng --cpu 1 --cpu-method NAME``), e.g. ``int64``;
  the list comes from the installed stress-ng (``--cpu-method which``: 82 in Debian's 0.15);
* one of the memory/cache stressors in :data:`EXTRA_STRESSORS` (``stream``, ``cache``,
  ``memcpy``, ``matrix``), run as ``stress-ng --NAME 1``.

No CPU method shares a name with those stressors, so a bare name is unambiguous.

The result of a run is stress-ng's ``bogo-ops-per-second-real-time`` (bogo-ops/s over wall
time), read from its ``--yaml`` report. The YAML is read with :class:`yaml.BaseLoader` because
stress-ng writes ``date-yyyy-mm-dd: 2026:11:22``, which YAML 1.1 would read as a base-60 integer.
"""

from __future__ import annotations

import functools
import math
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchlab.errors import UserError

INSTALL_HINT = "install it with `apt-get install stress-ng` (or run scripts/setup.sh)"

#: Memory and cache stressors added to the CPU methods, with extra arguments that make them
#: usable in 1 s runs. stream's default arrays (4x the L3 size) give ~1 bogo-op per second, a
#: 100% quantisation error; 4 MiB "L3" gives 16 MiB arrays (still larger than this machine's
#: caches per array set) and ~50 bogo-ops/s.
EXTRA_STRESSORS: dict[str, tuple[str, ...]] = {
    "stream": ("--stream-l3-size", "4M"),
    "cache": (),
    "memcpy": (),
    "matrix": (),
}

def find_stress_ng(path: str | None = None) -> str:
    """Absolute path of the stress-ng binary (``path`` or found on PATH).

    Raises:
        UserError: stress-ng is not installed, with the command that installs it.
    """
    found = shutil.which(path or "stress-ng")
    if found is None:
        raise UserError(f"stress-ng was not found{' at ' + path if path else ' on PATH'}; {INSTALL_HINT}")
    return found


@functools.lru_cache(maxsize=8)
def _query(binary: str, *args: str) -> str:
    try:
        proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    except OSError as err:
        raise UserError(f"cannot run {binary}: {err.strerror}; {INSTALL_HINT}") from None
    return proc.stdout + proc.stderr


def stress_ng_version(binary: str | None = None) -> str:
    """The installed stress-ng's version, e.g. ``"0.15.06"``."""
    text = _query(binary or find_stress_ng(), "--version")
    match = re.search(r"version\s+([0-9][0-9.]*)", text)
    return match.group(1) if match else text.strip().splitlines()[0] if text.strip() else "unknown"


def cpu_methods(binary: str | None = None) -> list[str]:
    """The CPU methods of the installed stress-ng, in its own order (``all`` excluded)."""
    text = _query(binary or find_stress_ng(), "--cpu-method", "which")
    # "cpu-method must be one of: all ackermann ..."
    _, _, names = text.partition(":")
    methods = [m for m in names.split() if m != "all"]
    if not methods:
        raise UserError(f"cannot read the CPU methods of {binary or 'stress-ng'} ({text.strip()[:80]!r}); "
                        f"reinstall it: {INSTALL_HINT}")
    return methods


def resolve_methods(spec: str | None, binary: str | None = None) -> list[str]:
    """Expand a ``--methods`` value into method names, in a stable order.

    ``spec`` is ``all`` (every CPU method plus :data:`EXTRA_STRESSORS`), ``cpu`` (CPU methods),
    ``memory`` (the extra stressors), or a comma-separated list mixing names and groups.

    Raises:
        UserError: an unknown name, naming the close matches and how to list them.
    """
    available = cpu_methods(binary)
    spec = (spec or "all").strip()
    chosen: list[str] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            raise UserError(f"empty method name in --methods {spec!r}; write names separated by commas")
        if item == "all":
            names = available + list(EXTRA_STRESSORS)
        elif item == "cpu":
            names = available
        elif item == "memory":
            names = list(EXTRA_STRESSORS)
        elif item in available or item in EXTRA_STRESSORS:
            names = [item]
        else:
            import difflib
            close = difflib.get_close_matches(item, available + list(EXTRA_STRESSORS), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise UserError(f"unknown stress-ng method {item!r}{hint}; list them with "
                            f"`stress-ng --cpu-method which`, or use all, cpu or memory")
        for name in names:
            if name not in chosen:
                chosen.append(name)
    return chosen


def method_argv(method: str, duration_s: int, yaml_path: str | Path, binary: str,
                cpu_methods_available: list[str] | None = None) -> list[str]:
    """The stress-ng command line running ``method`` with one worker for ``duration_s`` s."""
    if duration_s < 1 or int(duration_s) != duration_s:
        raise UserError(f"invalid duration {duration_s!r} s: stress-ng takes whole seconds (>= 1)")
    common = ["--timeout", f"{int(duration_s)}s", "--metrics-brief", "--yaml", str(yaml_path)]
    if method in EXTRA_STRESSORS:
        return [binary, f"--{method}", "1", *EXTRA_STRESSORS[method], *common]
    available = cpu_methods_available if cpu_methods_available is not None else cpu_methods(binary)
    if method not in available:
        raise UserError(f"unknown stress-ng method {method!r}; list them with `stress-ng --cpu-method which`")
    return [binary, "--cpu", "1", "--cpu-method", method, *common]


@dataclass(frozen=True)
class StressResult:
    """One stress-ng run as reported in its YAML.

    Attributes:
        stressor: stress-ng's stressor name (``cpu``, ``stream``, ...).
        bogo_ops: bogo operations completed (count).
        ops_per_s_real: bogo-ops per second of wall time, bogo-ops/s.
        ops_per_s_cpu: bogo-ops per second of user+system CPU time, bogo-ops/s (insensitive to
            time slicing by other processes and to CPU quotas).
        wall_s, user_s, sys_s: stress-ng's own times, s.
        version: stress-ng version from the report.
    """

    stressor: str
    bogo_ops: float
    ops_per_s_real: float
    ops_per_s_cpu: float
    wall_s: float
    user_s: float
    sys_s: float
    version: str


def _number(value, key: str, path: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise UserError(f"stress-ng report {path} has a non-numeric {key} ({value!r}); "
                        f"check the stress-ng version (>= 0.05 writes numbers)") from None
    if not math.isfinite(x):
        raise UserError(f"stress-ng report {path} has a non-finite {key}; rerun the method")
    return x


def parse_yaml_report(text: str, path: str = "<yaml>") -> StressResult:
    """Parse stress-ng's ``--yaml`` report (the first stressor's metrics).

    Raises:
        UserError: the text is not a stress-ng report with metrics.
    """
    try:
        doc = yaml.load(text, Loader=yaml.BaseLoader)  # strings only: no base-60 dates
    except yaml.YAMLError as err:
        raise UserError(f"stress-ng report {path} is not valid YAML ({str(err).splitlines()[0]}); "
                        f"rerun the method") from None
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    if not isinstance(metrics, list) or not metrics or not isinstance(metrics[0], dict):
        raise UserError(f"stress-ng report {path} has no metrics section; stress-ng must run with "
                        f"--metrics-brief and without -q")
    m = metrics[0]
    info = doc.get("system-info") if isinstance(doc.get("system-info"), dict) else {}
    def optional(key: str) -> float:
        return _number(m[key], key, path) if m.get(key) is not None else float("nan")

    return StressResult(
        stressor=str(m.get("stressor", "")),
        bogo_ops=_number(m.get("bogo-ops"), "bogo-ops", path),
        ops_per_s_real=_number(m.get("bogo-ops-per-second-real-time"), "bogo-ops-per-second-real-time", path),
        ops_per_s_cpu=optional("bogo-ops-per-second-usr-sys-time"),
        wall_s=optional("wall-clock-time"),
        user_s=optional("user-time"),
        sys_s=optional("system-time"),
        version=str(info.get("stress-ng-version", "unknown")),
    )


def parse_yaml_file(path: str | Path) -> StressResult:
    """Parse a stress-ng ``--yaml`` file; UserError if missing or malformed."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise UserError(f"cannot read stress-ng report {path}: {err.strerror}; "
                        f"stress-ng probably failed before writing it (see its output)") from None
    return parse_yaml_report(text, str(path))
