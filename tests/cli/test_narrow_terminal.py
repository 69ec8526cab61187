"""`benchlab run` in a real pseudo-terminal of 40, 60, 80 and 200 columns: the summary tables
wrap their columns into blocks instead of cutting a number, the progress bar keeps its counts
whole, and a pipe still gets the whole table on one line per row."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

import pytest

from benchlab.report.run_summary import COLUMN_PRIORITY, COLUMNS
from benchlab.report.text_table import column_blocks
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB

_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_NUMBER = re.compile(r"\d[\d.,]*")


def _in_terminal(columns: int, *args: str, timeout: float = 120) -> str:
    """The text a real pseudo-terminal of ``columns`` columns receives from the console script
    (stdout and stderr both), escape sequences removed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal as a user's, COLUMNS as a shell exports it
        os.environ.update(COLUMNS=str(columns), LINES="50", TERM="xterm")
        os.execv(BENCHLAB, [BENCHLAB, *args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")
    return _ESCAPE.sub("", out.decode())


def _table_numbers(plain: str) -> list[str]:
    """The number cells of the summary table a pipe prints (the lines before the first blank)."""
    table = plain.split("\n\n")[0].splitlines()[1:]
    return [n for line in table for n in _NUMBER.findall(line.split("  ", 1)[-1])]


@pytest.mark.parametrize("columns", [40, 60, 80, 200])
def test_tables_and_progress_fit_the_terminal_and_keep_every_digit(db_path, columns):
    text = _in_terminal(columns, "run", "-N", "-r", "30", "--db", str(db_path),
                        "true", "sleep 0.001")
    # "…" is rich's mark of a cut cell; only a command's name in the progress bar gives way
    assert "…" not in re.sub(r"… \((run \d+|warmup)\)", "", text)
    table_lines = [ln for ln in text.replace("\r", "\n").splitlines()
                   if "│" in ln or "┃" in ln or "━" in ln]
    assert table_lines
    assert all(len(ln.rstrip()) <= columns for ln in table_lines), table_lines
    # every number of the session's summary, as a pipe prints it, is in the terminal's text
    plain = run_cli("show", "--db", str(db_path), check=True).stdout
    numbers = _table_numbers(plain[plain.index("command  "):])
    assert len(numbers) > 30
    for number in numbers:
        assert re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.])", text), number
    # blocks: at 200 columns one header row per command, at 60 and fewer more than one
    headers = [ln for ln in text.splitlines() if "┃" in ln]
    assert len(headers) == 2 if columns == 200 else len(headers) > 2 or columns == 80


def test_a_pipe_gets_the_whole_table_whatever_the_width(db_path):
    proc = subprocess.run([BENCHLAB, "run", "-N", "-r", "5", "--db", str(db_path), "true"],
                          capture_output=True, text=True, timeout=120, check=True,
                          env=dict(os.environ, COLUMNS="40"))
    header = proc.stdout.splitlines()[0]
    assert header.split() == ["command", "metric", *"n median MAD mean ± sd min max p95 "
                              "p99 runs peak RSS".split()]
    assert len(header) > 40 and "…" not in proc.stdout


def test_column_blocks_place_each_column_once_by_priority_within_the_width():
    labels = ["wall [ms]", "user [µs]"]
    cells = [["30", "30"], ["3.110", "638.0"], ["2.392", "45.00"], ["3.688 ± 3.471", "1 ± 2"],
             ["0.599", "542.0"], ["11.89", "833.0"], ["10.31", "795.4"], ["11.55", "827.2"]]
    for width in (20, 40, 60, 80, 200):
        blocks = column_blocks(labels, cells, COLUMNS, width, COLUMN_PRIORITY)
        assert sorted(i for b in blocks for i in b) == list(range(len(COLUMNS)))
        for block in blocks:
            need = 9 + sum(max(len(COLUMNS[i]), *(len(c) for c in cells[i])) + 3 for i in block)
            assert need <= width or len(block) == 1
    assert column_blocks(labels, cells, COLUMNS, 200, COLUMN_PRIORITY) == [list(range(8))]
    # the median comes first
    assert 1 in column_blocks(labels, cells, COLUMNS, 30, COLUMN_PRIORITY)[0]
