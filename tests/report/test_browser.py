"""Reports opened in real headless Chromium: figures drawn, no console errors, the verdict
and key numbers on the page, hostile names inert. Screenshots (to be looked at) go to
$BENCHLAB_SCREENSHOTS; without it only the comparison report's is taken (into the test's
temporary directory, so the screenshot stays tested), in the same Chromium start as the
probe's (the page is rendered once)."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import numpy as np
import pytest

from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.report.browser import needs_chromium, open_report
from tests.report.storebuild import add_session, environment, two_command_store
from tests.report.test_report_cli import _history_store

pytestmark = [needs_chromium, pytest.mark.slow]


def _shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("BENCHLAB_SCREENSHOTS") or tmp_path)


def _look(name: str, tmp_path: Path) -> Path | None:
    """Where the page's screenshot goes when a person asked for them ($BENCHLAB_SCREENSHOTS),
    else None (no screenshot)."""
    return _shots(tmp_path) / name if os.environ.get("BENCHLAB_SCREENSHOTS") else None


def _assert_figures_drawn(page, expected: int) -> None:
    assert len(page.figures) == expected, page.figures
    for fig in page.figures:
        assert fig["width"] > 200 and fig["height"] > 100 and fig["canvases"] >= 1, fig
    assert page.errors == [], page.errors


def test_comparison_report_in_chromium(tmp_path):
    db = tmp_path / "pair.db"
    uid, _ = two_command_store(db)
    out = tmp_path / "comparison.html"
    run_cli("report", "pair", "-o", str(out), db=db, check=True)
    page = open_report(out, tmp_path, shot=_shots(tmp_path) / "comparison.png", height=4200)
    # 3 comparison figures + 4 per benchmark (distribution, sequence, correlogram, CDF)
    _assert_figures_drawn(page, 3 + 2 * 4)
    with Store.open(db, readonly=True) as store:
        fast = store.resolve_series(f"{uid}:fast").values
    from benchlab.units import format_value
    # the baseline is the fastest, as run and show have it (one verdict everywhere)
    assert "Comparison against fast" in page.dom
    assert "slow vs fast" in page.dom and 'data-outcome="slower"' in page.dom
    assert "fast ran 1.05" in page.dom and "faster than slow" in page.dom
    assert format_value(float(np.median(fast)), "ns", 5) in page.dom
    assert "level shifts at runs" in page.dom  # the 3 % shift built into 'slow' at run 300


def test_hostile_names_stay_text(tmp_path):
    db = tmp_path / "hostile.db"
    rng = np.random.default_rng(1)
    names = {'<script>window.__pwned=1</script>': 5e6,
             '<img src=x onerror="window.__pwned=2">': 5.2e6,
             "quote\" ' and\nnewline [x](javascript:window.__pwned=6)": 5.1e6}
    with Store.open(db) as store:
        add_session(store, {n: level * rng.lognormal(0, 0.02, 40) for n, level in names.items()},
                    name='<script>window.__pwned=3</script>',
                    commands={n: "javascript:window.__pwned=4" for n in names},
                    env=environment(**{"host.hostname": "<script>window.__pwned=5</script>"}),
                    failed={next(iter(names)): "</pre><script>window.__pwned=7</script>"})
    out = tmp_path / "hostile.html"
    run_cli("report", "1", "-o", str(out), db=db, check=True)
    page = open_report(out, tmp_path, shot=_look("hostile.png", tmp_path), height=3000)
    assert page.pwned == "undefined"
    assert page.javascript_links == 0
    _assert_figures_drawn(page, 3 + 3 * 4)
    assert "<img" not in page.dom
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page.dom
    assert "&lt;/pre&gt;&lt;script&gt;window.__pwned=7" in page.dom
    md = tmp_path / "hostile.md"
    # the figure files are written once, by the markdown report (each set costs seconds)
    run_cli("report", "1", "--format", "markdown", "-o", str(md), "--plots",
            str(tmp_path / "plots"), db=db, check=True)
    # figure files keep to the plots directory whatever the names
    assert {p.parent for p in (tmp_path / "plots").iterdir()} == {tmp_path / "plots"}
    assert len(list((tmp_path / "plots").iterdir())) >= 3 + 3 * 4
    text = md.read_text()
    assert "<script" not in text and "<img" not in text
    import re
    assert re.search(r"(?<!\\)\]\(javascript", text) is None  # only an escaped \](
    assert "\\](javascript" in text


def test_history_report_in_chromium(tmp_path):
    db = tmp_path / "h.db"
    _history_store(db)
    out = tmp_path / "history.html"
    run_cli("report", "--history", "parse", "-o", str(out), db=db, check=True)
    page = open_report(out, tmp_path, shot=_look("history.png", tmp_path), height=1600)
    _assert_figures_drawn(page, 1)
    assert "Regression at" in page.dom and "kernel: 6.1.0 → 6.5.0" in page.dom


STUDY_SUITE = """
[study]
name = "tiny"
runs = 4
warmup = 0
seed = 3

