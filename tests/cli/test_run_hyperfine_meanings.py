"""hyperfine's meanings, exactly: ``-i`` summarises and compares failed runs
by wall time in the terminal as in the exports; ``-M N`` alone runs N; the Markdown export's
Relative column follows ``--reference``; a failing command shows its stderr tail and exits 1
(bad input stays 2); ``run --alpha`` without ``--until-decided`` is refused naming
``--conf-level``; ``history`` takes ``--min-effect``.

Where Debian's hyperfine (1.15) has the flag, hyperfine runs the same invocation and the two
are compared (run counts, exit codes, number of failed runs' times).
"""

from __future__ import annotations

import json
import shutil
import subprocess

from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, needs_tool

HYPERFINE = shutil.which("hyperfine")
needs_hyperfine = needs_tool("hyperfine")


def _hyperfine(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([HYPERFINE, "--style", "basic", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_max_runs_alone_runs_that_many(db_path, tmp_path):
    """hyperfine -M 3 runs 3 times; benchlab used to refuse it (below the default --min-runs)."""
    run_cli("run", "-q", "-N", "-M", "3", "--export-json", str(tmp_path / "b.json"), "true",
            db=db_path, check=True)
    ours = json.loads((tmp_path / "b.json").read_text())
    assert len(ours["results"][0]["times"]) == 3
    if HYPERFINE:
        _hyperfine("-N", "-M", "3", "--export-json", "h.json", "true", cwd=tmp_path)
        theirs = json.loads((tmp_path / "h.json").read_text())
        assert len(theirs["results"][0]["times"]) == 3
    # -m and -M together still must not conflict (bad input: exit 2)
    assert_one_line_error(run_cli("run", "-q", "-m", "3", "-M", "2", "true", db=db_path),
                          "--max-runs (2) is below --min-runs (3)")


def test_ignore_failure_summarises_and_compares_failed_runs(db_path, tmp_path):
    """With -i, a command that always fails is summarised from its 3 runs' wall times (not
    "n 0"), the verdict compares it, and the JSON export holds the same 3 times."""
    failing = "sleep 0.01; exit 3"
    proc = run_cli("run", "-r", "3", "-i", failing, "sleep 0.03", "--export-json",
                   str(tmp_path / "b.json"), db=db_path, check=True)
    rows = [line.split() for line in proc.stdout.splitlines()]
    wall_rows = [r for r in rows if "wall" in r]
    assert len(wall_rows) == 2 and all(r[r.index("wall") + 2] == "3" for r in wall_rows), \
        proc.stdout
    assert "fewer than 3 measured runs" not in proc.stdout + proc.stderr
    assert "is empty" not in proc.stdout + proc.stderr
    assert "their times are summarised and compared" in proc.stdout
    assert "verdict" in proc.stdout
    doc = json.loads((tmp_path / "b.json").read_text())
    assert [len(r["times"]) for r in doc["results"]] == [3, 3]
    assert doc["results"][0]["exit_codes"] == [3, 3, 3]
    # selected by name, the failing command's series is its 3 runs too (analyze, compare)
    analysis = json.loads(run_cli("analyze", failing, "--json", db=db_path, check=True).stdout)
    assert analysis["series"]["n"] == 3
    run_cli("compare", failing, "sleep 0.03", db=db_path, check=True)
    if HYPERFINE:
        _hyperfine("-i", "-r", "3", failing, "sleep 0.03", "--export-json", "h.json",
                   cwd=tmp_path)
        theirs = json.loads((tmp_path / "h.json").read_text())
        assert [len(r["times"]) for r in theirs["results"]] == [3, 3]


def test_markdown_relative_column_follows_the_reference(db_path, tmp_path):
    """The reference row reads 1.00 even when it is the slower one (as the org-mode export)."""
    run_cli("run", "-q", "-N", "-r", "3", "--reference", "sleep 0.03", "sleep 0.001",
            "--export-markdown", str(tmp_path / "b.md"), "--export-orgmode",
            str(tmp_path / "b.org"), db=db_path, check=True)
    md = [line for line in (tmp_path / "b.md").read_text().splitlines() if "`sleep" in line]
    org = [line for line in (tmp_path / "b.org").read_text().splitlines() if "=sleep" in line]
    assert md[0].startswith("| `sleep 0.03`") and md[0].rstrip().endswith("| 1.00 |"), md
    assert org[0].startswith("| =sleep 0.03=") and org[0].rstrip().endswith("1.00 |"), org
    assert float(md[1].split("|")[5].split("±")[0]) < 1  # the faster command: below 1.00


def test_a_failing_command_shows_its_stderr_and_exits_1(db_path, tmp_path):
    """hyperfine exits 1 when a command fails; benchlab too, with the command's stderr tail.
    Bad input keeps exit 2."""
    proc = run_cli("run", "-r", "3", "echo first-line >&2; echo disk-full >&2; exit 3",
                   db=db_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("benchlab: error: command ")
    assert "exited with code 3" in proc.stderr and "-i=3" in proc.stderr
    assert "first-line" in proc.stderr and "disk-full" in proc.stderr
    assert "Traceback" not in proc.stderr
    hook = run_cli("run", "-r", "2", "-p", "echo no-disk >&2; exit 4", "true", db=db_path)
    assert hook.returncode == 1 and "prepare" in hook.stderr and "no-disk" in hook.stderr
    if HYPERFINE:
        assert _hyperfine("-r", "2", "exit 3", cwd=tmp_path).returncode == 1
    assert_one_line_error(run_cli("run", "-r", "0", "true", db=db_path), "--runs")


def test_alpha_without_until_decided_points_at_conf_level(db_path):
    proc = run_cli("run", "-r", "2", "--alpha", "0.01", "true", db=db_path)
    assert_one_line_error(proc, "--alpha", "--until-decided", "--conf-level")
    assert not db_path.exists() or Store.open(db_path).sessions() == []


def test_history_takes_min_effect_as_percentage_or_duration(db_path):
    for _ in range(2):
        run_cli("run", "-q", "-N", "-r", "3", "-n", "job", "sleep 0.001", db=db_path, check=True)
    for effect in ("2%", "1ms"):
        proc = run_cli("history", "job", "--min-effect", effect, db=db_path)
        assert proc.returncode == 0, proc.stderr
        assert "2 sessions measured job" in proc.stdout
    assert_one_line_error(run_cli("history", "job", "--min-effect", "2", db=db_path),
                          "--min-effect")
