"""Who owns a running session: process id, host, and the process's start time.

A pid alone is not an identity: after the owner dies the kernel may give its pid to another
process. The start time (field 22 of ``/proc/PID/stat``, clock ticks since boot) together with
the boot id tells a recycled pid, or a reboot, from the owner still running.
"""

from __future__ import annotations

import os
from typing import Any, Mapping


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as fh:  # hex digits
            return fh.read().strip()
    except OSError:
        return "unknown-boot"


def process_start(pid: int) -> str | None:
    """``BOOT_ID:TICKS`` identifying process ``pid`` on this machine, or None when no such
    process exists (TICKS: its start time in clock ticks since boot)."""
    try:
        # UTF-8 (built in; "ascii" imported a codec module at every run's start): only the
        # numbers after the command name are used, which decode alike
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        ticks = fields[19]  # field 22 overall: starttime
    except IndexError:
        return None
    return f"{_boot_id()}:{ticks}"


def hostname() -> str:
    """This machine's host name (as recorded in ``sessions.owner_host``)."""
    return os.uname().nodename  # gethostname(2) itself, without importing socket


def current_owner() -> dict[str, Any]:
    """The owner columns for this process: ``owner_pid``, ``owner_host``, ``owner_start``."""
    pid = os.getpid()
    return {"owner_pid": pid, "owner_host": hostname(), "owner_start": process_start(pid)}


def owner_alive(row: Mapping[str, Any]) -> bool | None:
    """Whether the process that owns session ``row`` still runs: True, False, or None when it
    cannot be told from here (another host sharing the file).

    A session written before owners were recorded (schema 1) has no owner: its writer was a
    benchlab older than the one reading, which cannot still be running against this schema.
    """
    pid, host, start = row.get("owner_pid"), row.get("owner_host"), row.get("owner_start")
    if pid is None:
        return False
    if host is not None and host != hostname():
        return None
    now = process_start(int(pid))
    if now is None:
        return False
    return start is None or now == start


def effective_status(row: Mapping[str, Any]) -> str:
    """A session's status as users should see it: ``crashed`` for a ``running`` session whose
    owner process is gone (it never finished and nothing is writing it), else the stored one."""
    status = row.get("status")
    if status == "running" and owner_alive(row) is False:
        return "crashed"
    return str(status)
