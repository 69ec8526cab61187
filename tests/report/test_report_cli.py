"""``benchlab report`` and ``benchlab history`` end to end on real SQLite stores (files on disk,
the real console script), and the report's statistics against independent implementations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, require_tool
from tests.report.storebuild import add_session, environment, two_command_store


@pytest.fixture
def pair_db(tmp_path: Path) -> tuple[Path, str, str]:
    db = tmp_path / "pair.db"
    uid, other = two_command_store(db)
    return db, uid, other


def test_html_report_is_self_contained_and_says_the_verdict(pair_db, tmp_path):
    db, uid, _ = pair_db
    out = tmp_path / "r.html"
    proc = run_cli("report", "pair", "-o", str(out), db=db, check=True)
    assert "wrote" in proc.stdout and out.is_file()
    html = out.read_text()
    # offline: bokeh's JS is inside the file, nothing is fetched from a CDN or the network
    assert "Bokeh" in html and "cdn.bokeh.org" not in html
    # no external resource is loaded by the page (the browser test also blocks the network)
    import re
    assert re.findall(r"<script[^>]*\bsrc=", html) == [] and "<link" not in html
    # one session: its own verdict, as run and show give it (baseline: the fastest, 'fast'),
    # so 'slow' is 5 % slower than it (one verdict everywhere)
    assert 'data-outcome="slower"' in html
    assert "Comparison against fast" in html and "fast ran 1.0" in html
    with Store.open(db, readonly=True) as store:
        fast = store.resolve_series(f"{uid}:fast").values
        slow = store.resolve_series(f"{uid}:slow").values
    # the independent Hodges-Lehmann ratio (median of the pairwise log ratios), as the
    # verdict's sentence and the table write it (3 decimals near 1)
    ratio = float(np.exp(np.median(np.subtract.outer(np.log(slow), np.log(fast)))))
    assert f"{ratio:.3f}× slower" in html and f"fast ran {ratio:.3f}× faster than slow" in html
    from benchlab.units import format_value
    assert format_value(float(np.median(fast)), "ns", 5) in html
    # the failed run's stderr tail and the command lines are shown
    assert "cannot open input.dat" in html and "./slow --size 1000" in html
    assert out.stat().st_size < 5e6


def test_compare_writes_the_same_report(pair_db, tmp_path):
    db, uid, _ = pair_db
    out = tmp_path / "cmp.html"
    proc = run_cli("compare", f"{uid}:fast", f"{uid}:slow", "--report", str(out), db=db,
                   check=True)
    assert "faster" in proc.stdout
    html = out.read_text()
    assert 'data-outcome="faster"' in html and "Comparison against slow" in html
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as any file, not mkstemp's 0600


def test_plots_and_markdown_carry_the_same_numbers(pair_db, tmp_path):
    db, _, _ = pair_db
    plots = tmp_path / "plots"
    run_cli("report", "pair", "-o", str(tmp_path / "r.html"), db=db, check=True)
    md = tmp_path / "r.md"
    # the figure files are drawn once (a set costs seconds), by the markdown report, which
    # links them: --plots writes the same files for either format (output.write_model; the
    # HTML report's --plots is checked by test_browser's study report)
    run_cli("report", "pair", "--format", "markdown", "-o", str(md), "--plots", str(plots),
            db=db, check=True)
    pngs = sorted(plots.glob("*.png"))
    svgs = sorted(plots.glob("*.svg"))
    assert len(pngs) == len(svgs) >= 9
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert all(b"<svg" in p.read_bytes()[:2000] for p in svgs)
    text = md.read_text()
    html = (tmp_path / "r.html").read_text()
    shift = text.split("| slow | ")[1].split(" | ")[2]  # HL shift cell of 'slow'
    assert shift in html
    links = [line for line in text.splitlines() if line.startswith("![")]
    assert len(links) >= 9, text
    for link in links:
        target = link.split("](")[1].rstrip(")")
        assert (md.parent / target).is_file() and (md.parent / target).parent == plots, link


def test_bad_selector_is_one_line_and_leaves_nothing(pair_db, tmp_path):
    db, _, _ = pair_db
    out = tmp_path / "x.html"
    before = db.read_bytes()
    proc = run_cli("report", "nosuch", "-o", str(out), "--plots", str(tmp_path / "p"), db=db)
    assert_one_line_error(proc, "nosuch")
    assert not out.exists() and not (tmp_path / "p").exists()
    assert db.read_bytes() == before
    proc = run_cli("report", "pair", "-o", str(tmp_path / "no" / "dir" / "r.html"), db=db)
    assert_one_line_error(proc, "does not exist")
    proc = run_cli("report", "pair", db=db)
    assert_one_line_error(proc, "-o FILE")
    # a directory that exists but takes no files (procfs): one line before any computation
    assert_one_line_error(run_cli("report", "pair", "-o", "/proc/r.html", db=db),
                          "cannot write in /proc")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".benchlab")] == []


def _history_store(path: Path, n_sessions: int = 12, step_at: int = 7) -> list[str]:
    rng = np.random.default_rng(3)
    uids = []
    with Store.open(path) as store:
        for i in range(n_sessions):
            level = 10e6 * (1.05 if i >= step_at else 1.0)
            env = environment(**{"git.commit": f"{i:02x}" * 20, "os.kernel.release":
                                 "6.5.0" if i >= step_at else "6.1.0"})
            uids.append(add_session(store, {"parse": level * rng.lognormal(0, 0.01, 30)},
                                    name=f"nightly-{i}", env=env))
    return uids


def test_history_flags_the_step_and_the_kernel_change(tmp_path):
    db = tmp_path / "h.db"
    uids = _history_store(db)
    proc = run_cli("history", "parse", db=db, check=True)
    lines = proc.stdout.splitlines()
    assert "12 sessions measured parse; 1 step found." in lines[0]
    assert lines[1].startswith(f"Regression at {'07' * 4}") and "kernel: 6.1.0 → 6.5.0" in lines[1]
    rows = [l for l in lines if l[:4] == "2026" or l[:2] == "20"]
    assert len(rows) == 12
    flagged = [r for r in rows if "regression" in r or "improvement" in r]
    assert len(flagged) == 1 and uids[7] in flagged[0]


def test_history_statistics_are_the_change_points_of_the_session_medians(tmp_path):
    from benchlab.report.history import build_history
    from benchlab.stats.changepoint import change_points

    db = tmp_path / "h.db"
    _history_store(db)
    with Store.open(db, readonly=True) as store:
        h = build_history(store, "parse")
        samples = [store.resolve_series(f"{p.session_uid}:parse").values for p in h.points]
    medians = [float(np.median(s)) for s in samples]
    [cp] = change_points(medians, alpha=h.alpha)
    assert cp.index == 7 and cp.regression
    assert h.points[7].p_adjusted == pytest.approx(cp.p_value)
    assert h.points[7].shift == pytest.approx(np.median(medians[:7]) * (cp.ratio - 1))
    for p, s in zip(h.points, samples):
        assert p.median == pytest.approx(np.median(s))
        assert p.low <= p.median <= p.high
    assert [p.step for p in h.points] == [None] * 7 + ["regression"] + [None] * 4


def test_history_unknown_name_is_one_line(tmp_path):
    db = tmp_path / "h.db"
    _history_store(db, n_sessions=2)
    assert_one_line_error(run_cli("history", "nosuch", db=db), "nosuch")


def test_heavy_libraries_stay_unimported_until_rendering():
    code = ("import sys, benchlab.cli.report, benchlab.report.model, benchlab.report.history, "
            "benchlab.report.output;"
            "print(sorted(m for m in ('bokeh', 'matplotlib', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_counted_instructions_appear_beside_the_timings(tmp_path):
    """Real runs: two commands timed, then counted under valgrind's cachegrind."""

    require_tool("valgrind")
    db = tmp_path / "cnt.db"
    # 3 runs, the fewest a report compares: each run is also counted under valgrind (~0.4 s)
    run_cli("run", "-r", "3", "--count", "instructions", "/bin/true", "/bin/echo hi", db=db,
            check=True, timeout=300)
    out = tmp_path / "cnt.html"
    run_cli("report", "-o", str(out), db=db, check=True)
    html = out.read_text()
    with Store.open(db, readonly=True) as store:
        uid = store.sessions(limit=1)[0]["uid"]
        for name in ("/bin/true", "/bin/echo hi"):
            counts = store.resolve_series(f"{uid}:{name}/instructions").values
            wall = store.resolve_series(f"{uid}:{name}/wall").values
            assert counts.size >= 1 and wall.size == 3
            assert f"{np.median(counts):,.0f}" in html  # the count, beside...
            from benchlab.units import format_value
            assert format_value(float(np.median(wall)), "ns", 5) in html  # ...the timing
    assert "instructions / run" in html


