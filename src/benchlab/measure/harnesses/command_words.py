"""The words of a shell command line with their places in it, for a harness that edits the
command (:meth:`~benchlab.measure.harnesses.Harness.narrow`).

A harness's command is a shell line (``cd {root} && cargo bench -- --noplot > log``). To put a
filter into it, a harness finds the words of the command it runs and replaces, drops or adds
one at an offset, so everything else stays exactly as written: quotes, ``$VAR``, ``{root}``.
Words are split as ``sh`` splits them (blanks, the control operators ``&& || ; | & ( )`` and
newlines, redirections such as ``>``, ``2>&1``, ``&>``); a word's :attr:`Word.text` is what
the program receives when the word holds no expansion (quotes and backslashes removed).
Expansions (``$X``, ``$(...)``, backquotes) stay as written in the text. Here-documents are
not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Control operators, longest first (a newline separates commands too).
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")", "\n")
#: A redirection, with the descriptor number glued to it (``2>``, ``2>&1``'s ``>&``, ``&>``).
_REDIRECT = re.compile(r"\d*(?:&>>|&>|>>|>&|<&|<<-|<<<|<<|<>|>\||>|<)")
#: Characters that end an unquoted word.
_WORD_END = " \t\n;&|()<>"


@dataclass(frozen=True)
class Word:
    """One token of a command line.

    Attributes
    ----------
    start, end : int
        Its offsets in the line (characters; ``end`` just past it).
    text : str
        The word as the program receives it (quotes removed), expansions as written.
    kind : str
        ``word``, ``operator`` (a control operator) or ``redirect``.
    """

    start: int
    end: int
    text: str
    kind: str = "word"


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a line: its arguments (the command word first; assignments before it
    and redirections with their targets left out) and ``end``, the offset just past its last
    token, where a word can be appended."""

    args: list[Word]
    end: int


def _quoted(line: str, i: int) -> tuple[int, str]:
    """(offset past, text) of the quoted string opening at ``i``; ValueError when unclosed."""
    quote = line[i]
    j, text = i + 1, []
    while j < len(line) and line[j] != quote:
        if quote == '"' and line[j] == "\\" and j + 1 < len(line) and line[j + 1] in '\\"$`':
            j += 1
        text.append(line[j])
        j += 1
    if j >= len(line):
        raise ValueError(f"unbalanced {quote} at offset {i}")
    return j + 1, "".join(text)


def _expansion(line: str, i: int) -> int:
    """Offset past the ``$(...)``, ``${...}`` or backquoted expansion opening at ``i``."""
    if line[i] == "`":
        end = line.find("`", i + 1)
        return len(line) if end < 0 else end + 1
    closing = {"(": ")", "{": "}"}[line[i + 1]]
    depth, j = 0, i + 1
    while j < len(line):
        depth += {line[i + 1]: 1, closing: -1}.get(line[j], 0)
        j += 1
        if depth == 0:
            break
    return j


def _word(line: str, i: int) -> tuple[int, str]:
    """(offset past, text) of the word starting at ``i``."""
    text: list[str] = []
    while i < len(line) and line[i] not in _WORD_END:
        ch = line[i]
        if ch in "'\"":
            i, inner = _quoted(line, i)
            text.append(inner)
        elif ch == "\\":
            text.append(line[i + 1:i + 2].replace("\n", ""))
            i += 2
        elif ch == "`" or (ch == "$" and line[i + 1:i + 2] in ("(", "{")):
            end = _expansion(line, i)
            text.append(line[i:end])
            i = end
        else:
            text.append(ch)
            i += 1
    return i, "".join(text)


def shell_words(line: str) -> list[Word]:
    """Every token of ``line`` in order. Raises ValueError on an unclosed quote."""
    words: list[Word] = []
    i = 0
    while i < len(line):
        if line[i] in " \t":
            i += 1
        elif line[i] == "#":  # a comment: to the end of the line
            end = line.find("\n", i)
            i = len(line) if end < 0 else end
        elif (m := _REDIRECT.match(line, i)) is not None:
            words.append(Word(i, m.end(), m.group(), "redirect"))
            i = m.end()
        elif (op := next((o for o in _OPERATORS if line.startswith(o, i)), None)) is not None:
            words.append(Word(i, i + len(op), op, "operator"))
            i += len(op)
        else:
            end, text = _word(line, i)
            words.append(Word(i, end, text))
            i = end
    return words


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def simple_commands(line: str) -> list[SimpleCommand]:
    """The simple commands of ``line``, in order (ValueError on an unclosed quote)."""
    found: list[SimpleCommand] = []
    args: list[Word] = []
    end, target = -1, False
    for w in [*shell_words(line), Word(len(line), len(line), "", "operator")]:
        if w.kind == "operator":
            if end >= 0:
                found.append(SimpleCommand(args, end))
            args, end, target = [], -1, False
            continue
        end = w.end
        if w.kind == "redirect":
            target = True  # its next word is the file (or descriptor), not an argument
        elif target:
            target = False
        elif args or not _ASSIGNMENT.match(w.text):
            args.append(w)
    return found


def edited(line: str, edits: list[tuple[int, int, str]]) -> str:
    """``line`` with each ``(start, end, new)`` span replaced by ``new`` (spans must not
    overlap); a span replaced by nothing takes the blanks before it too."""
    out = line
    for start, end, new in sorted(edits, reverse=True):
        if not new:
            while start > 0 and out[start - 1] in " \t":
                start -= 1
        out = out[:start] + new + out[end:]
    return out
