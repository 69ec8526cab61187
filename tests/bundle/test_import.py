"""``benchlab import --format bundle``: a colleague's sessions join the local store with their
provenance; the same bundle twice and an altered bundle are refused with nothing stored."""

from __future__ import annotations

import hashlib
import json

from tests.bundle.test_archive import members_of, repack
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def _sessions(db):
    return json.loads(run_cli("list", "--json", db=db, check=True).stdout)


def test_import_keeps_data_and_provenance(measured, bundled, tmp_path):
    _, uid = measured
    db = tmp_path / "colleague.db"
    proc = run_cli("import", str(bundled), "--format", "bundle", "--json", db=db, check=True)
    info = json.loads(proc.stdout)
    assert info["runs"] == 22 and info["benchmarks"] == 2  # 2 x (1 warmup + 10 runs)
    exported = json.loads(run_cli("export", info["uid"], "--format", "json", db=db,
                                  check=True).stdout)["sessions"][0]
    meta = exported["metadata"]
    assert meta["imported_from"]["uid"] == uid
    assert meta["bundle"]["sha256"] == hashlib.sha256(bundled.read_bytes()).hexdigest()
    assert meta["bundle"]["original_uid"] == uid
    original = json.loads(members_of(bundled)["data/sessions.json"])["sessions"][0]
    assert exported["protocol"] == original["protocol"]
    assert exported["environment"] == original["environment"]
    for b_new, b_old in zip(exported["benchmarks"], original["benchmarks"]):
        assert [r["wall_ns"] for r in b_new["runs"]] == [r["wall_ns"] for r in b_old["runs"]]
    again = run_cli("import", str(bundled), "--format", "bundle", db=db)
    assert_one_line_error(again, "already imported")
    assert len(_sessions(db)) == 1


def test_altered_bundle_imports_nothing(bundled, tmp_path):
    members = members_of(bundled)
    members["data/sessions.json"] = members["data/sessions.json"].replace(b'"array"', b'"arrai"')
    bad = repack(members, tmp_path / "bad.benchlab.tar.gz")
    db = tmp_path / "colleague.db"
    assert_one_line_error(run_cli("import", str(bad), "--format", "bundle", db=db),
                          "data/sessions.json")
    assert not db.exists() or _sessions(db) == []


def test_a_bundle_of_an_import_has_nothing_to_measure(tmp_path):
    csv = tmp_path / "results.csv"
    csv.write_text("".join(f"array,{100 + i % 7}\nmap,{300 + i % 5}\n" for i in range(20)))
    db = tmp_path / "imported.db"
    run_cli("import", str(csv), "--format", "csv", "--unit", "ns", db=db, check=True)
    uid = _sessions(db)[0]["uid"]
    bundle = tmp_path / "imported.benchlab.tar.gz"
    run_cli("bundle", uid, "-o", str(bundle), db=db, check=True)
    assert run_cli("reproduce", str(bundle), "--analysis-only").returncode == 0
    assert_one_line_error(run_cli("reproduce", str(bundle), db=db),
                          "no run session with a protocol", "--analysis-only")


def test_several_sessions_in_one_bundle(tmp_path):
    db = tmp_path / "two.db"
    for name, base in (("first", 100), ("second", 200)):
        csv = tmp_path / f"{name}.csv"
        csv.write_text("".join(f"a,{base + i % 7}\nb,{base + 50 + i % 5}\n" for i in range(12)))
        run_cli("import", str(csv), "--format", "csv", "--unit", "ns", db=db, check=True)
    uids = [s["uid"] for s in reversed(_sessions(db))]
    bundle = tmp_path / "two.benchlab.tar.gz"
    run_cli("bundle", *uids, "-o", str(bundle), db=db, check=True)
    members = members_of(bundle)
    assert json.loads(members["manifest.json"])["sessions"] == uids
    analysis = json.loads(members["analysis/analysis.json"])
    assert [s["uid"] for s in analysis["sessions"]] == uids
    assert [s["comparisons"]["comparisons"][0]["outcome"] for s in analysis["sessions"]] == \
        ["faster", "faster"]  # a (100..106 ns) against b (150..154 ns), 12 values each
    proc = run_cli("reproduce", str(bundle), "--analysis-only")
    assert proc.returncode == 0 and proc.stdout.count("identical") == 3, proc.stdout
