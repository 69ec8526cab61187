"""One comparison, one set of numbers: the estimate, the interval, its level and p of each
candidate are the same in run's output, show, compare SESSION, compare A B --baseline C over
the same series, the HTML report (its verdict lines and its table), every export format and
the JSON of show and compare.

A real session of three commands (real processes, a real SQLite store) with a reference, so the
family has two comparisons and Holm's steps give two different levels (97.5 % and 95 % when
both are decided); the numbers are compared with each other, never with a timing. A second,
imported session of fixed values takes the other path of the verdict: the fastest chosen by
the data (Holm over all three pairs), one series autocorrelated (the widened test, its WARNING)
and a comparison ten runs cannot decide for that dependence.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
import pytest

from benchlab.store.formats.exporters import EXPORTERS
from tests.cli.forked import run_cli

#: A candidate's numbers in a verdict line ('ran 1.62× faster than x, 97.5% CI [1.53, 1.76]
#: (p = 0.00015' or 'ratio 1.004, 95% CI [0.970, 1.030] (p = 0.71') or in a row of the
#: report's table ('1.62× slower 97.5% CI [1.53, 1.76] p = 0.00015').
NUMBERS = re.compile(r"(?:([\d.]+)× \w+(?: than [^,]+)?|ratio ([\d.]+)),? ([\d.]+)% CI [\[(]([\d.]+), "
                     r"([\d.]+)[\])] \(?p ([=<] [\d.e+-]+)")
REFERENCE = "sleep 0.03"


def _numbers(lines: list[str], names: tuple[str, ...] = (), reference: str = REFERENCE
             ) -> dict[str, tuple]:
    """{candidate: (estimate, level, low, high, p)} of every line about a candidate (one of
    ``names``; by default the ``sleep 0.0N`` commands other than ``reference``)."""
    pattern = "|".join(map(re.escape, names)) if names else r"sleep 0\.0\d+"
    out = {}
    for line in lines:
        m = NUMBERS.search(line)
        if m is None:
            continue
        faster_by, ratio, level, low, high, p = m.groups()
        candidate = next(n for n in re.findall(pattern, line) if n != reference)
        assert candidate not in out, (candidate, lines)
        out[candidate] = (faster_by or ratio, level, low, high, p)
    return out


def _cells(page: str, tag: str) -> list[str]:
    """The text of each ``tag`` element of an HTML page (tags inside stripped)."""
    found = re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", page, flags=re.S)
    return [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", x))).strip()
            for x in found]


def _decimals(printed: str) -> int:
    return len(printed.partition(".")[2])


def _agrees(candidate: dict, printed: tuple) -> None:
    """The JSON's full-precision numbers of one candidate, rounded as printed."""
    estimate, level, low, high, p = printed
    ratio, lo, hi = candidate["ratio"], candidate["ratio_low"], candidate["ratio_high"]
    if candidate["outcome"] == "faster":  # printed as reference / candidate
        ratio, lo, hi = 1 / ratio, 1 / hi, 1 / lo
    for value, text in ((ratio, estimate), (lo, low), (hi, high)):
        assert f"{value:.{_decimals(text)}f}" == text, (value, text, candidate)
    assert f"{100 * candidate['interval_level']:.3g}" == level, (candidate, level)
    assert f"= {candidate['p_adjusted']:.2g}" == p, (candidate, p)


