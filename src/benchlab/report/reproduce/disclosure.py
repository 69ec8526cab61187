"""What a re-measurement would run, in words, shown before anything runs.

:func:`disclosure_lines` renders :func:`benchlab.core.reproduce.describe`'s data: who runs it,
each session's shell, every command and hook exactly as the bundle holds it, each program with
its bundled SHA-256 (or the workload compiled here from which bundled source, with the source's
SHA-256), and what the bundle asked for that is not done (its paths, its isolation).
"""

from __future__ import annotations

from typing import Any

#: What the reproduction does instead of a bundle's field (core.reproduce.confine).
_INSTEAD = {
    "cwd": "the commands run in a new empty directory of the reproduction's scratch",
    "stdout": "the file is written in the reproduction's scratch directory instead",
    "samples_csv": "the file is read from the reproduction's scratch directory instead",
    "stdin_path": "the commands read /dev/null",
    "isolation": "the isolation is --isolation's",
    "calibration": "no calibration file is read",
}


def _short(text: Any, limit: int | None = None) -> str:
    # What will run is shown whole (a cut command could hide its tail from the reader); only
    # values benchlab will not use are cut.
    one = " ".join(str(text).split())
    return one if limit is None or len(one) <= limit else one[: limit - 1] + "…"


def disclosure_lines(what: dict[str, Any]) -> list[str]:
    """Lines telling the user what re-measuring the bundle would run on this machine."""
    user = what.get("user", {})
    who = "as root" if user.get("root") else f"as this user (uid {user.get('uid')})"
    commands = sum(len(s["benchmarks"]) for s in what["sessions"])
    hooks = sum(len(b["hooks"]) for s in what["sessions"] for b in s["benchmarks"])
    lines = [f"{what['bundle']} (sha256 {what['bundle_sha256'][:16]}…) would run "
             f"{commands} command(s) and {hooks} hook(s) from the bundle on this machine, {who}:"]
    for s in what["sessions"]:
        shell = f"through the shell {s['shell']!r} (-c COMMAND)" if s["shell"] else \
            "without a shell (each command split into words, -N)"
        lines.append(f"  session {s['uid']} ({s.get('name') or 'unnamed'}), {shell}, "
                     f"isolation {s['isolation']}:")
        for b in s["benchmarks"]:
            lines.append(f"    {b['name']}: {_short(b['command'])}")
            program = b["program"]
            if program.get("workload"):
                lines.append(f"      program: workload {program['workload']}, compiled here "
                             f"from the bundle's {program['source']} (its path in the command "
                             f"becomes the new binary's)")
            elif program.get("name"):
                digest = program.get("sha256")
                lines.append(f"      program: {_short(program['name'])} "
                             f"(bundled sha256 {digest[:16] + '…' if digest else 'unknown'})")
            for hook, command in b["hooks"].items():
                lines.append(f"      {hook} hook: {_short(command)}")
        if s.get("hooks_outside_isolation"):
            lines.append(f"    note: the hooks (and the shell that runs them) run outside "
                         f"--isolation {s['isolation']}, as benchlab run runs hooks")
        if s.get("count"):
            lines.append(f"    and each command again under valgrind (--count {s['count']})")
        for key, value in s["ignored"].items():
            lines.append(f"    not used: the bundle's {key} {_short(value, 400)!r}; "
                         f"{_INSTEAD.get(key, 'dropped')}")
    for member, digest in sorted(what.get("sources", {}).items()):
        lines.append(f"  C source compiled here: {member} (sha256 {digest or 'not listed'})")
    return lines


__all__ = ["disclosure_lines"]
