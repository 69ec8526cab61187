"""Compile bundled C sources on demand, once per (source, compiler, flags).

benchlab ships small C programs as source (the exec helper, workloads, test programs) and
compiles them with the system C compiler the first time they are needed.  Binaries live in
``bin`` of the user's cache (:func:`benchlab.paths.user_cache_dir`: ``$BENCHLAB_CACHE/bin``
when ``BENCHLAB_CACHE`` is set, else ``$XDG_CACHE_HOME/benchlab/bin``, else
``~/.cache/benchlab/bin``), under a name that includes a hash of the source text, the
compiler's identity and the flags; a changed source or compiler gives a new binary and an old
one is never reused by mistake.  A build holds an exclusive ``flock`` on ``locks/<binary>.lock``
beside ``bin``, so two first runs at once compile once: the second waits and then finds the
binary.  Builds still go to a temporary file in the same directory and
are renamed into place, so a reader never sees half a binary (even on a file system whose locks
do not work).
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from benchlab.digests import sha256
from benchlab.errors import UserError
from benchlab.paths import user_cache_dir

NO_COMPILER_MESSAGE = "no C compiler found; install gcc (apt-get install gcc)"

DEFAULT_FLAGS: tuple[str, ...] = ("-O2",)


class CompileError(RuntimeError):
    """A bundled C source did not compile: a bug in benchlab or a broken toolchain."""


def cache_dir() -> Path:
    """Directory holding compiled binaries (created on demand by :func:`build`): ``bin`` in
    :func:`benchlab.paths.user_cache_dir`."""
    return user_cache_dir() / "bin"


def find_c_compiler() -> str | None:
    """Absolute path of the C compiler to use, or None if none exists.

    ``$CC`` when set (and then only it, as ``make`` does: ``CC=/nowhere`` means no compiler),
    else the first of cc, gcc, clang on ``PATH``.
    """
    chosen = os.environ.get("CC")
    for name in [chosen] if chosen else ["cc", "gcc", "clang"]:
        path = shutil.which(name)
        if path:
            return path
    return None


@functools.lru_cache(maxsize=None)
def _compiler_identity(compiler: str) -> str:
    """The compiler driver's real path, size and mtime (ns): part of the cache key.

    A ``stat``, not ``cc --version``: every ``benchlab run`` locates the exec helper, and a
    subprocess there cost milliseconds of start-up. An upgraded compiler replaces its driver
    binary, which changes the key.
    """
    real = os.path.realpath(compiler)
    try:
        st = os.stat(real)
    except OSError as exc:
        raise UserError(f"C compiler {compiler} cannot be read ({exc.strerror}); "
                        "install gcc (apt-get install gcc)")
    return f"{real}\n{st.st_size}\n{st.st_mtime_ns}"


def _cache_key(source_text: bytes, compiler: str, flags: Sequence[str], libs: Sequence[str]) -> str:
    digest = sha256()
    digest.update(source_text)
    digest.update(b"\0" + _compiler_identity(compiler).encode())
    digest.update(b"\0" + "\0".join(flags).encode())
    digest.update(b"\0" + "\0".join(libs).encode())
    return digest.hexdigest()[:20]


@functools.lru_cache(maxsize=None)
def build_cached(
    source: Path, flags: tuple[str, ...], libs: tuple[str, ...], try_static: bool, mtime_ns: int
) -> Path:
    """The executable built from C ``source`` with ``flags`` and ``libs``, from the user's
    cache when one with the same source, compiler and flags is there (``mtime_ns``, the
    source's modification time in ns, keys this process's memo)."""
    compiler = find_c_compiler()
    if compiler is None:
        raise UserError(NO_COMPILER_MESSAGE)
    source_text = source.read_bytes()
    key = _cache_key(source_text, compiler, flags + (("-static?",) if try_static else ()), libs)
    out_dir = cache_dir()
    target = out_dir / f"{source.stem}-{key}"
    if os.access(target, os.X_OK):
        return target
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create the binary cache {out_dir} ({exc.strerror}); "
            "set BENCHLAB_CACHE to a writable directory"
        )
    lock_dir = out_dir.parent / "locks"  # beside bin/, which holds nothing but binaries
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / f"{target.name}.lock", "w") as lock:
        # One compiler at a time per binary: a concurrent first run waits here, then finds it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.access(target, os.X_OK):
            return target
        return _compile(compiler, source, target, flags, libs, try_static)


def _compile(compiler: str, source: Path, target: Path, flags: tuple[str, ...],
             libs: tuple[str, ...], try_static: bool) -> Path:
    """Compile ``source`` to a temporary file beside ``target`` and rename it into place."""
    import tempfile  # only to compile: every run locates the helper, and tempfile brings random

    attempts = [("-static",), ()] if try_static else [()]
    errors = []
    for extra in attempts:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{source.stem}-", dir=target.parent)
        os.close(fd)
        cmd = [compiler, *flags, *extra, "-o", tmp_name, str(source), *libs]
        import subprocess  # only to compile: every run locates the helper (~1.5 ms)

        try:
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                                      check=False)
            except OSError as exc:
                raise UserError(f"C compiler {compiler} cannot run ({exc.strerror}); "
                                "install gcc (apt-get install gcc)")
            if proc.returncode == 0:
                os.chmod(tmp_name, 0o755)
                os.replace(tmp_name, target)  # atomic: readers see no binary or a whole one
                return target
            errors.append(f"$ {' '.join(cmd)}\n{proc.stderr.strip()}")
        finally:
            if os.path.exists(tmp_name):
                os.unlink(tmp_name)
    raise CompileError(f"compiling {source} failed:\n" + "\n".join(errors))


def build(
    source: str | os.PathLike[str],
    flags: Sequence[str] = DEFAULT_FLAGS,
    libs: Sequence[str] = (),
    try_static: bool = False,
) -> Path:
    """Compile a C source file (if not already cached) and return the executable's path.

    Parameters
    ----------
    source : path-like
        The C source file.
    flags : sequence of str
        Compiler flags; default ``("-O2",)``.
    libs : sequence of str
        Linker arguments placed after the source, e.g. ``("-lm",)``.
    try_static : bool
        Link statically if the C library allows it (smaller RSS, faster exec), else dynamically.

    Returns
    -------
    Path
        Executable in :func:`cache_dir`. Repeated calls in one process cost one ``stat``.

    Raises
    ------
    UserError
        No C compiler is installed.
    CompileError
        The source does not compile.
    """
    path = Path(source).resolve()
    return build_cached(path, tuple(flags), tuple(libs), try_static, path.stat().st_mtime_ns)


def build_source_text(
    name: str,
    text: str,
    flags: Sequence[str] = DEFAULT_FLAGS,
    libs: Sequence[str] = (),
) -> Path:
    """Compile C source given as a string (tests, generated workloads); return the executable path.

    The text is written to ``cache_dir()/src/<name>-<hash>.c`` first, so the binary is cached
    like any bundled source.
    """
    digest = sha256(text.encode()).hexdigest()[:16]
    src_dir = cache_dir() / "src"
    src_path = src_dir / f"{name}-{digest}.c"
    if not src_path.exists():
        import tempfile  # only to write a new source

        src_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{name}-", suffix=".c", dir=src_dir)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp_name, src_path)
    return build(src_path, flags=flags, libs=libs)