def _every_reader_agrees(tmp_path, uid: str, db: str, numbers: dict, names: tuple[str, ...] = (),
                         reference: str = REFERENCE, stored: bool = True) -> None:
    """show, compare SESSION, the HTML and Markdown reports, every export and the JSON of show
    and compare print ``numbers`` (as :func:`_numbers` reads them) for session ``uid``;
    ``stored``: the session stored its verdict (run does; an import stores no verdict, so its
    JSON and CSV exports carry none)."""

    def same(text: str | list[str], where: str) -> None:
        lines = text.splitlines() if isinstance(text, str) else text
        assert _numbers(lines, names, reference) == numbers, (where, text)

    same(run_cli("show", uid, "--db", db, check=True).stdout, "show")
    same(run_cli("compare", uid, "--db", db, check=True).stdout, "compare SESSION")
    page = tmp_path / f"{uid}.html"
    run_cli("report", uid, "-o", str(page), "--db", db, check=True)
    same([c for c in _cells(page.read_text(), "div") if " CI " in c and len(c) < 600],
         "report: the verdict lines")
    same([c for c in _cells(page.read_text(), "tr") if "CI" in c], "report: the table")
    md = tmp_path / f"{uid}.md"
    run_cli("report", uid, "--format", "markdown", "-o", str(md), "--db", db, check=True)
    text = md.read_text().replace("\\", "")
    same([x for x in text.splitlines() if x.startswith("- ")], "markdown report: the lines")
    same([x.replace(" | ", " ") for x in text.splitlines() if x.startswith("| ")],
         "markdown report: the table")

    shown = json.loads(run_cli("show", uid, "--json", "--db", db, check=True).stdout)["verdict"]
    compared = json.loads(run_cli("compare", uid, "--json", "--db", db, check=True).stdout)
    assert compared["verdict"] == shown
    for candidate in shown["candidates"]:
        _agrees(candidate, numbers[candidate["name"]])

    for fmt in EXPORTERS:
        out = run_cli("export", uid, "--format", fmt, "--db", db, check=True).stdout
        if fmt in ("markdown", "asciidoc", "orgmode"):  # hyperfine's table, then the verdict
            same(out, f"export {fmt}")
        elif fmt in ("json", "csv"):
            meta = (json.loads(out)["sessions"][0]["metadata"] if fmt == "json" else json.loads(
                next(line for line in out.splitlines()
                     if line.startswith(f"# session {uid} metadata: ")).split(": ", 1)[1]))
            assert (meta["verdict"]["result"] == shown if stored else "verdict" not in meta), fmt
        else:  # hyperfine's JSON and CSV: per-command statistics, no comparison to disagree
            rows = (json.loads(out)["results"] if fmt == "hyperfine"
                    else list(csv.DictReader(io.StringIO(out))))
            assert rows and not any("relative" in key or "ratio" in key
                                    for row in rows for key in row), (fmt, rows[0])


@pytest.mark.slow
def test_every_command_and_file_reads_the_same_numbers(tmp_path):
    db = str(tmp_path / "b.db")
    run = run_cli("run", "-N", "-r", "6", "--reference", REFERENCE, "sleep 0.001", "sleep 0.01",
                  "--db", db, check=True, cwd=tmp_path)
    numbers = _numbers(run.stdout.splitlines())
    assert set(numbers) == {"sleep 0.001", "sleep 0.01"}, run.stdout
    header = next(line for line in run.stdout.splitlines() if line.startswith("verdict"))
    assert "each at its Holm step's level 1 - 0.05/k" in header  # why the levels differ
    uid = re.search(r"stored as session (\w+)", run.stdout).group(1)
    _every_reader_agrees(tmp_path, uid, db, numbers)

    given = run_cli("compare", f"{uid}:sleep 0.001", f"{uid}:sleep 0.01", "--baseline",
                    f"{uid}:{REFERENCE}", "--db", db, check=True).stdout
    assert _numbers(given.splitlines()) == numbers, given  # compare A B --baseline C
    # nor a power analysis's run count beside a decided verdict ("not enough samples ...
    # should be >= 1090597" after a 9.96x result at p < 1e-4)
    assert not re.search(r"median ratio|Hodges-Lehmann shift|samples|power", given), given


#: Ten runs each of three compressors (ns, in run order): zstd the fastest; gzip -1's runs
#: autocorrelated (lag-1 0.34), so its comparison is widened and, at ten runs, left undecided.
COMPRESSORS = {
    "zstd": [10004306, 7321959, 10212733, 8047961, 10375840, 12755227, 5140534, 9210122,
             10563957, 8281652],
    "gzip -1": [23314683, 17910509, 33568823, 24927388, 15163005, 13118813, 13372284, 13476078,
                19670038, 20646526],
    "xz -0": [54510661, 42405084, 50504996, 67982819, 59388845, 51120165, 31492118, 65975739,
              24865434, 62427301],
}


