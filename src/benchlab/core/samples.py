"""What a run reports beyond the harness's clocks: ``--metric`` values, ``--samples-csv`` rows,
and the signal a shell reports in its exit code.

The first two are read after the run ended, from files the run left in the session's scratch
directory (stdout/stderr captures) or where the program wrote them (the samples file).

A command run through a POSIX shell (the default, as in hyperfine) that is killed by signal N
makes the shell exit with 128 + N: the harness sees the *shell* exit 139, not a SIGSEGV.
benchlab keeps what happened to the process it started (status ``failed``, ``exit_code`` 139,
so ``--ignore-failure=139`` works as in hyperfine) and records the signal the code stands for
(``signal`` 11) with a note in ``extra.signal_via_shell`` (:func:`signal_via_shell`). A program
that really exits 139 on its own under a shell is recorded the same way: the shell cannot tell
them apart; run it with ``-N`` to see the real ending.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
from typing import Any

from benchlab.core.plan import MetricSpec
from benchlab.errors import UserError

#: How much of a failing run's stderr is kept with the run, bytes.
STDERR_TAIL_BYTES = 2000


def read_samples_csv(path: str) -> tuple[dict[str, list[float]], list[str]]:
    """Read ``label,value`` rows (``#`` lines are metadata) written by the program.

    Returns (values by label, metadata lines). A first row whose value is not a number is a
    header (``book_type,nanoseconds``); ``nan``/``inf`` values are refused.
    Raises UserError on a malformed row.
    """
    from benchlab.store.formats.readers import iter_lines, join_quoted, open_text

    values: dict[str, list[float]] = {}
    meta: list[str] = []
    # The store's reader: binary, UTF-16, corrupt gzip and line-less files are one line each.
    with open_text(path, "a samples CSV (label,value rows)") as fh:
        for lineno, line in join_quoted(iter_lines(fh, path), path):  # quoted line breaks
            _samples_row(path, lineno, line, values, meta)
    if not values:
        # An empty file (or one with only a header or # lines) is a program that reported
        # nothing: storing the run without its samples would hide that.
        raise UserError(f"{path} holds no samples (no label,value row); the program must "
                        f"write one label,value row per sample")
    return values, meta


def _samples_row(path: str, lineno: int, line: str, values: dict[str, list[float]],
                 meta: list[str]) -> None:
    s = line.strip()
    if not s:
        return
    if s.startswith("#"):
        meta.append(s[1:].strip())
        return
    import csv  # a samples file only: off every run's start

    try:
        row = next(csv.reader(io.StringIO(s)))
    except csv.Error as exc:
        raise UserError(f"{path}:{lineno}: not a CSV row ({exc}); write label,value") from None
    if len(row) != 2:
        raise UserError(f"{path}:{lineno}: expected 'label,value', got {s[:80]!r}; "
                        f"the program must write one label,value row per sample")
    try:
        value = float(row[1])
    except ValueError:
        if not values:  # a header line such as book_type,nanoseconds
            meta.append(s)
            return
        raise UserError(f"{path}:{lineno}: value {row[1][:40]!r} is not a number; "
                        f"write numeric values in the second column") from None
    if not math.isfinite(value):
        raise UserError(f"{path}:{lineno}: value {row[1]!r} is not a finite number; "
                        f"write finite numeric values")
    label = row[0].strip()
    if label in _harness_names():
        raise UserError(f"{path}:{lineno}: label {label!r} is the name of a series benchlab "
                        f"measures itself, which would hide it; write another label, e.g. "
                        f"{label}_reported")
    values.setdefault(label, []).append(value)


def _harness_names() -> dict[str, Any]:
    from benchlab.store.queries import HARNESS_METRICS

    return HARNESS_METRICS


def extract_metrics(metrics: list[MetricSpec], out_path: str | None, err_path: str | None
                    ) -> dict[str, list[float]]:
    """Samples of each ``--metric`` found in the run's stdout, then stderr (in the metric's unit).

    Raises UserError when a regex captured text that is not a finite number.
    """
    if not metrics:
        return {}
    from benchlab.store.formats.metric_spec import extract_stream

    out: dict[str, list[float]] = {spec.name: [] for spec in metrics}
    for p in (out_path, err_path):
        if p and os.path.exists(p):
            # matched in blocks of whole lines: memory stays bounded by the block, not by
            # what the program printed (1 GB of output used to take 2 GB)
            with open(p, "rb") as fh:
                for name, values in extract_stream(metrics, fh).items():
                    out[name] += values
    return out


#: Shells that report a child killed by signal N as exit status 128 + N.
POSIX_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash",
                          "busybox"})


def signal_via_shell(m: Any, shell: str | None, extra: dict[str, Any]) -> Any:
    """``m`` (a :class:`~benchlab.measure.spawn.RunMeasurement`) with ``signal`` set to N when
    the run went through a POSIX ``shell`` that exited 128 + N for a valid signal N; a note is
    put in ``extra["signal_via_shell"]``. Status and exit code stay what the shell did (see the
    module docstring)."""
    import shlex

    if not shell or m.status != "failed" or m.signal is not None or m.exit_code is None:
        return m
    try:
        name = os.path.basename(shlex.split(shell)[0])
    except (ValueError, IndexError):
        return m
    number = m.exit_code - 128
    import signal as _signal  # its names, for a failed shell run only

    if name not in POSIX_SHELLS or number not in {int(s) for s in _signal.valid_signals()}:
        return m
    try:
        signame = _signal.Signals(number).name
    except ValueError:
        signame = f"signal {number}"
    extra["signal_via_shell"] = (f"the shell exited {m.exit_code} = 128 + {number}: the command "
                                 f"it ran was killed by {signame} (or exited {m.exit_code})")
    return dataclasses.replace(m, signal=number)


def tail(path: str | None, limit: int = STDERR_TAIL_BYTES) -> str | None:
    """The last ``limit`` bytes of a file as text (None when absent or empty)."""
    if not path or not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - limit))
        data = fh.read().decode(errors="replace").strip()
    return data or None
