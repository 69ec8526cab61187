"""The store's fast paths give exactly what the plain paths give: the chunked label,value CSV
reader (line numbers in errors, CRLF line ends, chunk boundaries, many or long labels) and
the vectorised CSV export, on real files and a real SQLite store."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.store import Store
from benchlab.store.formats import export_sessions, import_path, label_value_csv
from benchlab.store.formats.csv_long import format_value, format_values


def _rows(n: int, labels: list[str], seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(labels[i % len(labels)], f"{rng.random() * 1000:.{rng.randint(0, 6)}f}")
            for i in range(n)]


def _expected(rows: list[tuple[str, str]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for label, value in rows:
        out.setdefault(label, []).append(float(value))
    return out


LABEL_SETS = {"four": ["b0", "b1", "b2", "b3"], "seventy": [f"b{i}" for i in range(70)],
              "long": ["a", "x" * 40], "spaced": ["a", "with space"]}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("labels", list(LABEL_SETS))
def test_chunked_reader_matches_the_line_parser(tmp_path, monkeypatch, newline, labels):
    monkeypatch.setattr(label_value_csv, "_CHUNK_CHARS", 4096)  # many chunk boundaries in a small file
    fast = []
    real = label_value_csv._parse_plain_text
    monkeypatch.setattr(label_value_csv, "_parse_plain_text",
                        lambda *a: fast.append(real(*a)) or fast[-1])
    rows = _rows(20_000, LABEL_SETS[labels])
    path = tmp_path / "r.csv"
    with open(path, "w", newline="") as fh:
        fh.write(f"# comment{newline}name,nanoseconds{newline}")
        fh.writelines(f"{label},{value}{newline}" for label, value in rows)
        fh.write(f"# trailing comment{newline}")
    [imp] = label_value_csv.parse_csv(path)
    got = {b.name: b.runs[0].samples["value"].tolist() for b in imp.benchmarks}
    want = _expected(rows)
    assert list(got) == list(want) and got == want  # first-appearance order, exact values
    assert imp.metadata["rows"] == len(rows) and imp.metadata["header"] == "name,nanoseconds"
    assert imp.metadata["comments"] == ["# comment", "# trailing comment"]
    # plain chunks went the numpy way; long or spaced labels and CR line ends the line way
    plain = labels in ("four", "seventy") and newline == "\n"
    assert any(n is not None for n in fast) == plain


def test_chunked_reader_names_the_bad_line(tmp_path, monkeypatch):
    monkeypatch.setattr(label_value_csv, "_CHUNK_CHARS", 4096)
    rows = _rows(5_000, ["a", "b"])
    lines = [f"{label},{value}" for label, value in rows]
    lines[3_210] = "a,-5"
    (tmp_path / "bad.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match="line 3211: negative value"):
        label_value_csv.parse_csv(tmp_path / "bad.csv")
    lines[3_210] = "a,1,2"
    (tmp_path / "bad.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match="line 3211: 3 fields"):
        label_value_csv.parse_csv(tmp_path / "bad.csv")


def test_vectorised_export_is_the_plain_text(tmp_path):
    rng = np.random.default_rng(2)
    values = np.concatenate([rng.random(2000) * 1e3, np.round(rng.random(500) * 1e6),
                             [0.0, 1e16, 1e17, 5e-324, 0.1, 2.0 ** 53]])
    assert format_values(values) == [format_value(float(v)) for v in values]
    path = tmp_path / "v.csv"
    path.write_text("".join(f"=bad,{format_value(float(v))}\n" for v in values))
    with Store.open(tmp_path / "s.db") as store:
        [ref] = import_path(store, path, "csv", unit="=ns")
        text = export_sessions(store, [ref.uid], "csv")
    rows = [line for line in text.splitlines() if line.startswith(ref.uid)]
    # a formula-like label and unit get the spreadsheet prefix on every row
    assert rows == [f"{ref.uid},'=bad,0,0,0,imported,value,{format_value(float(v))},'=ns"
                    for v in values]
