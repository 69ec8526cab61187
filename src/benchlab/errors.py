"""Errors that reach the user.

Every problem a user can cause or fix (bad flag values, a missing command, a malformed file, a
locked database, missing permissions) is raised as :class:`UserError` with a one-line message
that names the problem and the fix. The CLI prints it as ``benchlab: error: ...`` and exits 2,
with no traceback. Anything else is a bug in benchlab and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; ``str(err)`` is a single line naming problem and fix."""

    exit_code = 2

    def __init__(self, message: str):
        one_line = " ".join(str(message).split())
        super().__init__(one_line)


class NotAvailable(UserError):
    """A capability this machine does not have (no cgroup controller, no perf counters, ...)."""
