"""Ctrl-C during start-up: how often does ``benchlab`` end in a traceback instead of one line?

Starts ``benchlab run -r 1 -N true`` and sends SIGINT (at SIGINT's default action, as in a
terminal) after 0, 1, ... ``--max-ms`` milliseconds, ``--repeat`` times each; prints the
tracebacks seen and where they came from: the interpreter's own initialisation, the console
script before benchlab's first line runs (neither can be caught by benchlab), or benchlab's
code (the window ``benchlab/__init__.py`` closes until ``main`` handles Ctrl-C itself).

Usage: .venv/bin/python bench/sigint_startup.py [--max-ms 40] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

BENCHLAB = os.path.join(os.path.dirname(sys.executable), "benchlab")


def _origin(err: str) -> str:
    """Where a start-up traceback came from: the interpreter, or benchlab's code."""
    if "Fatal Python error" in err:
        return "the interpreter's own initialisation (" + err.split(":", 2)[1].strip() + ")"
    if "/benchlab/" not in err.replace("bin/benchlab", ""):
        return "the console script before benchlab's first line ran (import machinery)"
    return "benchlab's code: " + err.strip().splitlines()[-1][:100]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-ms", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    where: Counter[str] = Counter()
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for delay_ms in range(args.max_ms):
                proc = subprocess.Popen(
                    [BENCHLAB, "run", "-r", "1", "-N", "true", "--db", f"{tmp}/s.db"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
                time.sleep(delay_ms / 1000)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate()
                total += 1
                if "Traceback" in err:
                    origin = _origin(err)
                    where[origin] += 1
                    print(f"  {delay_ms:3d} ms: exit {proc.returncode}, {origin}")
    print(f"tracebacks: {sum(where.values())} of {total} signals")
    for origin, n in where.most_common():
        print(f"  {n:4d}  {origin}")


if __name__ == "__main__":
    main()
