"""Reading input files safely: every way a file can be wrong becomes one line naming the file,
the line where known, and the fix.

Used by every import format, and by the readers of other layers' documents (``--samples-csv``,
``--calibration`` JSON, profiles): binary files, UTF-16, corrupt or truncated gzip, lines
longer than :data:`MAX_LINE_CHARS`, JSON nested deeper than Python can parse or holding
``NaN``/``Infinity`` (not JSON, though Python's parser accepts them).

Text is read with ``newline=""`` so a quoted CSV field keeps an embedded ``\\r``; gzip is
recognised by its magic bytes, whatever the file is called.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from benchlab.errors import UserError

#: Longest line a line-based reader accepts (characters): far beyond any real result line,
#: short enough that a file without line breaks cannot take all memory line by line.
MAX_LINE_CHARS = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: Bytes looked at to tell text from binary.
SNIFF_BYTES = 8192


def _fail(path: Any, reason: str, fix: str) -> UserError:
    return UserError(f"cannot read {path}: {reason}; {fix}")


def _check_head(path: Any, head: bytes, what: str) -> None:
    utf16 = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if not utf16 and b"\0" in head and len(head) < 16:
        raise _fail(path, f"it is a binary file (NUL byte at offset {head.index(0)}), not {what}",
                    "check the path and --format")
    if not utf16 and b"\0" in head:
        # UTF-16 without a BOM: ASCII characters leave a NUL in every other byte, on one side
        even, odd = head[0::2], head[1::2]
        even_nul, odd_nul = even.count(0) / max(1, len(even)), odd.count(0) / max(1, len(odd))
        utf16 = (odd_nul > 0.4 and even_nul == 0) or (even_nul > 0.4 and odd_nul == 0)
        if not utf16:
            raise _fail(path, f"it is a binary file (NUL byte at offset {head.index(0)}), "
                        f"not {what}", "check the path and --format")
    if utf16:
        raise _fail(path, "it is UTF-16 text, not UTF-8",
                    f"convert it (iconv -f UTF-16 -t UTF-8 FILE > NEW) and import NEW as {what}")


def refuse_special_file(path: str | os.PathLike, what: str) -> None:
    """Raise UserError unless ``path`` is a regular file or a directory (what does not exist is
    left to the reader's own message). A device (``/dev/zero``, ``/dev/urandom``), a FIFO or a
    socket never ends or blocks: reading, or hashing, one would never return."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a regular file")
    raise UserError(f"cannot read {what} {path}: it is {kind}, which may never end; "
                    f"save the data to a regular file and give that")


@contextmanager
def open_text(path: str | os.PathLike, what: str) -> Iterator[TextIO]:
    """Open ``path`` as UTF-8 text (gunzipped when it is gzip, a BOM skipped), ``newline=""``.

    Raises UserError (one line) for a missing, unreadable, binary, UTF-16 or corrupt file,
    also when the problem shows while the caller reads (decoding, truncated gzip).
    ``what`` names the expected content, e.g. ``"hyperfine JSON"``.
    """
    p = Path(path)
    refuse_special_file(p, what)
    try:
        raw = open(p, "rb")
    except FileNotFoundError:
        raise UserError(f"cannot read {what} {p}: no such file; check the path") from None
    except IsADirectoryError:
        raise UserError(f"cannot read {what} {p}: it is a directory, but {what} is one file; "
                        f"give the file (only --format metric reads a directory)") from None
    except PermissionError:
        raise UserError(f"cannot read {what} {p}: permission denied; make it readable "
                        f"(chmod u+r) or copy it somewhere readable") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {p}: {exc.strerror or exc}; check the file") from None
    try:
        stream: Any = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=raw, mode="rb")
        _check_head(p, stream.peek(SNIFF_BYTES)[:SNIFF_BYTES], what)
        yield io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
    except UnicodeDecodeError as exc:
        raise _fail(p, f"not UTF-8 text (byte {exc.start} of a chunk: {exc.reason})",
                    f"it is not {what}; check the file and --format") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise _fail(p, f"broken or truncated gzip data ({exc})",
                    "decompress it (gunzip -t shows the damage) or re-create it") from None
    except OSError as exc:
        raise _fail(p, exc.strerror or str(exc), "check the file") from None
    finally:
        raw.close()


def read_text(path: str | os.PathLike, what: str) -> str:
    """The whole text of ``path`` (see :func:`open_text` for what is checked)."""
    with open_text(path, what) as fh:
        return fh.read()


def iter_lines(fh: TextIO, path: Any) -> Iterator[tuple[int, str]]:
    """``(line number, line without its line break)`` for each line of ``fh``, 1-based.

    Raises UserError for a line longer than :data:`MAX_LINE_CHARS` (a file with no line
    breaks, or not line-based text).
    """
    lineno = 0
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE_CHARS and not line.endswith(("\n", "\r")):
            raise _fail(path, f"line {lineno} is longer than {MAX_LINE_CHARS:,} characters",
                        "this is not line-based text; check the file and --format")
        yield lineno, line.rstrip("\r\n")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Python keeps the last of two equal keys silently; a result file with two "results" or
    # "benchmarks" lists would lose one of them without a word
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _where_constant(text: str, name: str) -> str:
    """`` (line N, under "key")`` for the first bare ``name`` token in ``text``: the field a
    user must fix (``"cpu_quota_us": NaN``), which the JSON parser's hook cannot tell."""
    match = re.search(r'(?<![\w"])-?' + re.escape(name.lstrip("-")) + r'(?![\w"])', text)
    if match is None:
        return ""
    line = text.count("\n", 0, match.start()) + 1
    keys = re.findall(r'"((?:[^"\\\n]|\\.){1,80})"\s*:', text[max(0, match.start() - 4096):match.start()])
    return f" (line {line}, under \"{keys[-1]}\")" if keys else f" (line {line})"


