"""Whether a process is alive: the one test behind every sweep of what a dead benchlab left
(cgroups, containers, scratch directories, build worktrees); and every process's
``/proc/<pid>/stat``, read one way for the sweeps that look for a parent or a process group."""

import os
from collections.abc import Iterator


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists on this machine (owned by anyone).

    ``kill(pid, 0)`` sends nothing: ProcessLookupError means gone; PermissionError means it
    exists but belongs to another user, so it counts as alive (its leftovers are not ours to
    sweep).
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_stats() -> Iterator[tuple[int, list[str]]]:
    """Every process on this machine, as (pid, fields): the fields of ``/proc/<pid>/stat`` after
    the command name, so ``fields[0]`` is the state, ``[1]`` the parent's pid, ``[2]`` the
    process group and ``[19]`` the start time in clock ticks since boot. A process that ends
    while the list is read is left out."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may hold spaces and ')': the fields start after the last ')'
        yield int(entry), stat[stat.rfind(")") + 2:].split()
