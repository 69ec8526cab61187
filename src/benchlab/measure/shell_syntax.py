"""Find shell syntax in a command that is about to run WITHOUT a shell (``-N``/``--shell none``).

Without a shell, benchlab splits a command into words as a POSIX shell would (``shlex``, which
strips ordinary quotes and backslashes exactly like ``sh``) and executes the first word. Every
other piece of shell syntax would be passed to the program as a literal argument, so the
measurement would silently be of a different command: ``echo hi > out.txt`` times ``echo`` with
the arguments ``hi``, ``>``, ``out.txt`` and writes no file; ``sleep 0.01 && true`` makes
``sleep`` fail on the argument ``&&``. This module finds such syntax so the caller can refuse
the command with a one-line error instead.

What counts (outside single quotes; ``$`` and backticks also inside double quotes, where a shell
still expands them):

=====================  ==============================================================
kind                   examples
=====================  ==============================================================
redirection            ``>``, ``>>``, ``<``, ``2>&1``, ``&>``, ``<<EOF``
pipe                   ``|``
and-list / or-list     ``&&``, ``||``
command separator      ``;``, a newline, ``&`` (background)
subshell / group       ``(``, ``)``
command substitution   ``$(...)``, backticks
variable               ``$HOME``, ``${X}``, ``$1``, ``$?``, ``$$``
arithmetic             ``$((1+2))``
glob                   ``*``, ``?``, ``[abc]``
tilde                  ``~`` or ``~user`` at the start of a word
comment                ``#`` at the start of a word
assignment             ``NAME=value`` before the command word
shell quoting          ``$'...'``, ``$"..."`` (ANSI-C / locale quoting, not POSIX words)
unbalanced quote       an opening ``'`` or ``"`` without its closing one
=====================  ==============================================================

Ordinary quotes and backslashes are NOT shell syntax here: ``grep 'a b' file`` splits into the
same three words with or without a shell (as in hyperfine's ``-N``, which splits the same way).
"""

from __future__ import annotations

import re

from benchlab.errors import UserError
from benchlab.lazy import lazy_pattern  # compiled when first used: run never uses it
from benchlab.records import record

