"""Background load for the duration of a session: ``--load cpu:N | memcpy:N | spin:N``.

The stability study measured how results degrade when other work shares the machine. ``cpu:N`` and
``memcpy:N`` start N stress-ng workers (its ``--cpu`` / ``--memcpy`` stressors) when stress-ng is
installed, and fall back to the built-in spinner otherwise (stored as such). ``spin:N`` always
uses the built-in spinner: N processes running a tight arithmetic loop, which needs nothing
installed. Load processes get their own process group so they can be stopped as a whole.

Why the load stays in benchlab's session: with ``CONFIG_SCHED_AUTOGROUP`` (on by default in
Debian's kernel, ``/proc/sys/kernel/sched_autogroup_enabled``), CFS first shares the CPUs
between *sessions* (autogroups) and only then between the processes of one session. A load
started in a new session (``setsid``) is therefore one entity however many workers it has, and
``--load cpu:8`` on 2 CPUs slowed a CPU-bound loop only from 0.44 s to 0.51 s. In benchlab's own
session each worker competes with the measured program as one process among N+1, as the OS-features report's
100 CPU-wasting processes did with its fixed task (17.7 s against 2.2-2.5 s in a cgroup of its
own). :meth:`BackgroundLoad.to_dict` records where the load ran (session, autogroup, nice,
scheduling policy, cgroup, method) so a result can be read with it.
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
from benchlab.processes import cpu_ticks, interrupts_deferred, process_stats

KINDS = ("cpu", "memcpy", "spin")

#: How long (s) the load may take to start competing before the session goes on anyway.
READY_TIMEOUT_S = 10.0
#: CPU time (clock ticks, 10 ms each at USER_HZ 100) each worker must use before runs start.
READY_CPU_TICKS = 2

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
            # stress-ng's default --cpu method "all" cycles through every method; it never sleeps
            # (--cpu-load defaults to 100), so each worker is a plain CPU hog.
        else:
            self.backend = "builtin-spinner"
            self.argv = [[sys.executable, "-c", _SPINNER] for _ in range(self.spec.workers)]
        try:
            self._start_and_wait()
        except BaseException:
            # Ctrl-C/SIGTERM while the load starts (the wait for it to compete lasts up to
            # READY_TIMEOUT_S): __exit__ is not called for a failed __enter__, and stress-ng
            # (--timeout 0) and the spinners would run on for good
            self.__exit__(None, None, None)
            raise
        return self

    def _start_and_wait(self) -> None:
        """Start every load process, then wait until each worker competes (or is dead)."""
        # a process started is a process recorded (and so stopped): a Ctrl-C that landed
        # between a Popen and the list, or inside the Popen, left that one running
        with interrupts_deferred():
            for argv in self.argv:
                # process_group=0, not start_new_session: see the module docstring (autogroups)
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, process_group=0)
                self._procs.append(proc)
                if self.cpus and self.backend == "builtin-spinner":
                    os.sched_setaffinity(proc.pid, self.cpus)
        deadline = time.monotonic() + READY_TIMEOUT_S
        # stress-ng forks its workers itself: on a busy machine that takes longer than 0.2 s,
        # and the placement recorded below counted the parent alone (1 process of 9, at load 16)
        expected = len(self._procs) + (self.spec.workers if self.backend == "stress-ng" else 0)
        while len(self.worker_pids()) < expected and time.monotonic() < deadline \
                and self._all_alive():
            time.sleep(0.05)
        self._wait_until_competing(deadline)
        dead = [p for p in self._procs if p.poll() is not None]
        if dead:
            self.__exit__(None, None, None)
            raise UserError(f"the background load ({' '.join(self.argv[0][:3])} ...) exited at once "
                            f"with code {dead[0].returncode}; check that it runs on this machine")
        self._placement = _placement(self.worker_pids())

    def _all_alive(self) -> bool:
        return all(p.poll() is None for p in self._procs)

    def competing_pids(self) -> list[int]:
        """The processes that do the load's work: stress-ng's parent only waits for its workers."""
        parents = set(self.pids()) if self.backend == "stress-ng" else set()
        return [pid for pid in self.worker_pids() if pid not in parents]

    def _wait_until_competing(self, deadline: float) -> None:
        """Return once every load worker has run for :data:`READY_CPU_TICKS` clock ticks since
        the first look (or at ``deadline``).

        Existing is not competing: a worker still starting (an interpreter importing, stress-ng
        setting up) leaves the CPUs to the measured program, and a CI run once measured a loop
        "under" spin:8 exactly as fast as alone. CPU time that grows is the proof it competes.
        """
        start = {pid: cpu_ticks(pid) for pid in self.competing_pids()}
        while time.monotonic() < deadline and self._all_alive():
            now = {pid: cpu_ticks(pid) for pid in start}
            if all(now[pid] is not None and start[pid] is not None
                   and now[pid] - start[pid] >= READY_CPU_TICKS for pid in start):
                return
            time.sleep(0.02)

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

    def worker_pids(self) -> list[int]:
        """Every running process of the load (stress-ng's workers too), by process group."""
        groups = set(self.pids())
        return sorted(pid for pid, fields in process_stats() if int(fields[2]) in groups)

    def to_dict(self) -> dict:
        """What ran and how it competed, for the stored setup.

        Keys: kind, workers, backend, cpus, method (the command), and ``placement``: how many
        processes, whether they share benchlab's session (so its autogroup), their autogroup,
        nice values, scheduling policies and cgroups (``/proc/<pid>/cgroup``, one per line).
        """
        return {**self.spec.to_dict(), "backend": self.backend,
                "cpus": list(self.cpus) if self.cpus else None,
                "method": " ".join(self.argv[0]) if self.argv else None,
                "placement": getattr(self, "_placement", None)}


_POLICIES = {getattr(os, name): name for name in
             ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR")
             if hasattr(os, name)}


def _placement(pids: list[int]) -> dict:
    """Where the load's processes run and with what priority, as they are now."""
    own_session = os.getsid(0)
    nice, policies, cgroups, autogroups, sessions = set(), set(), set(), set(), set()
    for pid in pids:
        try:
            nice.add(os.getpriority(os.PRIO_PROCESS, pid))
            policies.add(_POLICIES.get(os.sched_getscheduler(pid), "unknown"))
            sessions.add(os.getsid(pid))
            with open(f"/proc/{pid}/cgroup") as fh:
                cgroups.add(fh.read().strip())
        except OSError:
            continue  # exited meanwhile
        try:
            with open(f"/proc/{pid}/autogroup") as fh:
                autogroups.add(fh.read().strip())
        except OSError:
            pass  # kernel without CONFIG_SCHED_AUTOGROUP
    return {"processes": len(pids), "same_session_as_benchlab": sessions == {own_session},
            "autogroups": sorted(autogroups), "nice": sorted(nice),
            "sched_policies": sorted(policies), "cgroups": sorted(cgroups)}
