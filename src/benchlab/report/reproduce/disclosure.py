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


#: Unicode categories never shown raw: controls (a newline, a terminal escape), format
#: characters (a right-to-left override), line and paragraph separators, unassigned ones.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def _shown(text: Any) -> str:
    """``text`` exactly as it will run: as is when every character prints as itself, else as
    a shell ``$'...'`` literal with each hidden character escaped (``\\n``, ``\\x1b``,
    ``\\u202e``). Replacing a newline by a space would show a command that is not the one
    that runs, and a terminal escape could rewrite the lines shown."""
    import unicodedata

    text = str(text)
    if not any(unicodedata.category(c) in _HIDDEN for c in text):
        return text
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif unicodedata.category(c) in _HIDDEN:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                       if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "$'" + "".join(out) + "' (shown escaped: it holds control characters)"


def _short(text: Any, limit: int) -> str:
    # only values benchlab will not use are cut; what will run is shown whole by _shown
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _program_line(program: dict[str, Any], command: str, shell: str | None) -> str | None:
    """Where the bundle's record of a benchmark's program comes from, and whether the command
    runs it: the record is the bundle's own provenance, which the command need not match."""
    import os
    import shlex

    if program.get("workload"):
        return (f"program: workload {program['workload']}, compiled here from the bundle's "
                f"{program['source']} (its path in the command becomes the new binary's)")
    if not program.get("name"):
        return None
    digest = program.get("sha256")
    line = (f"program recorded by the bundle's provenance: {_shown(program['name'])} "
            f"(bundled sha256 {digest[:16] + '…' if digest else 'unknown'})")
    try:
        first = shlex.split(command)[0] if command.strip() else ""
    except ValueError:
        first = ""
    if os.path.basename(first) != os.path.basename(str(program["name"])):
        runs = f"{_shown(first)!s}" if first else "something else"
        line += (f"; the command runs {runs}{' through the shell' if shell else ''}, not "
                 f"necessarily that program: the digest says nothing about what runs")
    return line


def disclosure_lines(what: dict[str, Any]) -> list[str]:
    """Lines telling the user what re-measuring the bundle would run on this machine."""
    user = what.get("user", {})
    who = "as root" if user.get("root") else f"as this user (uid {user.get('uid')})"
    commands = sum(len(s["benchmarks"]) for s in what["sessions"])
    hooks = sum(len(b["hooks"]) for s in what["sessions"] for b in s["benchmarks"])
    lines = [f"{what['bundle']} (sha256 {what['bundle_sha256'][:16]}…) would run "
             f"{commands} command(s) and {hooks} hook(s) from the bundle on this machine, {who}:"]
    for s in what["sessions"]:
        shell = f"through the shell {_shown(s['shell'])} (-c COMMAND)" if s["shell"] else \
            "without a shell (each command split into words, -N)"
        lines.append(f"  session {_shown(s['uid'])} ({_shown(s.get('name') or 'unnamed')}), "
                     f"{shell}, isolation {s['isolation']}:")
        for b in s["benchmarks"]:
            lines.append(f"    {_shown(b['name'])}: {_shown(b['command'])}")
            program = _program_line(b["program"], b["command"], s["shell"])
            if program:
                lines.append(f"      {program}")
            for hook, command in b["hooks"].items():
                lines.append(f"      {hook} hook: {_shown(command)}")
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
