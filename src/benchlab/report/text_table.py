"""Plain aligned text tables: the fast path for long listings (``list`` over 10,000 sessions),
and the split of a wide table into blocks that fit a narrow terminal.

rich's tables measure and wrap every cell, about 1 ms a row: 9.6 s for ``benchlab list`` over
10,000 sessions. Long listings are instead laid out here, one line per row, columns padded to
their widest cell, so the cost is that of joining strings (30 ms for the same listing) and the
output stays greppable and copy-pasteable (no wrapping, no box characters).
"""

from __future__ import annotations

from typing import Sequence


def printable(text: str | None, width: int | None = None) -> str:
    """``text`` with control characters (newlines, tabs, escapes) shown as ``?`` so a row stays
    one line and a hostile name cannot move the cursor; cut to ``width`` characters with ``…``."""
    out = "".join(ch if ch.isprintable() else "?" for ch in (text or ""))
    if width is not None and len(out) > width:
        out = out[:max(width - 1, 0)] + "…"
    return out


def aligned_lines(header: Sequence[str], rows: Sequence[Sequence[str]],
                  right: Sequence[int] = ()) -> list[str]:
    """The table as lines: a header, then one line per row, columns separated by two spaces
    and padded to their widest cell (columns whose index is in ``right`` aligned right);
    trailing spaces stripped. Cells must already be printable single-line text."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    right_set = set(right)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right_set else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), *(line(r) for r in rows)]


def column_blocks(labels: Sequence[str], columns: Sequence[Sequence[str]],
                  headers: Sequence[str], width: int,
                  priority: Sequence[int]) -> list[list[int]]:
    """Columns of a table (indices, in table order) split into blocks printed one under the
    other, each with the row labels, so that every block fits ``width`` characters and no
    cell is cut: columns are placed in the order of ``priority`` (indices; a summary shows
    the median and its spread first, the rest follow in a second block). A column that fits
    no block even alone gets a block of its own (the terminal wraps that line rather than
    cutting a digit).

    Widths as rich lays a table without edges: each cell padded by one space on the inner
    sides, one separator between columns.
    """
    label_w = max((len(x) for x in labels), default=0)
    widths = {i: max([len(headers[i]), *(len(c) for c in columns[i])]) for i in priority}
    blocks: list[list[int]] = []
    used = label_w
    for i in priority:
        need = widths[i] + 3
        if blocks and used + need <= width:
            blocks[-1].append(i)
            used += need
        else:
            blocks.append([i])
            used = label_w + need
    return [sorted(b) for b in blocks]


class PlainConsole:
    """What the run's text needs of a rich ``Console``, for a pipe or a file: each ``print``
    writes its text and a newline, never wrapped or cut, without loading rich (~30-80 ms of
    start-up for a command whose output is read by a program). Markup tags (``[dim]``...) are
    dropped and ``\\[`` is a bracket, as rich reads them; ``style`` is ignored."""

    is_terminal = False

    def __init__(self, file=None, width: int = 80):
        self.file = file
        self.width = width

    def print(self, text: object = "", *, markup: bool = True, style: object = None,
              highlight: bool = False, soft_wrap: bool = True) -> None:
        """Write ``text`` (a string) and a newline."""
        import sys

        out = str(text)
        if markup:
            out = _MARKUP.sub("", out).replace("\\[", "[")
        (self.file or sys.stdout).write(out + "\n")


_MARKUP = __import__("re").compile(r"(?<!\\)\[/?[a-z]+(?: [a-z]+)*\]")