@pytest.mark.slow
def test_a_widened_family_of_three_pairs_reads_the_same_numbers_everywhere(tmp_path):
    """The fastest chosen by the data (Holm over three pairs: two levels on two lines), a
    widened comparison and a WARNING naming its evidence: show's numbers are every reader's."""
    data = tmp_path / "compressors.csv"
    data.write_text("label,value\n" + "".join(f"{name},{value}\n" for name in COMPRESSORS
                                              for value in COMPRESSORS[name]))
    db = str(tmp_path / "c.db")
    run_cli("import", str(data), "--format", "csv", "--unit", "ns", "--name", "c", "--db", db,
            check=True)
    shown = run_cli("show", "c", "--db", db, check=True).stdout
    numbers = _numbers(shown.splitlines(), tuple(COMPRESSORS), "zstd")
    assert set(numbers) == {"gzip -1", "xz -0"}, shown
    assert len({level for _, level, *_ in numbers.values()}) == 2, numbers  # Holm's steps
    # the warning names what flagged the series, not only a Ljung-Box p that did not
    assert "gzip -1's runs are autocorrelated (lag-1 autocorrelation 0.34" in shown, shown
    uid = json.loads(run_cli("show", "c", "--json", "--db", db, check=True).stdout)["uid"]
    _every_reader_agrees(tmp_path, uid, db, numbers, tuple(COMPRESSORS), "zstd", stored=False)


@pytest.mark.slow
def test_demo_stores_its_verdict_so_show_reads_the_same_lines(tmp_path):
    """The demo judges against libc qsort; show of its session said the fastest was the
    baseline, with other intervals and levels, until the demo stored its settings as run does."""
    db = str(tmp_path / "d.db")
    demo = run_cli("demo", "--runs", "5", "--warmup", "0", "--size", "1000", "--db", db,
                   check=True, cwd=tmp_path, timeout=300).stdout
    block = [line for line in demo.splitlines()
             if line.startswith(("verdict", "  quicksort", "  mergesort", "  cannot"))]
    assert block and "baseline: qsort, the reference" in block[0], demo
    uid = re.search(r"stored as session (\w+)", demo).group(1)
    shown = run_cli("show", uid, "--db", db, check=True).stdout.splitlines()
    assert all(line in shown for line in block), (block, shown)


@pytest.mark.slow
def test_a_sequential_session_reads_its_design_decision_everywhere(tmp_path):
    """After --until-decided a fixed-sample interval or p is not valid: the report printed one
    ("95% CI ... (p = 1.5e-11)") and show/compare --json carried one under verdict while their
    words gave the design's decision."""
    db = str(tmp_path / "u.db")
    ran = run_cli("run", "-N", "--until-decided", "--max-runs", "60", "--look-every", "5",
                  "-n", "quick", "-n", "slow", "sleep 0.002", "sleep 0.02", "--db", db,
                  check=True, cwd=tmp_path).stdout
    line = next(x for x in ran.splitlines() if x.startswith("until decided"))
    uid = re.search(r"stored as session (\w+)", ran).group(1)
    md = tmp_path / "r.md"
    run_cli("report", uid, "--format", "markdown", "-o", str(md), "--db", db, check=True)
    text = md.read_text().replace("\\", "")
    assert line.replace(">", "&gt;") in text and "% CI" not in text and "p =" not in text
    for args in (["show", uid, "--json"], ["compare", uid, "--json"]):
        doc = json.loads(run_cli(*args, "--db", db, check=True).stdout)
        assert doc["verdict"] is None and doc["verdict_lines"] == [line], (args, doc)
    exported = run_cli("export", uid, "--format", "markdown", "--db", db, check=True).stdout
    assert f"    {line}" in exported


@pytest.mark.slow
def test_the_report_orders_the_verdict_lines_as_run_did(tmp_path):
    """--sort command: run lists the candidates in command order; the report listed them by
    median (0.001 before 0.01)."""
    db = str(tmp_path / "s.db")
    ran = run_cli("run", "-N", "-r", "5", "--sort", "command", "sleep 0.02", "sleep 0.01",
                  "sleep 0.001", "--db", db, check=True, cwd=tmp_path).stdout
    said = [x.strip() for x in ran.splitlines() if x.startswith("  ") and "sleep 0.02" in x]
    named = [next(n for n in re.findall(r"sleep 0\.0\d+", x) if n != "sleep 0.02") for x in said]
    assert named == ["sleep 0.01", "sleep 0.001"], said  # command order, not the medians'
    md = tmp_path / "r.md"
    run_cli("report", "--format", "markdown", "-o", str(md), "--db", db, check=True)
    listed = [x[2:].replace("\\", "") for x in md.read_text().splitlines()
              if x.startswith("- ") and "sleep 0.02" in x and "CI" in x]
    assert listed == said, (listed, said)


