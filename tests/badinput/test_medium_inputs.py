"""Inputs that were taken silently or refused wrongly: a ``--metric`` named like a harness
series (its values stored and never shown), a varsys16 file with a header only (exit 0, nothing
stored), a CSV label holding a quoted line break (valid CSV, refused as malformed). Real console
script, real SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchlab.store import Store
from tests.conftest import assert_one_line_error, run_cli


def _sessions(db: Path) -> list[dict]:
    if not db.exists():
        return []
    with Store.open(db) as store:
        return store.sessions()


@pytest.mark.parametrize("name", ["wall", "user", "max_rss"])
def test_a_metric_named_like_a_harness_series_is_refused_before_the_session(tmp_path, name):
    db = tmp_path / "b.db"
    proc = run_cli("run", "-q", "-r", "2", "echo 5", "--metric", rf"{name}=(\d+)", db=db)
    assert_one_line_error(proc, f"--metric {name}", "a series benchlab measures itself",
                          f"{name}_reported")
    assert _sessions(db) == []


def test_a_metric_import_named_like_a_harness_series_is_refused(tmp_path):
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    (outputs / "a.txt").write_text("5\n")
    db = tmp_path / "b.db"
    proc = run_cli("import", "--format", "metric", "--metric", r"wall=(\d+)", str(outputs), db=db)
    assert_one_line_error(proc, "--metric wall")
    assert _sessions(db) == []


def test_a_samples_label_named_like_a_harness_series_fails_the_run(tmp_path):
    out = tmp_path / "s.csv"
    proc = run_cli("run", "-q", "-r", "1", f"echo wall,5 > {out}", "--samples-csv", str(out),
                   db=tmp_path / "b.db")
    assert_one_line_error(proc, "label 'wall'", "wall_reported")


def test_a_varsys16_file_with_a_header_only_is_refused(tmp_path):
    path = tmp_path / "alltests.csv"
    path.write_text("machine,limits,benchmark,lower_is_better,class,repetition,result\n")
    db = tmp_path / "b.db"
    proc = run_cli("import", "--format", "varsys16", str(path), db=db)
    assert_one_line_error(proc, "alltests.csv", "no rows")
    assert _sessions(db) == []


def test_a_csv_label_with_a_quoted_line_break_is_imported(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('label,value\n"two\nlines",5\nplain,7\n"two\nlines",6\n"say ""hi""",1\n')
    db = tmp_path / "b.db"
    run_cli("import", "--format", "csv", str(path), db=db, check=True)
    with Store.open(db) as store:
        (session,) = store.sessions()
        names = [b["name"] for b in store.benchmarks(session["id"])]
        assert names == ["two\nlines", "plain", 'say "hi"']
        first = store.benchmarks(session["id"])[0]
        (run,) = store.runs(benchmark_id=first["id"])
        assert store.samples_of_run(run["id"])["value"].tolist() == [5.0, 6.0]


def test_a_quote_never_closed_is_one_line_naming_its_line(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('label,value\na,1\n"open,5\nb,6\n')
    proc = run_cli("import", "--format", "csv", str(path), db=tmp_path / "b.db")
    assert_one_line_error(proc, "q.csv", "opened on line 3 is never closed")


def test_a_samples_label_with_a_quoted_line_break_is_read(tmp_path):
    out = tmp_path / "s.csv"
    db = tmp_path / "b.db"
    run_cli("run", "-q", "-r", "1", f"printf '\"a\\nb\",5\\n' > {out}", "--samples-csv", str(out),
            db=db, check=True)
    with Store.open(db) as store:
        (run,) = store.runs(session_id=store.sessions()[0]["id"], include_warmup=False)
        assert store.samples_of_run(run["id"])["a\nb"].tolist() == [5.0]


@pytest.mark.parametrize("isolation, needle", [
    ("podman:--privileged", "cannot begin with '-'"),
    ("docker-exec:-v/:/host", "cannot begin with '-'"),
    ("podman:img,runtime=--foo", "runtime name cannot begin with '-'"),
    ("wrap:nonexistent-isolator {cmd}", "'nonexistent-isolator' is not an executable here")])
def test_an_isolation_that_cannot_start_is_refused_before_the_session(tmp_path, isolation,
                                                                      needle):
    """An image named like an option would reach the engine as one (``podman run ...
    --privileged true``), and the old error suggested ``podman import rootfs.tar
    --privileged``; a wrapper that does not exist failed every run after the session was
    stored."""
    db = tmp_path / "b.db"
    proc = run_cli("run", "-q", "-r", "1", "true", "--isolation", isolation, db=db)
    assert_one_line_error(proc, needle)
    assert "import rootfs.tar --" not in proc.stderr
    assert _sessions(db) == []
