"""``--metric`` matched the program's whole output in memory (2 GB peak for
1 GB of output, MemoryError at 1.5 GB). It is matched in blocks of whole lines now: benchlab's
peak RSS stays far below the output's size, and every value is still found."""

from __future__ import annotations

import io
import subprocess
import sys

from benchlab.store.db import Store
from benchlab.store.formats.metric_spec import extract_stream, parse_metric_spec
from tests.conftest import BENCHLAB

#: Peak RSS (KiB) of the benchlab process tree: measured by a wrapper whose only children are
#: benchlab and what it runs (RUSAGE_CHILDREN: the largest descendant waited for).
_WRAPPER = ("import resource, subprocess, sys\n"
            "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
            "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def test_metric_on_300_mb_of_output_in_bounded_memory(tmp_path):
    db = tmp_path / "m.db"
    # 300 MB of filler lines with three reported values: first, in the middle, last
    program = ("echo 'took 11 ns'; yes 'filler line of output, nothing to see' | head -c 150000000;"
               " echo 'took 22 ns'; yes 'filler' | head -c 150000000; printf 'took 33 ns'")
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, BENCHLAB, "run", "-r", "1", "-w", "0",
                           "--metric", "lat:ns=took (\\d+) ns", program, "--db", str(db)],
                          capture_output=True, text=True, timeout=300)
    rc, peak_kib = map(int, proc.stdout.split())
    assert rc == 0, proc.stderr
    with Store.open(db, readonly=True) as store:
        run = store.runs(session_id=store.sessions()[0]["id"], include_warmup=False)[0]
    assert run["status"] == "ok"
    samples = _samples(db)
    assert samples == [11.0, 22.0, 33.0]
    # before: > 600 MB (the bytes, then the decoded text); a Python with numpy and the store
    # open is ~100 MB: 250 MB leaves room for a loaded machine, not for the output
    assert peak_kib < 250 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB for 300 MB of output"


def _samples(db) -> list[float]:
    proc = subprocess.run([BENCHLAB, "export", "--format", "json", "--db", str(db)],
                          capture_output=True, text=True, check=True)
    import json

    doc = json.loads(proc.stdout)
    run = doc["sessions"][0]["benchmarks"][0]["runs"][0]
    return run["samples"]["lat"]


def test_stream_matching_finds_what_whole_text_matching_finds():
    spec = parse_metric_spec("v=^v=([0-9.]+)$")
    lines = [f"v={i}.5" if i % 7 == 0 else "x" * (i % 50) for i in range(5000)]
    text = "\n".join(lines)
    whole = spec.extract(text)
    for block in (16, 100, 4096):
        got = extract_stream([spec], io.BytesIO(text.encode()), block_bytes=block)
        assert got["v"] == whole, block


def test_a_utf8_character_cut_by_a_block_boundary_is_decoded_whole():
    spec = parse_metric_spec("t=é (\\d+)")
    data = ("é 1\n" * 1000).encode()
    got = extract_stream([spec], io.BytesIO(data), block_bytes=7)
    assert got["t"] == [1.0] * 1000