def test_the_fastest_has_no_command_below_it_by_the_verdicts_estimate(tmp_path):
    """Skewed runs where the Hodges-Lehmann ratio is not transitive: c0 has the smallest
    median, c1 is below c0 and c2 below c1. Taking c1 read "baseline: c1, the fastest" and then
    "ratio 0.990" for c2; the baseline is the command with none below it."""
    runs = {"c0": [1048, 3067, 1018, 1371, 1109, 1114], "c1": [1241, 1262, 1021, 1020, 1114, 1211],
            "c2": [1022, 1047, 1244, 1157, 1108, 1116]}
    data = tmp_path / "skewed.csv"
    data.write_text("".join(f"{name},{v}\n" for name in runs for v in runs[name]))
    db = str(tmp_path / "f.db")
    run_cli("import", str(data), "--format", "csv", "--unit", "ns", "--name", "f", "--db", db,
            check=True)
    shown = json.loads(run_cli("show", "f", "--json", "--db", db, check=True).stdout)["verdict"]
    assert (shown["baseline"], shown["baseline_rule"]) == ("c2", "fastest"), shown
    assert all(c["ratio"] >= 1 for c in shown["candidates"]), shown["candidates"]


def test_one_comparison_reads_no_holm_in_the_reports_table(tmp_path):
    """Two commands make one comparison, uncorrected: the report's table headed its columns
    "interval (its Holm level)" and "p (Holm-adjusted)" beside a header without Holm."""
    data = tmp_path / "two.csv"
    data.write_text("".join(f"{name},{v}\n" for name in ("zstd", "gzip -1")
                            for v in COMPRESSORS[name]))
    db = str(tmp_path / "t.db")
    run_cli("import", str(data), "--format", "csv", "--unit", "ns", "--name", "t", "--db", db,
            check=True)
    md = tmp_path / "t.md"
    run_cli("report", "t", "--format", "markdown", "-o", str(md), "--db", db, check=True)
    heading = next(x for x in md.read_text().splitlines() if x.startswith("| command "))
    assert "| interval | p |" in heading and "Holm" not in md.read_text(), md.read_text()


#: Three series of 30 runs; A's lag-1 autocorrelation (0.41) is evidence of dependence for a
#: pair (1 %/2) but not among three commands (1 %/3).
BORDERLINE = {
    "A": [10740, 9952, 10057, 9612, 9734, 9916, 9752, 9558, 9493, 9400, 9019, 9470, 9982, 10457,
          10515, 11536, 10758, 10064, 11009, 9861, 10437, 9698, 10054, 9082, 10064, 9946, 9507,
          10657, 10658, 10281],
    "B": [9606, 10122, 9205, 10333, 10588, 9776, 10217, 10126, 9804, 9577, 9033, 10730, 9976,
          11344, 10421, 10139, 9676, 10721, 9750, 10816, 9802, 10093, 9266, 11243, 9953, 9809,
          10413, 9564, 10391, 9431],
    "C": [10276, 9491, 9122, 9707, 9294, 10280, 10010, 10257, 10045, 9824, 10014, 10540, 9908,
          9626, 9526, 9889, 9632, 10985, 9427, 9473, 9848, 10330, 9866, 9532, 9604, 9826, 10498,
          9522, 9954, 9698],
}


def test_the_data_checks_flag_the_series_the_verdict_flags(tmp_path):
    """compare A B --baseline C printed, under a verdict that was not widened, A's check line
    "autocorrelated runs ... the verdict's interval and p are widened for it": the pair's check
    weighed two series, the verdict three."""
    from benchlab.stats.verdict_pair import series_dependence

    a = np.array(BORDERLINE["A"], dtype=float)
    assert series_dependence(a, family=2).flagged and not series_dependence(a, family=3).flagged
    data = tmp_path / "three.csv"
    data.write_text("".join(f"{k},{v}\n" for k in BORDERLINE for v in BORDERLINE[k]))
    db = str(tmp_path / "b.db")
    run_cli("import", str(data), "--format", "csv", "--unit", "ns", "--name", "b", "--db", db,
            check=True)
    out = run_cli("compare", "b:A", "b:B", "--baseline", "b:C", "--db", db, check=True).stdout
    assert "widened" not in out and "WARNING" not in out, out
    assert out.count("PASSED: no series shows autocorrelation") == 2, out
    pair = run_cli("compare", "b:A", "b:C", "--db", db, check=True).stdout  # two commands
    assert "widened for autocorrelated runs" in pair and "WARNING: autocorrelated runs (A" in pair
