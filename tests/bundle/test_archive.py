"""The bundle file: deterministic bytes, a manifest that lists every member with its SHA-256,
the members a reproduction needs, and one-line errors for bad bundles (exit 2, nothing left)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def members_of(path: Path) -> dict[str, bytes]:
    """Every member of an archive, read with the standard library only (not benchlab)."""
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def repack(members: dict[str, bytes], path: Path) -> Path:
    """Write ``members`` as a .tar.gz in the given order, as a tamperer would."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_same_sessions_give_the_same_bytes(measured, bundled, tmp_path):
    db, uid = measured
    again = tmp_path / "elsewhere" / "again.benchlab.tar.gz"
    again.parent.mkdir()
    run_cli("bundle", uid, "-o", str(again), db=db, check=True, cwd=tmp_path)
    assert hashlib.sha256(again.read_bytes()).digest() == \
        hashlib.sha256(bundled.read_bytes()).digest()
    raw = bundled.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0"  # gzip mtime 0
    assert raw[3] & 0x08 == 0  # no file name stored in the gzip header
    with tarfile.open(bundled, "r:gz") as tar:
        infos = tar.getmembers()
    assert infos[0].name == "manifest.json"
    assert [i.name for i in infos[1:]] == sorted(i.name for i in infos[1:])
    assert {(i.mtime, i.uid, i.gid, i.mode, i.uname, i.gname) for i in infos} == \
        {(0, 0, 0, 0o644, "", "")}


def test_manifest_lists_every_member_with_its_digest(bundled):
    members = members_of(bundled)
    manifest = json.loads(members.pop("manifest.json"))
    assert manifest["format"] == "benchlab-bundle" and manifest["format_version"] == 1
    listed = {m["name"]: m for m in manifest["members"]}
    assert set(listed) == set(members)
    for name, data in members.items():
        assert listed[name]["sha256"] == hashlib.sha256(data).hexdigest(), name
        assert listed[name]["size"] == len(data)


def test_bundle_holds_what_a_reproduction_needs(measured, bundled):
    from benchlab.store.db import Store
    from benchlab.workloads import amalgamated_source, build_workload

    db, uid = measured
    members = members_of(bundled)
    for name in ("data/sessions.json", f"protocols/{uid}.json", "provenance/executables.json",
                 "provenance/software.json", "analysis/analysis.json", "report/report.md",
                 "report/report.html", "sources/order_book.c"):
        assert name in members, name
    assert members["sources/order_book.c"].decode() == amalgamated_source("order_book")
    exe = build_workload("order_book")
    entries = json.loads(members["provenance/executables.json"])
    assert {e["benchmark"] for e in entries} == {"array", "map"}
    for e in entries:
        assert e["exists"] and e["workload"] == "order_book"
        assert e["sha256"] == hashlib.sha256(exe.read_bytes()).hexdigest()
    protocol = json.loads(members[f"protocols/{uid}.json"])
    assert protocol["protocol"]["runs"] == 10 and protocol["command_line"][1] == "run"
    data = json.loads(members["data/sessions.json"])
    store = Store.open(str(db), readonly=True)
    try:
        stored = len(store.runs(session_id=store.get_session(uid)["id"]))
    finally:
        store.close()
    assert sum(len(b["runs"]) for b in data["sessions"][0]["benchmarks"]) == stored
    assert "# benchlab report" in members["report/report.md"].decode()


def test_tampered_member_is_named(bundled, tmp_path):
    members = members_of(bundled)
    members["report/report.md"] += b"\nthe array book is 100x faster\n"
    bad = repack(members, tmp_path / "tampered.benchlab.tar.gz")
    assert_one_line_error(run_cli("reproduce", str(bad), "--analysis-only"),
                          "report/report.md", "altered")


def test_missing_member_is_named(bundled, tmp_path):
    members = members_of(bundled)
    del members["sources/order_book.c"]
    bad = repack(members, tmp_path / "missing.benchlab.tar.gz")
    assert_one_line_error(run_cli("reproduce", str(bad), "--analysis-only"),
                          "missing member sources/order_book.c")


def test_newer_format_version_asks_for_an_upgrade(bundled, tmp_path):
    members = members_of(bundled)
    manifest = json.loads(members["manifest.json"])
    manifest["format_version"] = 2
    members["manifest.json"] = json.dumps(manifest).encode()
    bad = repack(members, tmp_path / "newer.benchlab.tar.gz")
    assert_one_line_error(run_cli("reproduce", str(bad), "--analysis-only"),
                          "version 2", "upgrade benchlab")


def test_not_a_bundle(tmp_path):
    text = tmp_path / "notes.benchlab.tar.gz"
    text.write_text("array,123\n")
    assert_one_line_error(run_cli("reproduce", str(text), "--analysis-only"),
                          "not a benchlab bundle")
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        info = tarfile.TarInfo("hello.txt")
        tar.addfile(info, io.BytesIO(b""))
    assert_one_line_error(run_cli("reproduce", str(plain), "--analysis-only"), "manifest.json")
    assert_one_line_error(run_cli("reproduce", str(tmp_path / "absent.tar.gz")),
                          "cannot read bundle")


def test_bundle_of_a_session_that_no_longer_exists(measured, tmp_path):
    db, uid = measured
    out = tmp_path / "gone.benchlab.tar.gz"
    assert_one_line_error(run_cli("bundle", "deadbeef", "-o", str(out), db=db),
                          "no session 'deadbeef'")
    assert_one_line_error(run_cli("bundle", uid, "-o", str(tmp_path / "x.zip"), db=db),
                          ".tar.gz")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_gzip_header_of_a_python_written_bundle_is_fixed():
    """The writer itself, without the CLI: different member order in, same bytes out."""
    from benchlab.store.bundle import bundle_bytes

    a = bundle_bytes({"b/x.txt": b"1", "a.json": b"{}"})
    b = bundle_bytes({"a.json": b"{}", "b/x.txt": b"1"})
    assert a == b
    assert gzip.decompress(a)[:13] == b"manifest.json"
    assert bundle_bytes({"a.json": b"{ }", "b/x.txt": b"1"}) != a


def test_an_executable_that_no_longer_exists_is_noted(tmp_path):
    """A session measured with a copy of the workload that is deleted before bundling: the
    bundle says it is gone (no digest), and bundling says so on stderr."""
    import shutil

    from benchlab.workloads import build_workload

    exe = tmp_path / "order_book_copy"
    shutil.copy(build_workload("order_book"), exe)
    db = tmp_path / "gone.db"
    run_cli("run", "-N", "-r", "3", "-n", "copy", f"{exe} array 1000", db=db, check=True)
    uid = json.loads(run_cli("list", "--json", db=db, check=True).stdout)[0]["uid"]
    exe.unlink()
    out = tmp_path / "gone.benchlab.tar.gz"
    proc = run_cli("bundle", uid, "-o", str(out), db=db, check=True)
    assert f"note: {exe} no longer exists here" in proc.stderr
    (entry,) = json.loads(members_of(out)["provenance/executables.json"])
    assert entry["exists"] is False and "sha256" not in entry and entry["argv0"] == str(exe)
