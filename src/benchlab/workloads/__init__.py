"""Bundled, self-timing C workloads: locate, build on first use, and run them.

Each workload is one C file in this directory (``<name>.c``) that includes shared headers
(``*.h``) next to it. :func:`build_workload` inlines those headers and compiles the result once
with the system C compiler through :mod:`benchlab.measure.build`, into a cache keyed by a hash
of the text, the compiler and the flags: an edited source or header, or a different compiler,
gives a new binary, and an unchanged one is reused.

Every workload prints, at the end of its stdout, machine-readable lines (see README.md here)::

    BENCHLAB_CHECK checksum=<u64> ...
    BENCHLAB_METRIC <name>=<value> unit=<unit>
    BENCHLAB_SELF wall_ns=<ns> cpu_ns=<ns> start_unix_ns=<ns> start_mono_ns=<ns> setup_ns=<ns>

:func:`parse_workload_output` turns those lines into numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure import build

WORKLOADS_DIR = Path(__file__).resolve().parent

#: Flags every workload is built with. No -march=native: a binary should do the same work
#: on every machine of one architecture, so results stay comparable across machines.
CFLAGS: tuple[str, ...] = ("-O2", "-std=c11", "-Wall")
LDLIBS: tuple[str, ...] = ("-lm",)

SELF_PREFIX = "BENCHLAB_SELF"
METRIC_PREFIX = "BENCHLAB_METRIC"
CHECK_PREFIX = "BENCHLAB_CHECK"

_KEY_VALUE = re.compile(r"(\w+)=(\S+)")
_LOCAL_INCLUDE = re.compile(r'#\s*include\s+"([\w.]+\.h)"')


def workload_names() -> list[str]:
    """Names of the bundled workloads (the ``<name>.c`` files here), sorted."""
    return sorted(path.stem for path in WORKLOADS_DIR.glob("*.c"))


def workload_source(name: str) -> Path:
    """Path of the C source of workload ``name``; UserError if there is no such workload."""
    names = workload_names()
    if name not in names:
        raise UserError(
            f"unknown workload {name!r}; choose one of: {', '.join(names)}"
        )
    return WORKLOADS_DIR / f"{name}.c"


def amalgamated_source(name: str) -> str:
    """The C text of workload ``name`` with its local ``#include "x.h"`` headers inlined.

    ``#line`` markers keep compiler diagnostics pointing at the real files. The build cache
    keys binaries by a hash of this text, so an edit to a shared header rebuilds every
    workload that includes it (hashing the ``.c`` file alone would reuse stale binaries).
    """
    seen: set[str] = set()

    def expand(path: Path) -> list[str]:
        lines = [f'#line 1 "{path.name}"']
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            header = _LOCAL_INCLUDE.fullmatch(line.strip())
            if header is None:
                lines.append(line)
                continue
            if header.group(1) not in seen:
                seen.add(header.group(1))
                lines.extend(expand(WORKLOADS_DIR / header.group(1)))
            lines.append(f'#line {number + 1} "{path.name}"')
        return lines

    return "\n".join(expand(workload_source(name))) + "\n"


def build_workload(name: str, *, static: bool = False) -> Path:
    """Build workload ``name`` if needed and return the path of its executable.

    ``static`` links it statically (``-static``: a self-contained binary that runs inside any
    container image, e.g. a busybox rootfs, when its directory is bind-mounted); a static
    binary has its own cache entry.

    Compilation is delegated to :func:`benchlab.measure.build.build_source_text`: the binary
    lives in the benchlab binary cache (``$BENCHLAB_CACHE/bin``, else
    ``~/.cache/benchlab/bin``) under a name keyed by a hash of the source text (headers
    inlined), the compiler and the flags, and is renamed into place atomically. A second call
    returns the same file without compiling.

    Raises UserError for an unknown name, a missing compiler or missing C library headers.
    """
    text = amalgamated_source(name)
    try:
        flags = (*CFLAGS, "-static") if static else CFLAGS
        return build.build_source_text(name, text, flags=flags, libs=LDLIBS)
    except build.CompileError as exc:
        if "No such file or directory" in str(exc) and "#include" in str(exc):
            raise UserError(
                f"building workload {name!r} failed: the C library headers are missing; "
                "install them (apt-get install libc6-dev)"
            ) from exc
        raise


def workload_command(name: str, *args: object, static: bool = False) -> list[str]:
    """The argv that runs workload ``name`` with ``args`` (built first if needed; ``static``:
    see :func:`build_workload`)."""
    return [str(build_workload(name, static=static)), *(str(arg) for arg in args)]


@dataclass
class WorkloadOutput:
    """The machine-readable lines of one workload run.

    ``self_times`` holds the BENCHLAB_SELF fields as ints (all in ns: ``wall_ns``, ``cpu_ns``,
    ``start_unix_ns``, ``start_mono_ns``, ``setup_ns``, plus workload-specific ones such as
    ``child_cpu_ns``); ``metrics`` maps a metric name to ``(value, unit)``; ``check`` holds
    the BENCHLAB_CHECK fields as strings (``checksum`` and workload parameters).
    """

    self_times: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, tuple[float, str]] = field(default_factory=dict)
    check: dict[str, str] = field(default_factory=dict)


def parse_workload_output(stdout: str) -> WorkloadOutput:
    """Parse the BENCHLAB_SELF / BENCHLAB_METRIC / BENCHLAB_CHECK lines of a workload's stdout.

    Raises ValueError if there is no BENCHLAB_SELF line or a field is malformed (a bundled
    workload that prints a bad line is a benchlab bug, not a user error).
    """
    parsed = WorkloadOutput()
    for line in stdout.splitlines():
        prefix, _, rest = line.partition(" ")
        pairs = _KEY_VALUE.findall(rest)
        if prefix == SELF_PREFIX:
            parsed.self_times = {key: int(value) for key, value in pairs}
        elif prefix == METRIC_PREFIX:
            fields = dict(pairs)
            unit = fields.pop("unit", "")
            if len(fields) != 1:
                raise ValueError(f"malformed metric line: {line!r}")
            ((metric, value),) = fields.items()
            parsed.metrics[metric] = (float(value), unit)
        elif prefix == CHECK_PREFIX:
            parsed.check = dict(pairs)
    if not parsed.self_times:
        raise ValueError("no BENCHLAB_SELF line in workload output")
    return parsed
