"""Hostile bundles against the reader's limits: time and peak memory of the refusal.

Usage: .venv/bin/python bench/bundle_limits.py

Made with the streaming writer of ``tests/badinput/test_bundle_limits.py`` (a 2 GiB member of
zeros is about 9 MB of gzip), each refused by the real console script. Peak RSS is the child's
``ru_maxrss`` (RUSAGE_CHILDREN of a fresh wrapper running only that child), beside the same
command on a 12-byte bad file. Before the limits: the 2 GiB member took 2.1 GB peak
RSS and the million-entry listing 85 s and 1 GB.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.badinput.test_bundle_limits import GIB, _archive, _manifest, _peak_rss_kib  # noqa: E402


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bundle-limits-"))
    t0 = time.monotonic()
    bomb = _archive(tmp / "zeros.benchlab.tar.gz",
                    [("manifest.json", _manifest({"data/sessions.json": 2 * GIB})),
                     ("data/sessions.json", 2 * GIB)], level=1)
    print(f"2 GiB member: {bomb.stat().st_size:,} bytes of gzip, made in "
          f"{time.monotonic() - t0:.1f} s")
    listing = _archive(tmp / "listed.benchlab.tar.gz", [("manifest.json", _manifest(
        {f"protocols/{i}.json": b"" for i in range(1_000_000)}))], level=1)
    members = [(f"protocols/{i}.json", b"{}") for i in range(10_001)]
    many = _archive(tmp / "many.benchlab.tar.gz",
                    [("manifest.json", _manifest(dict(members)))] + members, level=1)
    tiny = tmp / "tiny.benchlab.tar.gz"
    tiny.write_bytes(b"\x1f\x8b not a bundle")
    cases = [("12-byte bad file (baseline)", ["reproduce", str(tiny), "--analysis-only"]),
             ("2 GiB member, import", ["import", str(bomb), "--db", str(tmp / "x.db")]),
             ("2 GiB member, reproduce", ["reproduce", str(bomb), "--analysis-only"]),
             ("1,000,000 listed members", ["reproduce", str(listing), "--analysis-only"]),
             ("10,001 members, import", ["import", str(many), "--db", str(tmp / "y.db")])]
    try:
        for label, args in cases:
            proc, rss_kib, wall = _peak_rss_kib(args, tmp)
            print(f"{label:30s} exit {proc.returncode}  {wall:5.2f} s  peak RSS "
                  f"{rss_kib / 1024:4.0f} MiB  {proc.stderr.strip()[:70]}")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
