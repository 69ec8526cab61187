"""Bundle size and time to reproduce, for the demo session and for a 100k-sample session.

Usage: .venv/bin/python bench/bundle_size.py [--workdir DIR]

1. ``benchlab demo`` (3 sorts x 30 runs + 3 warmups, bundled C workload), then
   ``benchlab bundle`` of it, ``benchlab reproduce --analysis-only`` and ``benchlab reproduce``
   (re-measures the demo here: rebuilds sort_algos from the bundled source, profiles briefly).
2. the JayBeams vm-results.csv (``../shared/data/jaybeams``: 100,000 samples per book type,
   200,000 in all) imported as one session, bundled, and reproduced with ``--analysis-only``
   (an import has no protocol to re-measure).

Prints, for each, the bundle's size (bytes, and its largest members) and the wall time (s) of
bundling and of each reproduction, measured with time.perf_counter around the real CLI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHLAB = str(Path(sys.executable).parent / "benchlab")
VM_RESULTS = REPO.parent / "shared" / "data" / "jaybeams" / "vm-results.csv"


def timed(*args: str, ok=(0,)) -> tuple[float, str]:
    """Run the real CLI; (wall seconds, stdout). Exits on an unexpected status."""
    start = time.perf_counter()
    proc = subprocess.run([BENCHLAB, *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.exit(f"benchlab {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return elapsed, proc.stdout


def describe(bundle: Path) -> str:
    with tarfile.open(bundle, "r:gz") as tar:
        sizes = sorted(((m.size, m.name) for m in tar), reverse=True)[:4]
    largest = ", ".join(f"{name} {size / 1024:,.0f} KiB" for size, name in sizes)
    return f"{bundle.stat().st_size:,} bytes ({bundle.stat().st_size / 1024:,.0f} KiB); " \
           f"uncompressed largest: {largest}"


def newest_uid(db: Path) -> str:
    _, out = timed("list", "--json", "--db", str(db))
    return json.loads(out)[0]["uid"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bundle-size-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "bench.db"

    t_demo, _ = timed("demo", "--db", str(db))
    demo = newest_uid(db)
    demo_bundle = work / "demo.benchlab.tar.gz"
    t_bundle, _ = timed("bundle", demo, "-o", str(demo_bundle), "--profile", "--db", str(db))
    t_analysis, out = timed("reproduce", str(demo_bundle), "--analysis-only")
    t_full, full = timed("reproduce", str(demo_bundle), "--trust", "--json", "--db", str(db),
                         ok=(0, 1))
    print(f"demo session {demo} (measured in {t_demo:.1f} s)")
    print(f"  bundle: {describe(demo_bundle)}; bundling took {t_bundle:.1f} s (with --profile)")
    print(f"  reproduce --analysis-only: {t_analysis:.1f} s; "
          f"{' / '.join(line.split(':')[1].split('(')[0].strip() for line in out.splitlines())}")
    print(f"  reproduce (re-measure + profile + judge): {t_full:.1f} s; verdict: "
          f"{json.loads(full)['verdict']}")

    if not VM_RESULTS.is_file():
        print(f"skipped the 100k-sample session: {VM_RESULTS} is absent")
        return
    timed("import", str(VM_RESULTS), "--format", "csv", "--unit", "ns", "--name", "vm-results",
          "--db", str(db))
    big = newest_uid(db)
    big_bundle = work / "vm-results.benchlab.tar.gz"
    t_bundle, _ = timed("bundle", big, "-o", str(big_bundle), "--db", str(db))
    t_analysis, out = timed("reproduce", str(big_bundle), "--analysis-only")
    print(f"100k-sample session {big} (the JayBeams vm-results.csv: 2 x 100,000 samples)")
    print(f"  bundle: {describe(big_bundle)}; bundling took {t_bundle:.1f} s")
    print(f"  reproduce --analysis-only: {t_analysis:.1f} s; "
          f"{' / '.join(line.split(':')[1].split('(')[0].strip() for line in out.splitlines())}")


if __name__ == "__main__":
    main()
