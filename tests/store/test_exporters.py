"""Export formats are one interface and one registry (:mod:`benchlab.store.formats.exporters`):
every registered format answers the interface on a real store's session, and a format added
as one module plus one registry line is written by ``export_sessions`` and ``benchlab export``
like the built-in ones."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.store import Store
from benchlab.store.formats import EXPORT_FORMATS, export_sessions, import_path
from benchlab.store.formats.exporters import EXPORTERS, ExportOptions, exporter

BENCHLAB = str(Path(sys.executable).parent / "benchlab")


@pytest.fixture
def session_store(tmp_path) -> Store:
    """A real store holding one imported session: two benchmarks, three values each."""
    csv = tmp_path / "r.csv"
    csv.write_text("fast,1000\nfast,1100\nfast,1050\nslow,2000\nslow,2100\nslow,2050\n")
    store = Store.open(tmp_path / "s.db")
    import_path(store, csv, "csv", name="two", unit="ns")
    yield store
    store.close()


def test_every_registered_format_follows_the_interface(session_store):
    assert EXPORT_FORMATS == tuple(EXPORTERS)
    for name in EXPORTERS:
        export = exporter(name)
        assert list(inspect.signature(export).parameters) == ["sessions", "options"], name
        text = export_sessions(session_store, [], name, time_unit="millisecond")
        assert isinstance(text, str) and "fast" in text and "slow" in text, name


def test_a_format_added_to_the_registry_is_exported_like_the_others(session_store,
                                                                    monkeypatch):
    monkeypatch.setitem(EXPORTERS, "tsv", "tests.store.tsv_exporter:export")
    text = export_sessions(session_store, [], "tsv")
    assert text.splitlines() == ["fast\t1", "slow\t1"]  # one imported run of 3 values each
    assert exporter("tsv")([], ExportOptions()) == "\n"


def test_an_unknown_format_is_one_line_naming_the_registered_ones(session_store):
    with pytest.raises(UserError, match=r"unknown export format 'xml'; choose one of csv, json"):
        export_sessions(session_store, [], "xml")


def test_the_cli_offers_exactly_the_registered_formats(tmp_path):
    proc = subprocess.run([BENCHLAB, "export", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    offered = " ".join(proc.stdout.split())
    assert all(name in offered for name in EXPORTERS), offered