EDGE_CASES = {
    "all failed beside a good one": ({"ok": [5e6, 5.1e6, 5.2e6, 4.9e6], "none": []},
                                     "none: no successful measured run"),
    "too few runs to compare": ({"a": [5e6, 5.1e6, 5.2e6, 4.9e6], "b": [1e6, 2e6],
                                 "c": [5e6, 5.1e6, 5.3e6, 4.9e6]}, "b: only 2 successful"),
    "identical constants": ({"c1": [5e6] * 5, "c2": [5e6] * 5}, None),
    "zero medians": ({"z": [0.0] * 5, "z2": [0, 0, 0, 1.0, 0]}, None),
    "clock-grid ties": ({"t": [1e6, 2e6] * 20, "t2": [1e6, 2e6, 3e6] * 10}, None),
    "a 1e15 outlier": ({"spike": [1e6] * 30 + [1e15],
                        "n": list(np.random.default_rng(0).normal(1e6, 1e3, 31))}, None),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_legal_data_never_crashes_the_report(tmp_path, case):
    from benchlab.report.html.render import render_html
    from benchlab.report.markdown import render_markdown
    from benchlab.report.model import build_report

    data, note = EDGE_CASES[case]
    with Store.open(tmp_path / "e.db") as store:
        add_session(store, {k: np.asarray(v, dtype=float) for k, v in data.items()},
                    failed={"none": "boom"} if "none" in data else None)
        model = build_report(store, [])
    html, md = render_html(model), render_markdown(model)
    if note:
        assert any(n.startswith(note) for n in model.notes) and note in html
    else:
        assert model.notes == [] and model.comparison is not None
        assert 'data-outcome="' in html and "Comparison against" in md
    if "none" in data:
        assert "boom" in html  # the failed run's stderr is still shown


def test_nothing_reportable_is_one_line(tmp_path):
    db = tmp_path / "e.db"
    with Store.open(db) as store:
        add_session(store, {"x": np.array([1e6, 2e6])})
    assert_one_line_error(run_cli("report", "-o", str(tmp_path / "r.html"), db=db),
                          "3 or more successful runs")
    assert not (tmp_path / "r.html").exists()
