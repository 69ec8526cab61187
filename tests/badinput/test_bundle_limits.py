"""Bundles built to exhaust the reader: refused in one line, quickly, in bounded memory.

Each archive is made here with a streaming writer (a 2 GiB member of zeros is a few MB of
gzip), and read by the real console script through ``benchlab import`` and ``benchlab
reproduce``. Memory is the child's peak RSS (``RUSAGE_CHILDREN`` of a fresh wrapper process
that runs only that child), compared with the same command on a tiny bad file, so the figure
does not depend on how heavy benchlab's imports are today. Times are generous (the machine is
shared): before the limits, the 2 GiB member took 2.1 GB and the million-entry listing 85 s.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error

GIB = 1 << 30


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read in blocks (never held in memory)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _manifest(names_sizes: dict[str, bytes | int]) -> bytes:
    members = []
    for name, blob in names_sizes.items():
        size = blob if isinstance(blob, int) else len(blob)
        digest = hashlib.sha256(blob).hexdigest() if isinstance(blob, bytes) else "0" * 64
        members.append({"name": name, "size": size, "sha256": digest})
    return json.dumps({"format": "benchlab-bundle", "format_version": 1,
                       "members": members}).encode()


def _archive(path: Path, members: list[tuple[str, bytes | int]], *, level: int = 6) -> Path:
    """A .tar.gz of ``members`` in order; an int is that many zero bytes, streamed."""
    with tarfile.open(path, "w:gz", compresslevel=level) as tar:
        for name, blob in members:
            info = tarfile.TarInfo(name)
            if isinstance(blob, int):
                info.size = blob
                tar.addfile(info, io.BufferedReader(Zeros(blob), 1 << 20))
            else:
                info.size = len(blob)
                tar.addfile(info, io.BytesIO(blob))
    return path


def _peak_rss_kib(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, int, float]:
    """Run benchlab ``args`` under a fresh wrapper; (its result, its peak RSS in KiB, wall s)."""
    wrapper = ("import resource, subprocess, sys, json, time\n"
               "t = time.monotonic()\n"
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "print(json.dumps([p.returncode, p.stdout, p.stderr, time.monotonic() - t,\n"
               "      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n")
    out = subprocess.run([sys.executable, "-c", wrapper, BENCHLAB, *args], capture_output=True,
                         text=True, cwd=cwd, timeout=300, check=True).stdout
    code, stdout, stderr, wall, rss = json.loads(out)
    return subprocess.CompletedProcess(args, code, stdout, stderr), rss, wall


@pytest.fixture(scope="module")
def zero_bomb(tmp_path_factory) -> Path:
    """manifest + a 2 GiB member of zeros named data/sessions.json (~2 MB of gzip)."""
    path = tmp_path_factory.mktemp("bomb") / "zeros.benchlab.tar.gz"
    size = 2 * GIB
    return _archive(path, [("manifest.json", _manifest({"data/sessions.json": size})),
                           ("data/sessions.json", size)], level=1)


def test_two_gib_member_is_refused_fast_in_bounded_memory(zero_bomb, tmp_path):
    assert zero_bomb.stat().st_size < 16 << 20
    tiny = tmp_path / "tiny.benchlab.tar.gz"
    tiny.write_bytes(b"\x1f\x8b not a bundle")
    base, base_rss, _ = _peak_rss_kib(["reproduce", str(tiny), "--analysis-only"], tmp_path)
    assert base.returncode == 2
    for args in (["import", str(zero_bomb), "--db", str(tmp_path / "x.db")],
                 ["reproduce", str(zero_bomb), "--analysis-only"]):
        proc, rss, wall = _peak_rss_kib(args, tmp_path)
        assert_one_line_error(proc, "data/sessions.json", "512 MiB")
        assert rss < base_rss + 64 * 1024, (rss, base_rss)  # 2.1 GB before the limits
        assert wall < 30, wall  # refused from the member's header: nothing decompressed


def test_a_million_listed_members_are_refused_fast(tmp_path):
    listing = _manifest({f"protocols/{i}.json": b"" for i in range(1_000_000)})
    bundle = _archive(tmp_path / "listed.benchlab.tar.gz", [("manifest.json", listing)], level=1)
    t = time.monotonic()
    proc = run_cli("reproduce", str(bundle), "--analysis-only")
    assert_one_line_error(proc, "manifest.json", "10,000 members")
    assert time.monotonic() - t < 30  # 85 s and 1 GB before


def test_too_many_members_are_refused(tmp_path):
    members = [(f"protocols/{i}.json", b"{}") for i in range(10_001)]
    bundle = _archive(tmp_path / "many.benchlab.tar.gz",
                      [("manifest.json", _manifest(dict(members)))] + members, level=1)
    assert_one_line_error(run_cli("import", str(bundle), "--db", str(tmp_path / "x.db")),
                          "more than 10,000 members")


def test_unknown_member_name_is_refused(tmp_path):
    bundle = _archive(tmp_path / "odd.benchlab.tar.gz",
                      [("manifest.json", _manifest({"scripts/run.sh": b"id"})),
                       ("scripts/run.sh", b"id")])
    assert_one_line_error(run_cli("reproduce", str(bundle), "--analysis-only"),
                          "'scripts/run.sh'", "not a member of a benchlab bundle")


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("member", ["manifest.json", "data/sessions.json",
                                    "analysis/analysis.json"])
def test_deeply_nested_json_is_one_line(member, tmp_path):
    from benchlab.store.bundle import bundle_bytes

    path = tmp_path / "deep.benchlab.tar.gz"
    if member == "manifest.json":
        _archive(path, [("manifest.json", _deep(100_000))])
    else:
        members = {"data/sessions.json": b'{"format": "benchlab-bundle-data", '
                                         b'"format_version": 1, "sessions": [{}]}',
                   "analysis/analysis.json": b"{}"}
        members[member] = _deep(100_000)
        path.write_bytes(bundle_bytes(members))
    for args in (["reproduce", str(path), "--analysis-only"],
                 ["import", str(path), "--db", str(tmp_path / "x.db")]):
        proc = run_cli(*args)
        if member == "analysis/analysis.json" and args[0] == "import":
            continue  # import does not read the analysis
        assert_one_line_error(proc, member)
