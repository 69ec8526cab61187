"""Bundled, self-timing C workloads: locate, build on first use, and run them.

Each workload is one C file in this directory (``<name>.c``) that includes the shared headers
``*.h`` next to it. :func:`build_workload` compiles it once with the system C compiler into a
cache directory, under a file name keyed by a hash of the sources, the compiler and the flags,
so an edited source or a different compiler gives a new binary and an unchanged one is reused.

Every workload prints, at the end of its stdout, machine-readable lines (see README.md here)::

    BENCHLAB_CHECK checksum=<u64> ...
    BENCHLAB_METRIC <name>=<value> unit=<unit>
    BENCHLAB_SELF wall_ns=<ns> cpu_ns=<ns> start_unix_ns=<ns> start_mono_ns=<ns> setup_ns=<ns>

:func:`parse_workload_output` turns those lines into numbers.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchlab.errors import UserError

WORKLOADS_DIR = Path(__file__).resolve().parent

#: Flags every workload is built with. No -march=native: a binary should do the same work
#: on every machine of one architecture, so results stay comparable across machines.
CFLAGS: tuple[str, ...] = ("-O2", "-std=c11", "-Wall")
LDLIBS: tuple[str, ...] = ("-lm",)

#: Compilers tried, in order, when $CC is not set.
_COMPILER_CANDIDATES = ("cc", "gcc", "clang")

SELF_PREFIX = "BENCHLAB_SELF"
METRIC_PREFIX = "BENCHLAB_METRIC"
CHECK_PREFIX = "BENCHLAB_CHECK"

_KEY_VALUE = re.compile(r"(\w+)=(\S+)")


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


def cache_dir() -> Path:
    """Directory holding built workload binaries.

    ``$BENCHLAB_CACHE/bin`` if ``BENCHLAB_CACHE`` is set, else ``$XDG_CACHE_HOME/benchlab/bin``,
    else ``~/.cache/benchlab/bin``.
    """
    root = os.environ.get("BENCHLAB_CACHE")
    if root:
        return Path(root).expanduser() / "bin"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "benchlab" / "bin"


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` (may carry flags) or the first of cc, gcc, clang on PATH.

    Raises UserError naming the fix when none is found.
    """
    from_env = os.environ.get("CC", "").strip()
    if from_env:
        argv = shlex.split(from_env)
        resolved = shutil.which(argv[0])
        if resolved is None:
            raise UserError(
                f"$CC is {from_env!r} but {argv[0]!r} is not an executable on PATH; "
                "fix or unset CC"
            )
        return [resolved, *argv[1:]]
    for candidate in _COMPILER_CANDIDATES:
        resolved = shutil.which(candidate)
        if resolved is not None:
            return [resolved]
    raise UserError(
        "no C compiler found (tried $CC, cc, gcc, clang) to build the bundled workloads; "
        "install one (e.g. `apt-get install gcc libc6-dev`) or set CC"
    )


def _compiler_identity(compiler: list[str]) -> bytes:
    """Bytes that change when the compiler changes, cheaply (no subprocess): the resolved
    path, size and mtime of the compiler executable plus any flags in $CC."""
    executable = Path(compiler[0]).resolve()
    stat = executable.stat()
    return f"{executable}\0{stat.st_size}\0{stat.st_mtime_ns}\0{compiler[1:]}".encode()


def _build_key(name: str, compiler: list[str]) -> str:
    """Hex digest over everything that determines the binary."""
    digest = hashlib.sha256()
    digest.update(_compiler_identity(compiler))
    digest.update("\0".join((*CFLAGS, *LDLIBS)).encode())
    # Headers are shared and small: hashing all of them is simpler and safer than tracking
    # which source includes which.
    for path in [workload_source(name), *sorted(WORKLOADS_DIR.glob("*.h"))]:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_workload(name: str) -> Path:
    """Build workload ``name`` if needed and return the path of its executable.

    The binary lives in :func:`cache_dir` as ``<name>-<hash>``; the hash covers the sources,
    compiler and flags, so a second call returns the same file without compiling. The
    compiler writes to a temporary file in the same directory that is renamed into place,
    so concurrent builders never see (or leave) a half-written binary.

    Raises UserError for an unknown name, a missing compiler, an unwritable cache directory
    or a failed compilation.
    """
    source = workload_source(name)
    compiler = find_compiler()
    target_dir = cache_dir()
    target = target_dir / f"{name}-{_build_key(name, compiler)}"
    if target.is_file() and os.access(target, os.X_OK):
        return target
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target_dir)
    except OSError as exc:
        raise UserError(
            f"cannot write the workload cache {target_dir} ({exc.strerror}); "
            "set BENCHLAB_CACHE to a writable directory"
        ) from exc
    os.close(fd)
    temp = Path(temp_name)
    command = [*compiler, *CFLAGS, "-o", str(temp), str(source), *LDLIBS]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            first_error = next(
                (line for line in result.stderr.splitlines() if "error" in line),
                result.stderr.strip().splitlines()[0] if result.stderr.strip() else "",
            )
            raise UserError(
                f"building workload {name!r} failed ({shlex.join(command)}): {first_error}; "
                "check that the C compiler and libc headers work (e.g. `apt-get install "
                "gcc libc6-dev`) or set CC to a working compiler"
            )
        temp.chmod(0o755)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target


def workload_command(name: str, *args: object) -> list[str]:
    """The argv that runs workload ``name`` with ``args`` (built first if needed)."""
    return [str(build_workload(name)), *(str(arg) for arg in args)]


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
