"""A SIGTERM (or Ctrl-C) whose handler runs inside a ``__del__`` prints nothing, and still
interrupts the session's loop at its next checkpoint.

Found under load in the full suite: ``study run --cluster local:2`` got SIGTERM while the main
thread ran a Dask future's ``__del__``; Python printed "Exception ignored in ... Traceback ...
KeyboardInterrupt" on stderr and went on until the next checkpoint. The finalizer here sends
the signal itself, so its handler runs inside the finalizer every time (a real signal, in a
process of its own: pytest-xdist's workers handle signals their own way); the loop after it
calls the checkpoint the executor's and the study's loops call.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

SCRIPT = """
import os, signal, sys, time
from benchlab.core.session import interruptible, raise_if_terminated

# Ctrl-C as the console script has it (benchlab.python_interrupts): a process started from a
# background job or a pytest-xdist worker inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)

class Dropped:
    def __del__(self):
        os.kill(os.getpid(), signal.{name})
        for _ in range(10000):  # the handler runs here, inside the finalizer
            pass

outcome = "not interrupted"
try:
    with interruptible() as received:
        Dropped()  # dropped at once: its __del__ runs here
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # a loop with its checkpoint
            raise_if_terminated()
        outcome = "not interrupted"
except KeyboardInterrupt:
    outcome = f"interrupted, signal {{received.signum}}"
print(outcome)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_handled_inside_a_finalizer_interrupts_the_code_after_it(name):
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(name=name)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    expected = getattr(signal, name).value  # a lost Ctrl-C is recorded as SIGINT
    assert proc.stdout.strip() == f"interrupted, signal {expected}", (proc.stdout, proc.stderr)
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
