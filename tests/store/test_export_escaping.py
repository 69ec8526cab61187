"""Hostile names in exports: CSV cells a spreadsheet would run are neutralised, Markdown shows
user text literally. Rendered with a real CommonMark parser (markdown-it-py, raw HTML on)."""

from __future__ import annotations

import csv
import io

import pytest
from markdown_it import MarkdownIt

from benchlab.store import SessionWriter, Store
from benchlab.store.formats import export_sessions, import_path
from benchlab.store.formats.common import (
    FORMULA_TRIGGERS,
    markdown_code,
    markdown_text,
    spreadsheet_safe,
    spreadsheet_unsafe,
)

HOSTILE = [
    "=HYPERLINK(\"http://evil\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd",
    "'=already", "normal ./bm/x", "a|b", "two\nlines", "<script>alert(1)</script>",
    "[click](http://evil.example)", "![img](http://evil.example/x.png)", "`tick`", "**bold**",
    "back\\slash", "<http://autolink.example>",
]


@pytest.fixture
def hostile_db(tmp_path):
    db = tmp_path / "h.db"
    with Store.open(db) as store:
        w = SessionWriter.create(store, "run", name="=cmd|'/c calc'!A0", environment=None)
        w.add_metric("-lat", unit="=ns", origin="test")
        for i, name in enumerate(HOSTILE):
            bid = w.add_benchmark(name, command=name)
            for k in range(3):
                w.add_run(bid, iteration=k, fields={"status": "ok", "wall_ns": 1000 * (i + 1) + k},
                          samples={"-lat": [-5.0, 7.5]})
        w.finish("done")
    return db


@pytest.mark.parametrize("text", HOSTILE + ["", "'", "''", "-", "'-", "x"])
def test_spreadsheet_safe_is_reversible_and_never_starts_with_a_trigger(text):
    safe = spreadsheet_safe(text)
    assert safe[:1] not in FORMULA_TRIGGERS
    assert spreadsheet_unsafe(safe) == text


def test_csv_export_neutralises_text_cells_and_leaves_numbers(hostile_db, tmp_path):
    with Store.open(hostile_db) as store:
        text = export_sessions(store, [], "csv")
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if not r[0].startswith("#")]
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    for row in body:
        for name in ("session", "benchmark", "status", "metric", "unit"):
            assert row[col[name]][:1] not in FORMULA_TRIGGERS, row
    values = [row[col["value"]] for row in body if row[col["metric"]] == "'-lat"]
    assert "-5" in values and "7.5" in values  # numbers untouched, negative ones included
    assert {row[col["unit"]] for row in body if row[col["metric"]] == "'-lat"} == {"'=ns"}
    # every '#' line is JSON, so nothing in it starts a cell with a formula either
    assert all(line.startswith("# ") for line in text.split("\n") if line.startswith("#"))
    # benchlab reads its own export back exactly
    out = tmp_path / "x.csv"
    out.write_text(text)
    with Store.open(tmp_path / "back.db") as other:
        [ref] = import_path(other, out, "csv")
        names = [b["name"] for b in other.benchmarks(ref.id)]
        assert names == HOSTILE  # CR and LF inside quoted names included
        assert other.metrics(ref.id)[0]["name"] == "-lat"
    csv_hf = None
    with Store.open(hostile_db) as store:
        csv_hf = export_sessions(store, [], "hyperfine-csv")
    for row in list(csv.reader(io.StringIO(csv_hf)))[1:]:
        assert row[0][:1] not in FORMULA_TRIGGERS and float(row[1]) > 0


def _render(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


def test_markdown_export_shows_user_text_literally(hostile_db):
    with Store.open(hostile_db) as store:
        text = export_sessions(store, [], "markdown")
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) == 2 + len(HOSTILE)  # header, rule, one line per benchmark
    html = _render(text)
    assert html.count("<tr>") == 1 + len(HOSTILE)
    assert "<script>" not in html and "<a " not in html and "<img" not in html
    assert "<strong>" not in html
    for name in HOSTILE:
        shown = name.replace("\r\n", "\\n").replace("\r", "\\n").replace("\n", "\\n")
        escaped = (shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                   .replace('"', "&quot;"))
        assert f"<code>{escaped}</code>" in html, name


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_renders_as_itself(text):
    html = _render(f"### {markdown_text(text)}\n")
    assert html.count("<h3>") == 1 and "<a " not in html and "<script>" not in html
    assert "<strong>" not in html and "<img" not in html and "<code>" not in html


def test_markdown_code_keeps_backticks_inside():
    html = _render("| a |\n|---|\n| " + markdown_code("x`y``z") + " |\n")
    assert "<code>x`y``z</code>" in html
