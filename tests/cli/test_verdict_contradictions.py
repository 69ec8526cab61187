"""Smaller contradictions a user read beside a verdict, each checked where it was seen: through
the commands (real processes, a real SQLite store of imported values) or, for the docs, against
the header the code writes today."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchlab.report.verdict_text import verdict_header
from tests.cli.forked import run_cli

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _import(tmp_path: Path, db: str, series: dict[str, list[float]]) -> None:
    f = tmp_path / "values.csv"
    f.write_text("".join(f"{name},{v!r}\n" for name, values in series.items() for v in map(float, values)))
    run_cli("import", "--format", "csv", "--unit", "ns", str(f), "--name", "s", "--db", db,
            check=True)


def test_compare_of_a_one_value_series_says_too_few_runs(tmp_path):
    """docs/verdict.md: a series of 1 value gives too_few_runs, never an error; compare refused
    it ("sample 'a' has 1 value(s); need at least 3") while show gave the verdict."""
    db = str(tmp_path / "b.db")
    _import(tmp_path, db, {"a": [1e6], "b": [1.1e6, 1.2e6, 1.3e6]})
    out = run_cli("compare", "a", "b", "--db", db, check=True).stdout
    assert "cannot tell a and b apart: with 1 run of a and 3 of b no result can reach" in out
    assert "use -r 4 or more" in out and "run each" not in out
    shown = run_cli("show", "s", "--db", db, check=True).stdout
    assert "with 3 runs of b and 1 of a" in shown and "run each" not in shown


@pytest.mark.slow
def test_values_near_1e300_read_finite_numbers_without_warnings(tmp_path):
    """Before: numpy RuntimeWarnings on stderr, "sd inf", "± inf" in the exports, and an error
    from compare --jaybeams-compatible: squares of the values overflowed. Python prints each
    RuntimeWarning on stderr, which is read here."""
    rng = np.random.default_rng(1)
    db = str(tmp_path / "b.db")
    _import(tmp_path, db, {"A": list(1e300 * rng.uniform(1, 1.7, 20)),
                           "B": list(1e300 * rng.uniform(1, 1.7, 20))})
    for args in (["compare", "A", "B"], ["show", "s"], ["analyze", "A"],
                 ["compare", "A", "B", "--jaybeams-compatible", "--resamples", "200"],
                 ["export", "s", "--format", "markdown"], ["export", "s", "--format", "hyperfine"],
                 ["report", "s", "--format", "markdown", "-o", str(tmp_path / "r.md")]):
        proc = run_cli(*args, "--db", db)
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0 and "Warning" not in text, (args, text)
        assert not re.search(r"\b(inf|nan)\b", text, flags=re.I), (args, text)


def test_the_docs_show_the_verdict_header_the_code_writes():
    """Every verdict header quoted in the docs is the one ``run`` prints today for the same
    baseline, rule and family (docs/run.md kept an older header for months)."""
    header = re.compile(r"^verdict(?: on (\w+))? \(baseline: (.+?), (the reference|the fastest|"
                        r"the first command|as given); (.*?)(?:, Holm over (\d+) \w+)?; "
                        r"Hodges-Lehmann", flags=re.M)
    rules = {"the reference": "reference", "the fastest": "fastest",
             "the first command": "first", "as given": "given"}
    found = 0
    for page in sorted(DOCS.glob("*.md")):
        for m in header.finditer(page.read_text()):
            metric, baseline, rule, test, family = m.groups()
            inflated, widened = "Wald" in test, "widened" in test
            candidate = SimpleNamespace(test="inflated" if inflated else "exact",
                                        has_note=lambda code, w=widened: w and code == "widened")
            v = SimpleNamespace(baseline=baseline, baseline_rule=rules[rule],
                                family=int(family or 1), alpha=0.05,
                                correction="holm" if family else "none",
                                metric=metric or "wall", candidates=[candidate])
            line = page.read_text()[m.start():].splitlines()[0]
            assert line == verdict_header(v), (page.name, line)
            found += 1
    assert found >= 2  # run.md and hyperfine.md quote one each


@pytest.mark.slow
def test_jaybeams_compatible_shows_that_analysis_numbers_only(tmp_path):
    """Autocorrelated runs under --jaybeams-compatible: the structured verdict's WARNING "the
    intervals and p-values above are widened for it" sat under JayBeams lines whose test is not
    widened, and the report's table gave the structured verdict's ratio and interval beside the
    JayBeams outcome."""
    rng = np.random.default_rng(4)
    drift = np.cumsum(rng.normal(0, 0.03, 40))  # shared slow drift: lag-1 near 1
    db = str(tmp_path / "b.db")
    _import(tmp_path, db, {"a": list(1e6 * np.exp(drift[:20])),
                           "b": list(1.05e6 * np.exp(drift[20:]))})
    page = tmp_path / "r.html"
    out = run_cli("compare", "a", "b", "--jaybeams-compatible", "--resamples", "200",
                  "--report", str(page), "--db", db, check=True).stdout
    assert "auto-correlation" in out and "widened" not in out, out
    header = re.search(r"<tr><th>command</th>.*?</tr>", page.read_text()).group(0)
    assert "HL shift" in header and "Holm level" not in header, header
    # the same runs without the flag: the structured verdict, widened and saying so (so the
    # WARNING's absence above is the flag's doing, not the data's)
    plain = run_cli("compare", "a", "b", "--db", db, check=True).stdout
    assert "widened for it" in plain, plain
