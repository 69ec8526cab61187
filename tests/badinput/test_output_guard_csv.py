"""Text a study's suite controls (workload names, factor levels) is written into the study
report's CSV tables (``groups.csv``...) so that a spreadsheet shows it instead of running it:
a cell starting with ``= + - @``, tab or CR gets a leading ``'`` (OWASP "CSV injection");
numbers, negative ones included, are written as numbers."""

from __future__ import annotations

import csv

from benchlab.report.study_output import write_csv


def test_study_tables_escape_formulas(tmp_path):
    path = tmp_path / "groups.csv"
    rows = [{"workload": "=HYPERLINK(\"http://x.invalid\",\"a\")", "isolation": "+cmd|' /C calc'!A0",
             "affinity": "@SUM(1)", "load": "-2+3", "metric": "\tx", "mean_ns": -5.0, "n": 3},
            {"workload": "sort", "isolation": "bare", "affinity": "none", "load": "none",
             "metric": "wall", "mean_ns": 12.5, "n": 3}]
    write_csv(path, rows)
    with open(path, newline="") as fh:
        got = list(csv.DictReader(fh))
    assert [r["workload"] for r in got] == ["'=HYPERLINK(\"http://x.invalid\",\"a\")", "sort"]
    assert got[0]["isolation"].startswith("'+") and got[0]["affinity"] == "'@SUM(1)"
    assert got[0]["load"] == "'-2+3" and got[0]["metric"] == "'\tx"
    assert got[0]["mean_ns"] == "-5.0" and got[1]["mean_ns"] == "12.5"
