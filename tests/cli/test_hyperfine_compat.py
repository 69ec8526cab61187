"""benchlab as a drop-in for hyperfine: a table of hyperfine invocations through the real
``benchlab`` console script, each checked for its meaning (runs counted, files written by shell
redirection, exports in hyperfine's schema, hook order, stdin/stdout, names, sort, units).

Where Debian's hyperfine (1.15) supports an invocation, hyperfine itself runs it too and the
structure of the two JSON exports is compared (keys, commands, number of results and times).
Plus: the verdict after two commands, ``--count instructions``, exports rendered byte for byte
like hyperfine's from hyperfine's own JSON, and the one-line errors of ``-N`` on shell syntax.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from benchlab.store import Store
from benchlab.store.formats.asciidoc import asciidoc_text, markup_table
from benchlab.store.formats.orgmode import orgmode_text
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, needs_tool

HYPERFINE = shutil.which("hyperfine")
RESULT_KEYS = {"command", "mean", "stddev", "median", "user", "system", "min", "max", "times",
               "exit_codes"}
CSV_HEADER = ["command", "mean", "stddev", "median", "user", "system", "min", "max"]
ANSI = re.compile(r"\x1b\[")
COLOR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-9]|9[0-7]|38;5;[0-9]+)m")


@dataclass
class Case:
    """One hyperfine invocation: its arguments, what it must mean, and whether hyperfine 1.15
    accepts it (then hyperfine runs it too and the exports' structures are compared)."""

    id: str
    args: list[str]
    check: Callable[[Path, subprocess.CompletedProcess, dict], None] | None = None
    hyperfine: bool = True
    files: dict[str, str] = field(default_factory=dict)


def _times(doc: dict) -> list[int]:
    return [len(r["times"]) for r in doc["results"]]


def _commands(doc: dict) -> list[str]:
    return [r["command"] for r in doc["results"]]


def _log(tmp: Path) -> list[str]:
    return (tmp / "log").read_text().split()


def _instruction_samples(db: Path) -> list[float]:
    with Store.open(db) as store:
        bench = store.benchmarks(store.sessions()[0]["id"])[0]
        values, _ = store.sample_values(bench["id"], "instructions")
    return values.tolist()


def _check_warmup(tmp, proc, doc):
    assert _times(doc) == [3]
    assert _log(tmp) == ["r"] * 5  # 2 warmups + 3 timed runs, warmups not in times


def _check_prepare(tmp, proc, doc):
    assert _log(tmp) == ["p", "r"] * 3


def _check_conclude(tmp, proc, doc):
    assert _log(tmp) == ["p", "r", "c"] * 3


def _check_conclude_per_command(tmp, proc, doc):
    log = _log(tmp)
    assert len(log) == 8
    for i in range(0, 8, 2):  # every timing run is followed by its own command's conclude
        assert log[i + 1] == {"a": "ca", "b": "cb"}[log[i]], log


def _check_setup_cleanup(tmp, proc, doc):
    assert _log(tmp) == ["s", "r", "r", "r", "c"]


def _check_redirection(tmp, proc, doc):
    assert (tmp / "out.txt").read_text() == "hi\n"


def _check_and_list(tmp, proc, doc):
    assert doc["results"][0]["exit_codes"] == [0, 0]
    # the shell ran the sleep, not just `true`: 40 ms of a 50 ms sleep leaves room for the
    # shell's cost measured on a loaded machine exceeding its cost in these runs
    assert min(doc["results"][0]["times"]) >= 0.04


def _check_scan(tmp, proc, doc):
    assert _commands(doc) == ["sleep 0.001", "sleep 0.002", "sleep 0.003"]
    assert [r["parameters"] for r in doc["results"]] == [{"n": "1"}, {"n": "2"}, {"n": "3"}]


def _check_step(tmp, proc, doc):
    assert _commands(doc) == ["sleep 0.001", "sleep 0.002", "sleep 0.003"]


def _check_list(tmp, proc, doc):
    assert _commands(doc) == ["echo a", "echo b"]
    assert [r["parameters"] for r in doc["results"]] == [{"x": "a"}, {"x": "b"}]


def _check_two_lists(tmp, proc, doc):
    assert len(doc["results"]) == 4
    assert {tuple(sorted(r["parameters"].items())) for r in doc["results"]} == {
        (("x", a), ("y", b)) for a in "ab" for b in "12"}


def _check_names(tmp, proc, doc):
    assert _commands(doc) == ["first", "second"]


def _check_ignore_failure(tmp, proc, doc):
    assert doc["results"][0]["exit_codes"] == [1, 1, 1]


def _check_bash(tmp, proc, doc):
    assert (tmp / "v.txt").read_text().strip()  # $BASH_VERSION is set only under bash


def _check_input(tmp, proc, doc):
    assert (tmp / "copy.txt").read_text() == "fed through stdin\n"


def _check_output_file(tmp, proc, doc):
    assert (tmp / "stdout.txt").read_text() == "hello\n"
    assert "hello" not in proc.stdout


def _check_output_pipe(tmp, proc, doc):
    assert (tmp / "was_pipe").exists()


def _check_output_null(tmp, proc, doc):
    assert (tmp / "was_null").exists()


def _check_show_output(tmp, proc, doc):
    assert proc.stdout.count("MARKER-7") == 3


def _check_style_none(tmp, proc, doc):
    assert proc.stdout == "" and proc.stderr == ""


def _check_style_basic(tmp, proc, doc):
    assert not ANSI.search(proc.stdout + proc.stderr)
    assert "sleep 0.001" in proc.stdout


def _check_style_nocolor(tmp, proc, doc):
    assert not COLOR.search(proc.stdout + proc.stderr)  # no colour ...
    assert "━" in proc.stderr  # ... but the interactive progress bar, even without a terminal


def _check_markdown_ms(tmp, proc, doc):
    text = (tmp / "t.md").read_text()
    assert text.splitlines()[0] == "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |"
    assert "| `sleep 0.01` |" in text


def _check_markdown_s(tmp, proc, doc):
    lines = (tmp / "t.md").read_text().splitlines()
    assert lines[0] == "| Command | Mean [s] | Min [s] | Max [s] | Relative |"
    assert re.search(r"\| 0\.\d{3} ± 0\.\d{3} \| 0\.\d{3} \|", lines[2]), lines[2]


def _check_markdown_us(tmp, proc, doc):
    lines = (tmp / "t.md").read_text().splitlines()
    assert lines[0] == "| Command | Mean [µs] | Min [µs] | Max [µs] | Relative |"
    mean = float(lines[2].split("|")[2].split("±")[0])
    assert 1000 <= mean < 100_000  # sleep 0.001 without a shell takes more than 1000 µs


def _check_csv(tmp, proc, doc):
    rows = list(csv.reader((tmp / "t.csv").open()))
    assert rows[0] == CSV_HEADER + ["parameter_n"]
    assert [r[0] for r in rows[1:]] == ["sleep 0.001", "sleep 0.002"]
    for row, result in zip(rows[1:], doc["results"]):
        assert float(row[1]) == pytest.approx(result["mean"], rel=1e-12)
        assert float(row[6]) == pytest.approx(min(result["times"]), rel=1e-12)


def _check_orgmode_sorted(tmp, proc, doc):
    lines = (tmp / "t.org").read_text().splitlines()
    assert lines[0] == "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |"
    assert lines[1] == "|--+--+--+--+--|"
    assert [l.split("=")[1] for l in lines[2:]] == ["sleep 0.001", "sleep 0.02"]
    assert lines[2].endswith("|  1.00 |")


def _check_asciidoc_command_order(tmp, proc, doc):
    text = (tmp / "t.adoc").read_text()
    assert text.startswith('[cols="<,>,>,>,>"]\n|===\n| Command \n| Mean [ms] \n')
    assert text.index("`sleep 0.02`") < text.index("`sleep 0.001`")
    assert text.endswith("|===\n")


def _check_reference(tmp, proc, doc):
    assert _commands(doc) == ["sleep 0.1", "sleep 0.001"]  # the reference is timed first
    assert "baseline: sleep 0.1" in proc.stdout
    assert re.search(r"sleep 0\.001 ran [\d.]+× faster than sleep 0\.1", proc.stdout), proc.stdout


def _check_reference_name(tmp, proc, doc):
    # hyperfine 1.19's --reference-name names the reference; -n names the other commands
    assert _commands(doc) == ["old", "new"]
    assert "baseline: old" in proc.stdout
    assert re.search(r"new ran [\d.]+× faster than old", proc.stdout), proc.stdout


def _check_min_benchmarking_time(tmp, proc, doc):
    # hyperfine's hidden spelling of --min-time: 0.3 s of a 0.1 s sleep is 3 runs at least
    assert _times(doc)[0] >= 3


def _check_grep_glob(tmp, proc, doc):
    assert doc["results"][0]["exit_codes"] == [0, 0]  # the glob matched a.txt (grep found TODO)


def _check_min_max_runs(tmp, proc, doc):
    assert _times(doc) == [3]


def _check_min_runs(tmp, proc, doc):
    assert _times(doc)[0] >= 4


CASES = [
    Case("runs", ["-r", "3", "sleep 0.001"], lambda t, p, d: _times(d) == [3] or pytest.fail()),
    Case("warmup", ["-w", "2", "-r", "3", "echo r >> log"], _check_warmup),
    Case("min-max-runs", ["-m", "2", "-M", "3", "sleep 0.001"], _check_min_max_runs),
    Case("min-runs-time", ["-m", "4", "-M", "6", "sleep 0.3"], _check_min_runs),
    Case("prepare", ["-r", "3", "-p", "echo p >> log", "echo r >> log"], _check_prepare),
    Case("conclude", ["-r", "3", "-p", "echo p >> log", "-C", "echo c >> log", "echo r >> log"],
         _check_conclude, hyperfine=False),
    Case("conclude-per-command", ["-r", "2", "-C", "echo ca >> log", "-C", "echo cb >> log",
                                  "echo a >> log", "echo b >> log"],
         _check_conclude_per_command, hyperfine=False),
    Case("setup-cleanup", ["-r", "3", "-s", "echo s >> log", "-c", "echo c >> log",
                           "echo r >> log"], _check_setup_cleanup),
    Case("redirection", ["-r", "2", "echo hi > out.txt"], _check_redirection),
    Case("and-list", ["-r", "2", "sleep 0.05 && true"], _check_and_list),
    Case("parameter-scan", ["-r", "2", "-P", "n", "1", "3", "sleep 0.00{n}"], _check_scan),
    Case("parameter-step", ["-r", "2", "-P", "d", "0.001", "0.003", "-D", "0.001", "sleep {d}"],
         _check_step),
    Case("parameter-list", ["-r", "2", "-L", "x", "a,b", "echo {x}"], _check_list),
    Case("two-lists", ["-r", "2", "-L", "x", "a,b", "-L", "y", "1,2", "echo {x}{y}"],
         _check_two_lists),
    Case("command-name", ["-r", "2", "--command-name", "first", "-n", "second", "sleep 0.001",
                          "sleep 0.002"], _check_names),
    Case("ignore-failure", ["-r", "3", "-i", "false"], _check_ignore_failure),
    Case("shell-bash", ["-r", "2", "-S", "bash", "echo $BASH_VERSION > v.txt"], _check_bash),
    Case("shell-bash-norc", ["-r", "2", "--shell", "bash --norc", "echo $BASH_VERSION > v.txt"],
         _check_bash),
    Case("shell-default", ["-r", "2", "--shell", "default", "echo hi > out.txt"],
         _check_redirection),
    Case("no-shell", ["-N", "-r", "3", "sleep 0.001"]),
    Case("shell-none", ["--shell", "none", "-r", "3", "sleep 0.001"]),
    Case("input-file", ["-r", "2", "--input", "in.txt", "cat > copy.txt"], _check_input,
         hyperfine=False, files={"in.txt": "fed through stdin\n"}),
    Case("input-null", ["-r", "2", "--input", "null", "cat"], hyperfine=False),
    Case("output-file", ["-r", "2", "--output", "./stdout.txt", "printf 'hel%s\\n' lo"],
         _check_output_file),
    Case("output-pipe", ["-r", "2", "--output", "pipe", "test -p /dev/stdout && touch was_pipe"],
         _check_output_pipe),
    Case("output-null", ["-r", "2", "--output", "null", "test -c /dev/stdout && touch was_null"],
         _check_output_null),
    Case("output-inherit", ["-r", "3", "--output", "inherit", "echo MARKER-$((3+4))"],
         _check_show_output),
    Case("show-output", ["-r", "3", "--show-output", "echo MARKER-$((3+4))"], _check_show_output),
    Case("style-none", ["-r", "2", "--style", "none", "sleep 0.001"], _check_style_none),
    Case("style-basic", ["-r", "2", "--style", "basic", "sleep 0.001"], _check_style_basic),
    Case("style-nocolor", ["-r", "2", "--style", "nocolor", "sleep 0.001"], _check_style_nocolor),
    Case("style-full", ["-r", "2", "--style", "full", "sleep 0.001"]),
    Case("style-color", ["-r", "2", "--style", "color", "sleep 0.001"]),
    # commands of 10 ms and more: hyperfine 1.15 refuses markup exports when the shell
    # correction leaves a mean of 0, which a loaded machine makes likely for sleep 0.001
    Case("time-unit-ms", ["-r", "2", "-u", "millisecond", "--export-markdown", "t.md",
                          "sleep 0.01"], _check_markdown_ms),
    Case("time-unit-s", ["-r", "2", "--time-unit", "second", "--export-markdown", "t.md",
                         "sleep 0.01"], _check_markdown_s),
    # -N: through sh the shell's cost measured on a loaded machine can exceed its cost in
    # the runs, and a 1 ms sleep came out under 1000 µs
    Case("time-unit-us", ["-N", "-r", "2", "-u", "microsecond", "--export-markdown", "t.md",
                          "sleep 0.001"], _check_markdown_us, hyperfine=False),
    Case("export-csv", ["-r", "2", "-P", "n", "1", "2", "--export-csv", "t.csv",
                        "sleep 0.00{n}"], _check_csv),
    Case("sort-mean-time", ["-r", "2", "--sort", "mean-time", "--export-orgmode", "t.org",
                            "sleep 0.02", "sleep 0.001"], _check_orgmode_sorted, hyperfine=False),
    Case("sort-command", ["-r", "2", "--sort", "command", "--export-asciidoc", "t.adoc",
                          "sleep 0.02", "sleep 0.001"], _check_asciidoc_command_order,
         hyperfine=False),
    # -N: through sh a loaded machine's shell cost can leave the 1 ms sleep a median of 0 or
    # less, and no ratio (hence no "ran N× faster") can be stated against it
    # 0.1 s against 1 ms (0.02 s did not decide: the sleeps' wake-ups overlapped); the point is
    # the words and order, not a close call. 20 runs each, not 10: in a fresh-clone CI at load
    # ~2 the 1 ms sleep's first run took 2.3x its median and the later ones fell, a lag-1
    # autocorrelation of 0.50 over 10 runs each; the verdict, widened for it as designed, left
    # the 30x pair undecided (p = 0.051). 20 runs each estimate that correlation better and
    # leave the widened test room to decide.
    Case("reference", ["-N", "-r", "20", "--reference", "sleep 0.1", "sleep 0.001"],
         _check_reference, hyperfine=False),
    Case("reference-name", ["-N", "-r", "20", "--reference", "sleep 0.1", "--reference-name",
                            "old", "-n", "new", "sleep 0.001"], _check_reference_name,
         hyperfine=False),
    Case("min-benchmarking-time", ["-N", "-m", "2", "--min-benchmarking-time", "0.3",
                                   "sleep 0.1"], _check_min_benchmarking_time, hyperfine=False),
    # hyperfine's README examples, adapted to this directory
    Case("readme-warmup-grep", ["--warmup", "1", "-r", "2", "grep -R TODO *"], _check_grep_glob,
         files={"a.txt": "TODO\n"}),
    Case("readme-no-shell-warmup", ["-N", "--warmup", "3", "-r", "3", "ls"]),
    Case("readme-export-markdown", ["-r", "2", "--export-markdown", "t.md", "sleep 0.01",
                                    "sleep 0.02"], _check_markdown_ms),
]


def _run_hyperfine(args: list[str], cwd: Path) -> dict:
    quiet = [] if {"--style", "--show-output", "inherit"} & set(args) else ["--style", "none"]
    proc = subprocess.run([HYPERFINE, *args, "--export-json", "h.json", *quiet],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads((cwd / "h.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hyperfine_invocation(case: Case, tmp_path: Path):
    work = tmp_path / "benchlab"
    work.mkdir()
    for name, text in case.files.items():
        (work / name).write_text(text)
    proc = run_cli("run", *case.args, "--export-json", "b.json", "--db", str(tmp_path / "b.db"),
                   cwd=work)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    doc = json.loads((work / "b.json").read_text())
    for result in doc["results"]:
        assert RESULT_KEYS <= set(result), result.keys()
        assert len(result["times"]) == len(result["exit_codes"])
        assert result["min"] <= result["median"] <= result["max"]
    if case.check is not None:
        case.check(work, proc, doc)
    if case.hyperfine and HYPERFINE:
        ref = tmp_path / "hyperfine"
        ref.mkdir()
        for name, text in case.files.items():
            (ref / name).write_text(text)
        theirs = _run_hyperfine(case.args, ref)
        assert _commands(doc) == _commands(theirs)
        assert [set(r) for r in doc["results"]] == [set(r) for r in theirs["results"]]
        if "-m" not in case.args:  # a time-bounded run count depends on each tool's estimate
            assert _times(doc) == _times(theirs)
    # the export is re-importable as hyperfine JSON
    imported = run_cli("import", "b.json", "--format", "hyperfine", "--db",
                       str(tmp_path / "i.db"), cwd=work)
    assert imported.returncode == 0, imported.stderr


@pytest.mark.parametrize("command,needle", [
    ("echo hi > out.txt", "redirection '>'"),
    ("sleep 0.01 && true", "and-list '&&'"),
    ("cat x | wc", "pipe '|'"),
    ("true; true", "separator ';'"),
    ("ls *.txt", "glob '*'"),
    ("echo $HOME", "variable '$HOME'"),
    ("echo `date`", "command substitution"),
    ("echo $(date)", "command substitution '$('"),
])
@pytest.mark.parametrize("flag", [["-N"], ["--shell", "none"]])
def test_no_shell_refuses_shell_syntax_in_one_line(command, needle, flag, tmp_path):
    proc = run_cli("run", *flag, "-r", "2", command, "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert_one_line_error(proc, needle, "drop -N")
    assert not (tmp_path / "out.txt").exists()
    assert not (tmp_path / "b.db").exists() or not Store.open(tmp_path / "b.db").sessions()


def test_no_shell_checks_commands_after_parameter_substitution(tmp_path):
    proc = run_cli("run", "-N", "-r", "1", "-L", "op", "&&,||", "true {op} true",
                   "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert_one_line_error(proc, "and-list", "drop -N")


def test_old_shell_flag_spelling_is_a_clear_error(tmp_path):
    """``--shell`` now takes the shell (hyperfine's -S): ``--shell true`` must not time
    ``true -c COMMAND``."""
    proc = run_cli("run", "-r", "2", "--shell", "true", "sleep 0.001",
                   "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert_one_line_error(proc, "does not behave like a shell")


@pytest.mark.parametrize("args,needles", [
    (["--input", "missing.txt", "cat"], ["--input", "missing.txt"]),
    (["--export-json", "nodir/x.json", "true"], ["--export-json", "does not exist"]),
    (["--output", "nodir/o.txt", "true"], ["--output", "does not exist"]),
    (["-N", "-S", "bash", "true"], ["-N"]),
    (["--show-output", "--output", "pipe", "true"], ["--show-output"]),
    (["-C", "true", "-C", "true", "-C", "true", "a", "b"], ["3", "conclude", "2 commands"]),
    (["--shell", "no-such-shell-xyz", "true"], ["no-such-shell-xyz", "not found"]),
    (["--reference-name", "old", "true"], ["--reference-name", "add --reference"]),
    (["--reference", "true", "--reference-name", "old", "-n", "a", "true", "false"],
     ["1 names", "2 commands"]),
    (["--reference", "true", "--reference-name", "old", "-n", "new", "true"],
     ["'new'", "'old'", "one name"]),
    (["--debug-mode", "sleep 1"], ["--debug-mode", "always measures"]),
])
def test_bad_hyperfine_options_are_one_line_errors(args, needles, tmp_path):
    proc = run_cli("run", "-r", "1", *args, "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert_one_line_error(proc, *needles)
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["b.db"])


@needs_tool("hyperfine")
@pytest.mark.parametrize("unit", [None, "second", "millisecond"])
def test_markup_tables_are_byte_identical_to_hyperfines(unit, tmp_path):
    """Rendered from hyperfine's own JSON, our AsciiDoc/org-mode tables equal hyperfine's."""
    args = [HYPERFINE, "-N", "-r", "3", "--style", "none", "sleep 0.002", "sleep 0.001",
            "--export-json", "h.json", "--export-asciidoc", "h.adoc", "--export-orgmode", "h.org"]
    if unit:
        args += ["-u", unit]
    subprocess.run(args, cwd=tmp_path, check=True, capture_output=True, timeout=60)
    results = json.loads((tmp_path / "h.json").read_text())["results"]
    table = markup_table(results, time_unit=unit)
    assert asciidoc_text(table) == (tmp_path / "h.adoc").read_text()
    assert orgmode_text(table) == (tmp_path / "h.org").read_text()


# -- the verdict after two or more commands ------------------------------------------------

@pytest.mark.serial
def test_verdict_decides_a_real_difference_in_the_right_direction(tmp_path):
    # -N: through sh, the shell's cost measured on a loaded machine can exceed its cost in the
    # runs by ~2 ms, taking it off the 10 ms sleep and pushing the ratio above 3.5
    proc = run_cli("run", "-N", "-r", "15", "sleep 0.01", "sleep 0.03",
                   "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"sleep 0\.01 ran ([\d.]+)× faster than sleep 0\.03, 95% CI \[([\d.]+), "
                  r"([\d.]+)\]", proc.stdout)
    assert m, proc.stdout
    ratio, low, high = map(float, m.groups())
    assert low <= ratio <= high
    assert 1.8 < ratio < 3.5  # 30 ms against 10 ms plus a little overhead each
    assert "Mann-Whitney" in proc.stdout


@pytest.mark.serial
def test_verdict_on_identical_commands_is_not_decided_and_says_how_many_runs(tmp_path):
    """The verdict's exact Mann-Whitney test with 6 runs each rejects 4.1 % of sessions of
    identical commands (38 of the 924 orderings; more when the load drifts during a session),
    so one session would fail this test about once in 25 runs of the suite by design (0 of 20
    sessions decided at load 6 here). One of three sessions must say it cannot tell them apart
    (all three deciding by chance: under 1 in 10,000); a verdict that always decides still
    fails."""
    outputs = []
    for attempt in range(3):
        proc = run_cli("run", "-r", "6", "-n", "a", "-n", "b", "sleep 0.005", "sleep 0.005",
                       "--db", str(tmp_path / f"b{attempt}.db"), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        if "× faster" not in proc.stdout:
            break
        outputs.append(proc.stdout)
    else:
        pytest.fail("identical commands were told apart in 3 sessions of 3:\n" + "\n".join(outputs))
    # the runs to decide come from the same statistic as the interval: on identical commands
    # the verdict says how many runs would show equivalence, or how many would decide
    assert (re.search(r"cannot tell (a and b|b and a) apart", proc.stdout)
            and re.search(r"about \d+ more runs each would (decide a [\d.]+% difference|"
                          r"decide a difference of [\d.]+%|show equivalence within ±[\d.]+%)",
                          proc.stdout)) or "equivalent" in proc.stdout, proc.stdout


@pytest.mark.serial
def test_three_commands_are_holm_corrected_against_the_fastest(tmp_path):
    # 30 runs: at 12 a drift the autocorrelation check reads as "about 1 independent run of
    # 12" leaves a 9x difference undecided (honestly, with its interval reaching 1)
    proc = run_cli("run", "-r", "30", "sleep 0.06", "sleep 0.005", "sleep 0.03",
                   "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "baseline: sleep 0.005" in proc.stdout and "Holm" in proc.stdout
    assert len(re.findall(r"sleep 0\.005 ran [\d.]+× faster than", proc.stdout)) == 2


# Not serial: with --sort command the baseline is the first command whatever the timings
def test_sort_command_makes_the_first_command_the_baseline(tmp_path):
    proc = run_cli("run", "-r", "8", "--sort", "command", "sleep 0.02", "sleep 0.001",
                   "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "baseline: sleep 0.02" in proc.stdout


# -- instruction counts ----------------------------------------------------------------------

@pytest.mark.slow
@needs_tool("valgrind")
def test_count_instructions_stores_a_metric_in_separate_runs(tmp_path):
    db = tmp_path / "b.db"
    proc = run_cli("run", "-N", "-r", "3", "--count", "instructions", "-n", "t", "true",
                   "--export-json", "t.json", "--db", str(db), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with Store.open(db) as store:
        session = store.sessions()[0]
        metrics = {m["name"]: m for m in store.metrics(session["id"])}
        assert metrics["instructions"]["unit"] == "count"
        assert metrics["instructions"]["origin"] == "cachegrind"
        runs = store.runs(session_id=session["id"])
    timed = [r for r in runs if r["wall_ns"] is not None and r["status"] == "ok"]
    assert len(timed) >= 3
    values = _instruction_samples(db)
    assert len(values) == 3
    assert len(set(values)) == 1 and values[0] > 10_000  # /bin/true: deterministic, > 10k
    # the counted runs are not timed runs: the hyperfine export holds the 3 timed ones only
    assert [len(r["times"]) for r in json.loads((tmp_path / "t.json").read_text())["results"]] == [3]
    analysed = run_cli("analyze", "t/instructions", "--db", str(db), cwd=tmp_path)
    assert analysed.returncode == 0, analysed.stderr
    assert "exact: every count is the same" in analysed.stdout
