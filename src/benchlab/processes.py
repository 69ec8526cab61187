"""Whether a process is alive: the one test behind every sweep of what a dead benchlab left
(cgroups, containers, scratch directories, build worktrees)."""

import os


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
