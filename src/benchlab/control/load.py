"""Background load for the duration of a session: ``--load cpu:N | memcpy:N | spin:N``.

Seed 000 measured how results degrade when other work shares the machine. ``cpu:N`` and
``memcpy:N`` start N stress-ng workers (its ``--cpu`` / ``--memcpy`` stressors) when stress-ng is
installed, and fall back to the built-in spinner otherwise (stored as such). ``spin:N`` always
uses the built-in spinner: N processes running a tight arithmetic loop, which needs nothing
installed. Load processes get their own process group so they can be stopped as a whole.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from benchlab.errors import UserError

KINDS = ("cpu", "memcpy", "spin")

_SPINNER = "import os\nx = 0\nwhile True:\n    x = (x * 1103515245 + 12345) & 0xFFFFFFFF\n"


@dataclass(frozen=True)
class LoadSpec:
    """What background load to run: ``kind`` in cpu/memcpy/spin, ``workers`` processes."""

    kind: str
    workers: int

    def to_dict(self) -> dict:
        """Plain-data form for the stored setup."""
        return {"kind": self.kind, "workers": self.workers}


def parse_load(text: str | None) -> LoadSpec | None:
    """Parse ``cpu:N``, ``memcpy:N`` or ``spin:N`` (None or ``none`` means no load)."""
    if text is None or text.strip().lower() in ("", "none"):
        return None
    kind, sep, count = text.strip().partition(":")
    if kind not in KINDS or not sep:
        raise UserError(f"--load {text!r} is not understood; use cpu:N, memcpy:N or spin:N")
    try:
        workers = int(count)
    except ValueError:
        raise UserError(f"--load {text!r}: N must be a whole number of workers") from None
    if not 1 <= workers <= 1024:
        raise UserError(f"--load {text!r}: N must be between 1 and 1024")
    return LoadSpec(kind, workers)


@dataclass
class BackgroundLoad:
    """Context manager that runs the load and stops every load process on exit.

    ``backend`` tells what actually ran ("stress-ng" or "builtin-spinner"); ``argv`` the commands.
    """

    spec: LoadSpec
    cpus: tuple[int, ...] | None = None
    backend: str = ""
    argv: list[list[str]] = field(default_factory=list)
    _procs: list[subprocess.Popen] = field(default_factory=list)

    def __enter__(self) -> "BackgroundLoad":
        stress = shutil.which("stress-ng")
        if self.spec.kind in ("cpu", "memcpy") and stress:
            self.backend = "stress-ng"
            argv = [stress, f"--{self.spec.kind}", str(self.spec.workers), "--timeout", "0",
                    "--quiet"]
            if self.cpus:
                argv += ["--taskset", ",".join(map(str, self.cpus))]
            self.argv = [argv]
        else:
            self.backend = "builtin-spinner"
            self.argv = [[sys.executable, "-c", _SPINNER] for _ in range(self.spec.workers)]
        for argv in self.argv:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            if self.cpus and self.backend == "builtin-spinner":
                os.sched_setaffinity(proc.pid, self.cpus)
            self._procs.append(proc)
        time.sleep(0.2)  # let the load reach steady state before the first measured run
        dead = [p for p in self._procs if p.poll() is not None]
        if dead:
            self.__exit__(None, None, None)
            raise UserError(f"the background load ({' '.join(self.argv[0][:3])} ...) exited at once "
                            f"with code {dead[0].returncode}; check that it runs on this machine")
        return self

    def __exit__(self, *exc) -> None:
        for proc in self._procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for proc in self._procs:
            proc.wait()
        self._procs.clear()

    def pids(self) -> list[int]:
        """Process ids of the load's top-level processes (empty when stopped)."""
        return [p.pid for p in self._procs]

    def to_dict(self) -> dict:
        """What ran, for the stored setup."""
        return {**self.spec.to_dict(), "backend": self.backend,
                "cpus": list(self.cpus) if self.cpus else None}
