"""Running one harness run: the command through the shell, its output read by its harness.

Used by ``run --harness`` and by the gates (``ab``/``gate``/``bisect --harness``): each calls
:func:`run_harness` once per run (per side, per pair) and gets what the harness reported.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchlab.measure.harnesses import HarnessFailed, Prepared, get_harness
from benchlab.processes import interrupts_deferred
from benchlab.store.formats.common import ImportedSession
from benchlab.store.formats.reported import Reported, reported_of

#: Characters of the command's standard error quoted when it fails (the tail: the error).
_ERR_KEEP = 600


@dataclass
class HarnessRun:
    """One harness run: what it reported (parsed and by metric) and how long it took.

    Attributes
    ----------
    imported : ImportedSession
        The run's output parsed by the format's one parser.
    reported : Reported
        The same values by benchmark and metric.
    wall_ns : int
        The whole command's wall time, ns (the harness's, not any benchmark's).
    """

    imported: ImportedSession
    reported: Reported
    wall_ns: int


def _stop(proc: subprocess.Popen) -> None:
    """End the command's whole process group (a shell and what it started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _clear_output(prepared: Prepared, workdir: Path) -> None:
    """Remove an earlier run's output in ``workdir`` (a gate reuses one per side): a run reads
    only what it wrote, e.g. none of criterion's results of benchmarks narrowed away since.
    Output outside ``workdir`` is the user's and is left alone."""
    out = prepared.output
    if out is None or not out.is_relative_to(workdir):
        return
    if out.is_dir() and not out.is_symlink():
        shutil.rmtree(out, ignore_errors=True)
    else:
        out.unlink(missing_ok=True)


def run_harness(kind: str, command: str, *, cwd: str | os.PathLike | None = None,
                timeout_s: float | None = None, label: str = "") -> HarnessRun:
    """Run ``command`` (a shell command line) as a ``kind`` harness once and read its results.

    Parameters
    ----------
    kind : str
        A harness kind (:func:`~benchlab.measure.harnesses.harness_kinds`).
    command : str
        The harness's command, run with ``/bin/sh -c`` in ``cwd``.
    timeout_s : float, optional
        Seconds after which the command is killed and the run fails.
    label : str
        Names the run in messages (e.g. ``head, pair 3``).

    Raises
    ------
    UserError
        The command cannot be read by this harness (before anything runs; exit 2).
    HarnessFailed
        The command failed, timed out or reported no benchmark (exit 3).
    """
    harness = get_harness(kind)
    workdir = Path(tempfile.mkdtemp(prefix="benchlab-harness-"))
    try:
        prepared = harness.prepare(command, workdir)
        return run_prepared(kind, prepared, command, workdir, cwd=cwd, timeout_s=timeout_s,
                            label=label)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_prepared(kind: str, prepared: Prepared, command: str, workdir: Path, *,
                 cwd: str | os.PathLike | None = None, timeout_s: float | None = None,
                 label: str = "") -> HarnessRun:
    """One run of a command already made by :meth:`Harness.prepare` (``workdir``: where its
    standard output and error go; the gates reuse one per side). ``command`` is the user's
    command, for messages. Raises :class:`HarnessFailed` as :func:`run_harness`."""
    harness = get_harness(kind)
    source = f"{kind} run{' (' + label + ')' if label else ''}"
    _clear_output(prepared, workdir)
    out_path, err_path = workdir / "stdout", workdir / "stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.monotonic_ns()
        with interrupts_deferred():  # its pid must never be lost to a Ctrl-C
            proc = subprocess.Popen(["/bin/sh", "-c", prepared.command], cwd=cwd,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env={**os.environ, **prepared.env},
                                    start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise HarnessFailed(f"{source}: `{command}` ran longer than {timeout_s:g} s and "
                                f"was stopped; raise the timeout or shorten the "
                                f"benchmarks") from None
        except BaseException:  # Ctrl-C, SIGTERM: the harness goes too
            _stop(proc)
            raise
        wall_ns = time.monotonic_ns() - start
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    if code != 0:
        tail = err_path.read_text(encoding="utf-8", errors="replace")[-_ERR_KEEP:].strip()
        tail = tail or stdout[-_ERR_KEEP:].strip()
        raise HarnessFailed(f"{source}: `{command}` exited with status {code}"
                            f"{': ' + ' | '.join(tail.splitlines()[-4:]) if tail else ''}")
    imported = harness.parse(prepared, stdout, source)
    return HarnessRun(imported=imported, reported=reported_of(imported),
                      wall_ns=wall_ns)