_NAME_START = lazy_pattern(r"[A-Za-z_]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SPECIAL_PARAMS = set("@*#?-$!0123456789")


@record(frozen=True)
class ShellSyntax:
    """One piece of shell syntax: its kind (see the module table), the text, its offset (chars)."""

    kind: str
    text: str
    offset: int


def _dollar(command: str, i: int) -> ShellSyntax | None:
    """Classify a ``$`` at ``i`` (outside single quotes); None when a shell keeps it literal."""
    nxt = command[i + 1:i + 2]
    if command.startswith("$((", i):
        return ShellSyntax("arithmetic", "$((", i)
    if nxt == "(":
        return ShellSyntax("command substitution", "$(", i)
    if nxt == "{":
        end = command.find("}", i)
        return ShellSyntax("variable", command[i:end + 1] if end > 0 else "${", i)
    if nxt and (_NAME_START.match(nxt) or nxt in _SPECIAL_PARAMS):
        m = re.match(r"\$[A-Za-z_][A-Za-z0-9_]*", command[i:])
        return ShellSyntax("variable", m.group(0) if m else command[i:i + 2], i)
    if nxt in ("'", '"'):
        return ShellSyntax("shell quoting", command[i:i + 2] + "...", i)
    return None  # a lone '$' (end of word, before a space) is literal in sh too


def find_shell_syntax(command: str) -> list[ShellSyntax]:
    """Every piece of shell syntax in ``command``, in order (empty: the command runs as split).

    Parameters
    ----------
    command : str
        The command line as typed (after ``{PARAM}`` substitution).

    Returns
    -------
    list of ShellSyntax
        One entry per construct; a run of operator characters (``&&``, ``2>&1``) is one entry.
    """
    scan = _Scanner(command)
    while scan.i < len(command) and not scan.done:
        if scan.quote == "'":
            scan.single_quoted()
        elif scan.quote == '"':
            scan.double_quoted()
        else:
            scan.unquoted()
    if scan.quote is not None:
        scan.found.append(ShellSyntax("unbalanced quote", scan.quote, scan.quote_at))
    return scan.found


class _Scanner:
    """The state of one left-to-right reading of a command, as ``sh`` would tokenise it; each
    method reads from offset ``i`` and advances it."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.found: list[ShellSyntax] = []
        self.quote: str | None = None   # the open quote character, if any
        self.quote_at = 0
        self.word_start = True          # the next character starts a new word
        self.command_word_seen = False  # assignments only count before the command word
        self.done = False               # a comment: the rest of the line is not read
        self.i = 0

    def single_quoted(self) -> None:
        if self.command[self.i] == "'":
            self.quote = None
        self.i += 1

    def double_quoted(self) -> None:
        ch, i = self.command[self.i], self.i
        if ch == "\\":
            self.i += 2
            return
        if ch == '"':
            self.quote = None
        elif ch == "`":
            self.found.append(ShellSyntax("command substitution", "`", i))
            self.i = _closing_backtick(self.command, i)
        elif ch == "$":
            hit = _dollar(self.command, i)
            if hit is not None and hit.kind != "shell quoting":
                self.found.append(hit)
        self.i += 1

    def unquoted(self) -> None:
        ch, i = self.command[self.i], self.i
        if ch == "\\":
            self.i, self.word_start = i + 2, False
        elif ch in " \t":
            self.i, self.word_start = i + 1, True
        elif ch == "\n":
            self.found.append(ShellSyntax("command separator", "newline", i))
            self.i, self.word_start, self.command_word_seen = i + 1, True, False
        else:
            at_word_start, self.word_start = self.word_start, False
            self.in_word(ch, at_word_start)

    def in_word(self, ch: str, at_word_start: bool) -> None:
        i = self.i
        if ch in ("'", '"'):
            self.quote, self.quote_at, self.command_word_seen = ch, i, True
        elif ch in "|&;<>()":
            self.operator()
            return
        elif ch == "`":
            self.found.append(ShellSyntax("command substitution", "`", i))
            self.i = _closing_backtick(self.command, i)
        elif ch == "$":
            hit = _dollar(self.command, i)
            if hit is not None:
                self.found.append(hit)
        else:
            self.plain(ch, at_word_start)
        self.i += 1

    def operator(self) -> None:
        """A run of operator characters, with a descriptor number glued to a redirection."""
        command, i = self.command, self.i
        n, j = len(command), i
        while j < n and command[j] in "|&;<>()":
            j += 1
        # a file-descriptor number glued to a redirection belongs to it: 2>&1, 2>/dev/null
        k = i
        while k > 0 and command[k - 1].isdigit():
            k -= 1
        if k < i and (k == 0 or command[k - 1] in " \t") and command[i] in "<>":
            i = k
        if command[j - 1] == "&" and j >= 2 and command[j - 2] in "<>":
            while j < n and (command[j].isdigit() or command[j] == "-"):
                j += 1  # the target descriptor of a duplication: >&2, <&-
        op = command[i:j]
        self.found.append(ShellSyntax(_operator_kind(op), op, i))
        if any(c in op for c in "|;&") and ">&" not in op and "<&" not in op:
            self.command_word_seen = False
        self.word_start, self.i = True, j

    def plain(self, ch: str, at_word_start: bool) -> None:
        """A character outside quotes and operators: glob, tilde, comment, or assignment."""
        command, i = self.command, self.i
        if ch in "*?":
            self.found.append(ShellSyntax("glob", ch, i))
        elif ch == "[":
            if "]" in command[i + 1:_word_end(command, i)]:
                self.found.append(ShellSyntax("glob", command[i:command.index("]", i + 1) + 1], i))
        elif at_word_start and ch == "~":
            self.found.append(ShellSyntax("tilde", "~", i))
        elif at_word_start and ch == "#":
            self.found.append(ShellSyntax("comment", "#", i))
            self.done = True
        elif at_word_start and not self.command_word_seen:
            m = _ASSIGNMENT.match(command, i)
            if m:
                self.found.append(ShellSyntax("assignment", m.group(0), i))
            else:
                self.command_word_seen = True


def _closing_backtick(command: str, i: int) -> int:
    """Offset of the backtick closing the one at ``i`` (the end when there is none)."""
    end = command.find("`", i + 1)
    return end if end >= 0 else len(command)


def _word_end(command: str, i: int) -> int:
    """Offset just past the unquoted word containing ``i`` (stops at blanks and operators)."""
    j = i
    while j < len(command) and command[j] not in " \t\n|&;<>()":
        j += 1
    return j


def _operator_kind(op: str) -> str:
    if "<" in op or ">" in op:
        return "redirection"
    if op.startswith("&&"):
        return "and-list"
    if op.startswith("||"):
        return "or-list"
    if op.startswith("|"):
        return "pipe"
    if op.startswith(";") or op.startswith("&"):
        return "command separator"
    return "subshell"


def require_no_shell_syntax(command: str) -> None:
    """Raise :class:`UserError` when ``command`` uses shell syntax but runs without a shell.

    The message names the first construct and suggests the fix (drop ``-N``/``--shell none``,
    so a shell runs the command and its start-up cost is subtracted, as hyperfine does).
    """
    found = find_shell_syntax(command)
    if not found:
        return
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise UserError(f"command {command!r} uses shell syntax: {first.kind} {first.text!r} at "
                    f"character {first.offset + 1}{more}, but runs without a shell "
                    f"(-N/--shell none), where it would be passed to the program as a literal "
                    f"argument; drop -N/--shell none to run it through a shell")


__all__ = ["ShellSyntax", "find_shell_syntax", "require_no_shell_syntax"]