[[workload]]
name = "exp_float"
builtin = "exp_float"
args = ["100000"]

[[workload]]
name = "gray2bin"
builtin = "gray2bin"
args = ["100000"]

[matrix]
isolation = ["bare", "cgroup"]
workers = [1, 2]
"""


def test_study_report_in_chromium(tmp_path):
    """A real study (real processes, bare and cgroup v1 isolation, 1 and 2 workers)."""
    suite = tmp_path / "suite.toml"
    suite.write_text(STUDY_SUITE)
    db = tmp_path / "study.db"
    uid = run_cli("study", str(suite), db=db, check=True, timeout=300).stdout.split()[1]
    out = tmp_path / "study.html"
    run_cli("report", "--study", uid, "-o", str(out), "--plots", str(tmp_path / "plots"),
            db=db, check=True)
    page = open_report(out, tmp_path, shot=_look("study.png", tmp_path), height=3600)
    # per workload: scatter by worker, boxes by workers and by isolation (2 x 3); the
    # interval-comparison summary per family (2); harness vs program, parallel ratios;
    # correlations within each cell per workload (2)
    _assert_figures_drawn(page, 2 * 3 + 2 + 2 + 2)
    assert "Comparisons per family" in page.dom and "isolation: cgroup vs bare" in page.dom
    keys = {p.stem for p in (tmp_path / "plots").glob("*.svg")}
    assert {"interval_comparisons-isolation-cgroup-vs-bare", "interval_comparisons-workers-2-vs-1",
            "harness_vs_program", "parallel_ratios", "perf_correlations-exp_float",
            "cpu_by_cell-exp_float", "box_workers-gray2bin"} <= keys


def test_machine_report_in_chromium(tmp_path, shared):
    """The VarSys16 paper's data: T3 (192.168.140.86) and its quota-throttled self against the base
    machine; Figure 2 for both, Figure 3 for the applications against the throttled range."""
    import json

    from benchlab.machines.variability import compute_variability
    from benchlab.machines.varsys16 import read_profiles
    from tests.machines.applications import applications_of_profiles

    profiles = read_profiles(shared / "data" / "varsys16" / "alltests.csv")
    base = profiles["piha.soe.ucsc.edu"]
    files = []
    for name in ("192.168.140.86@quota-6352", "192.168.140.86"):
        path = tmp_path / f"{name.replace('@', '_')}.json"
        path.write_text(json.dumps(compute_variability(profiles[name], base).to_dict()))
        files += ["--variability", str(path)]
    apps = applications_of_profiles(profiles["192.168.140.86@quota-6352"], base)
    csv_path = tmp_path / "apps.csv"
    csv_path.write_text("name,base,target,lower_is_better\n" + "".join(
        f"{a.name},{a.base!r},{a.target!r},{str(a.lower_is_better).lower()}\n" for a in apps))
    out = tmp_path / "machines.html"
    run_cli("report", *files, "--predict", str(csv_path), "-o", str(out), check=True)
    page = open_report(out, tmp_path, shot=_look("machines.png", tmp_path), height=1400)
    _assert_figures_drawn(page, 2)
    from benchlab.machines.predict import predict

    throttled = compute_variability(profiles["192.168.140.86@quota-6352"], base)
    outside = [p.name for p in predict(throttled, apps) if p.inside is False]
    assert f"{len(apps)} application(s) checked" in page.dom
    assert f": {len(outside)} outside." in page.dom and all(n in page.dom for n in outside)
    assert "Figure 2" in out.read_text() and "Figure 3" in out.read_text()


def test_seed_001_data_shows_seed_001_numbers(tmp_path, shared):
    """the JayBeams published workstation data, imported as users import it: the page states
    the verdict (array is faster), and the JayBeams-compatible comparison's page the post's
    Hodges-Lehmann estimate and interval (771.55 µs, [769.32, 773.77] µs, map - array)."""
    db = tmp_path / "jb.db"
    run_cli("import", str(shared / "data" / "jaybeams" / "workstation-results.csv"), db=db,
            check=True)
    out = tmp_path / "seed001.html"
    run_cli("report", "array", "map", "-o", str(out), db=db, check=True, timeout=300)
    page = open_report(out, tmp_path, shot=_look("seed001.png", tmp_path), height=4200)
    _assert_figures_drawn(page, 3 + 2 * 4)
    assert "array ran 2.95× faster than map" in page.dom
    assert "p = 0)" not in page.dom  # an underflowed p reads p < 1e-300
    # the post's own analysis (its shift and interval) is the JayBeams-compatible comparison's
    jb = tmp_path / "seed001-jaybeams.html"
    run_cli("compare", "array", "map", "--jaybeams-compatible", "--report", str(jb), db=db,
            check=True, timeout=300)
    text = html.unescape(re.sub(r"<[^>]+>", " ", jb.read_text()))
    assert "Hodges-Lehmann shift array - map: -771.55 µs, 95% CI [-773.77, -769.32] µs" in text
