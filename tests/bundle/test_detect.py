"""``benchlab import FILE`` recognises a bundle without ``--format bundle``; a gzip-compressed
CSV is still read as CSV, and a tar that is not a bundle is not taken for one."""

from __future__ import annotations

import gzip
import io
import json
import tarfile

from benchlab.store.bundle import looks_like_bundle
from tests.cli.forked import run_cli


def test_import_detects_a_bundle_by_its_content(bundled, tmp_path):
    renamed = tmp_path / "results.tgz"  # the name says nothing: the content decides
    renamed.write_bytes(bundled.read_bytes())
    db = tmp_path / "colleague.db"
    info = json.loads(run_cli("import", str(renamed), "--json", db=db, check=True).stdout)
    assert info["runs"] == 22 and info["benchmarks"] == 2


def test_other_gzip_and_tar_files_are_not_bundles(tmp_path):
    csv_gz = tmp_path / "r.csv.gz"
    csv_gz.write_bytes(gzip.compress(b"a,1\na,2\nb,3\n"))
    assert not looks_like_bundle(csv_gz)
    db = tmp_path / "s.db"
    info = json.loads(run_cli("import", str(csv_gz), "--json", db=db, check=True).stdout)
    assert info["samples"] == 3

    tar_gz = tmp_path / "other.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        data = b"{}"
        member = tarfile.TarInfo("notes.json")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    tar_gz.write_bytes(buf.getvalue())
    assert not looks_like_bundle(tar_gz)
    assert not looks_like_bundle(tmp_path / "missing.tar.gz")
    (tmp_path / "short.gz").write_bytes(b"\x1f\x8b\x08")  # truncated gzip: no exception
    assert not looks_like_bundle(tmp_path / "short.gz")
    proc = run_cli("import", str(tar_gz), db=db)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_a_corrupt_gzip_is_not_a_bundle_and_does_not_raise(tmp_path):
    good = gzip.compress(b"manifest.json" + b"\0" * 2000)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(good[:12] + bytes(b ^ 0x5A for b in good[12:40]) + good[40:])
    assert not looks_like_bundle(bad)
