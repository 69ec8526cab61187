"""An explicit ``import --format F`` looks at the start of the file before reading it whole:
a 5 GB file that is not F is refused in one line after reading about a megabyte, as
``--format auto`` already did (it used to be hashed whole first: 24.6 s for a sparse 5 GB
file). The bytes read are counted by the kernel: a reaped child's I/O is added to this
process's ``/proc/self/io`` (``rchar``), so the count holds whatever the machine's load."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, run_cli

SIZE = 5 * 10**9
#: What the child may read: Python's start and benchlab's modules, the store, the file's start.
READ_LIMIT = 64 << 20


def _rchar() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def _sparse(path: Path, prefix: bytes) -> Path:
    with open(path, "wb") as fh:
        fh.write(prefix)
        fh.truncate(SIZE)  # a hole: no disk space, but read() returns every NUL byte
    return path


FORMATS = {"csv": (), "hyperfine": (), "pyperf": (), "gbench": (), "json": (), "varsys16": (),
           "metric": ("--metric", r"lat=(\d+)"), "go": (), "criterion": (),
           "pytest-benchmark": ()}
JSON_FORMATS = ("hyperfine", "pyperf", "gbench", "json")
LINE_FORMATS = ("csv", "varsys16")


def _import(tmp_path: Path, fmt: str, path: Path):
    before = _rchar()
    proc = run_cli("import", "--format", fmt, *FORMATS[fmt], str(path), db=tmp_path / "b.db")
    return proc, _rchar() - before


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_big_binary_file_is_refused_from_its_first_bytes(tmp_path, fmt):
    path = _sparse(tmp_path / "big.bin", b"")
    proc, read = _import(tmp_path, fmt, path)
    assert_one_line_error(proc, "big.bin", "binary file (NUL byte at offset 0)")
    assert read < READ_LIMIT, f"read {read:,} bytes of a {SIZE:,}-byte file"


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_a_big_file_that_does_not_begin_as_json_is_refused(tmp_path, fmt):
    path = _sparse(tmp_path / "big.txt", b"label,value\n" * 2000)
    proc, read = _import(tmp_path, fmt, path)
    assert_one_line_error(proc, "big.txt", "not valid JSON", f"--format (now {fmt})")
    assert read < READ_LIMIT, f"read {read:,} bytes of a {SIZE:,}-byte file"


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_a_big_file_without_line_breaks_is_refused(tmp_path, fmt):
    path = _sparse(tmp_path / "big.txt", b"7" * (2 << 20))
    proc, read = _import(tmp_path, fmt, path)
    assert_one_line_error(proc, "big.txt", "line 1 is longer than")
    assert read < READ_LIMIT, f"read {read:,} bytes of a {SIZE:,}-byte file"