def parse_json_text(text: str, path: Any, what: str, fmt: str | None = None) -> Any:
    """Parse JSON text read from ``path``; every problem is a one-line UserError.

    ``NaN``, ``Infinity`` and ``-Infinity`` are refused (they are not JSON, and no result
    format writes them for a measured value); so are a key repeated in one object (Python would
    keep the last silently) and nesting deeper than Python can parse.
    """
    if not text.strip():
        raise UserError(f"cannot read {what} {path}: the file is empty; check the path")
    choose = f", or choose the right --format (now {fmt})" if fmt else ""
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        hint = ""
        if text.lstrip()[:1] not in "{[":
            hint = " (it does not look like JSON at all; for label,value files use --format csv)"
        raise UserError(
            f"{path} is not valid JSON (malformed JSON at line {exc.lineno} column {exc.colno}: "
            f"{exc.msg}){hint}; fix or re-create the file{choose}") from None
    except RecursionError:
        raise UserError(f"cannot read {what} {path}: JSON nested too deeply; "
                        f"check the file{choose}") from None
    except _DuplicateKey as exc:
        raise UserError(f"cannot read {what} {path}: the key {str(exc)[:60]!r} appears twice in "
                        f"one JSON object (one of them would be lost); keep one") from None
    except ValueError as exc:  # from _reject_constant
        raise UserError(f"cannot read {what} {path}: it holds {exc}{_where_constant(text, str(exc))}, "
                        f"which is not a JSON number; "
                        f"write measured values as finite numbers or leave them out") from None


def load_json(path: str | os.PathLike, what: str, fmt: str | None = None) -> Any:
    """Read and parse a JSON file (gzip-compressed or not); problems are one-line UserErrors."""
    return parse_json_text(read_text(path, what), path, what, fmt)


#: What the start of a file in each import format must be (see :func:`check_prefix`):
#: ``"json"`` an object or array, ``"lines"`` line-based text, ``"text"`` UTF-8 text, None
#: unchecked (a binary format with its own reader's limits). Formats not listed: ``"text"``.
PREFIX_KINDS: dict[str, str | None] = {
    "hyperfine": "json", "pyperf": "json", "gbench": "json", "json": "json", "jmh": "json",
    "csv": "lines", "varsys16": "lines", "metric": "text", "bundle": None,
}


def check_prefix(path: str | os.PathLike, fmt: str) -> None:
    """Refuse (one-line UserError) a file whose first bytes already show it is not ``fmt``,
    before anything reads it whole (a digest, a parser): binary, UTF-16 or broken gzip data,
    a JSON format that does not begin with ``{`` or ``[``, a line-based format whose first line
    is longer than :data:`MAX_LINE_CHARS`. Reads at most about 1 MiB whatever the file's size
    (a 5 GB file used to be hashed whole before its first byte was looked at). A directory,
    a missing file and a format with kind None are left to the importer."""
    kind = PREFIX_KINDS.get(fmt, "text")
    if kind is None or not os.path.isfile(path):
        return  # a directory, a missing file: the importer's own message says which
    what = f"{fmt} input"
    with open_text(path, what) as fh:
        if kind == "lines":
            next(iter_lines(fh, path), None)
            return
        if kind != "json":
            return
        head = fh.read(SNIFF_BYTES)
    start = head.lstrip("\ufeff \t\r\n")[:1]
    if start and start not in ("{", "["):  # empty or blank so far: the parser says which
        raise UserError(f"{path} is not valid JSON (it does not look like JSON at all: it "
                        f"begins with {head.lstrip()[:20]!r}; for label,value files use "
                        f"--format csv); fix or re-create the file, or choose the right "
                        f"--format (now {fmt})")


def join_quoted(lines: Iterator[tuple[int, str]], path: Any) -> Iterator[tuple[int, str]]:
    """CSV records from ``(line number, line)`` pairs: a line that leaves a double quote open
    (an odd count of ``"``; an escaped quote is ``""``) continues on the next lines, joined with
    ``\\n``, as a quoted field may hold a line break. The record keeps its first line's number.
    ``#`` comment lines and pairs with a negative number (blocks a fast reader took whole) pass
    through. Raises UserError for a quote never closed, or a record over
    :data:`MAX_LINE_CHARS`."""
    pending: tuple[int, str] | None = None
    for lineno, line in lines:
        if pending is None:
            if lineno >= 0 and not line.startswith("#") and line.count('"') % 2:
                pending = (lineno, line)
            else:
                yield lineno, line
            continue
        start, text = pending
        if lineno < 0 or len(text) + len(line) >= MAX_LINE_CHARS:
            break
        text += "\n" + line
        if text.count('"') % 2:
            pending = (start, text)
        else:
            pending = None
            yield start, text
    if pending is not None:
        raise _fail(path, f"the quoted field opened on line {pending[0]} is never closed "
                    f"(or runs past {MAX_LINE_CHARS:,} characters)",
                    "close the quote (a quote inside a field is written \"\")")
