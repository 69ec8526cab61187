"""Start-up and per-session cost of ``benchlab`` beside hyperfine's. Prints figures.

Median wall time of each command line over N runs, the commands interleaved round by round (so
machine load drifts across all of them alike), each run a fresh process with the environment's
PYTHONDONTWRITEBYTECODE as it is (the setup compiles bytecode, so it must not matter). Targets:
``--version`` and ``--help`` <= 0.15 s; ``run -q -N -r 1 /bin/true`` <= 0.15 s; ``run -q -N -r
100 /bin/true`` <= 2x ``hyperfine -N -r 100 /bin/true`` (whole processes); the same with its
full output (the summary, and the verdict of two commands), one and two commands, <= 2.5x
hyperfine's with its output, both to a pipe, beside the previous ratios and the floor of two
commands (bench/floor_program.py: 200 runs stored and numpy imported); ``show``, ``compare``
and ``list`` on the demo's store <= 0.3 s. Then where the time of ``run -q -N -r 1`` goes: CPU
time of the imports and of each phase of the session (environment probe, system checks, the
store, the runs), measured in one process. Commands run in a temporary directory (outside any
git work tree); one line repeats ``run -r 1`` in this repository, where the environment probe
also records the git commit (two forks of git). On a loaded machine compare the CPU column and
the CPU ratio: wall time is then mostly waiting for a CPU.

Usage:  .venv/bin/python bench/startup.py [--runs N] [--benchlab PATH] [--demo-db PATH]
                                            [--instructions]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TARGETS_S = {"--version": 0.15, "--help": 0.15, "run": 0.6, "run1": 0.15, "store": 0.3}
#: ``benchlab run -q -N -r 100`` may take at most this many times ``hyperfine -N -r 100``.
RATIO_GOAL = 2.0
#: Runs in the store of the ``--instructions`` line that shows the store's size in run's cost.
BIG_STORE_RUNS = 2000
#: The floor (bench/floor_program.py): interpreter, Click, SQLite, 100 runs each committed.
FLOOR_PROGRAM = Path(__file__).resolve().parent / "floor_program.py"
FLOOR = "floor: python+click+sqlite, 100 runs"
FLOOR_NO_CLICK = "  the same without click"
FLOOR2 = "floor: the same, 200 runs, numpy imported"
#: The everyday run with its full output, one and two commands, beside hyperfine's (goal 2.5x).
FULL1 = "benchlab run -N -r 100 /bin/true"
FULL2 = "benchlab run -N -r 100 /bin/true /bin/true"
HF1 = "hyperfine -N -r 100 /bin/true (output)"
HF2 = "hyperfine -N -r 100 /bin/true /bin/true"
FULL_GOAL = 2.5
#: The full-output ratios to hyperfine (CPU, wall) measured before, to print beside today's:
#: docs/hyperfine.md, 2026-12-07, load 14-21.
PREVIOUS = {FULL1: (3.3, 4.1), FULL2: (2.8, 3.8)}
HEAVY = ("numpy", "scipy", "pandas", "matplotlib", "rich", "dask", "jinja2", "bokeh", "psycopg")


#: CPU seconds (user + system) of each command's runs, the same order as its wall times: on a
#: loaded machine wall time grows with the load, CPU time much less, so both are printed.
CPU_S: dict[str, list[float]] = {}


def wall_s(argv: list[str], cwd: str | None = None, key: str | None = None) -> float:
    """Wall time in seconds of one run of ``argv`` in ``cwd`` (output discarded; a failure is
    fatal); its CPU time (user + system, children included) is appended to ``CPU_S[key]``
    (default: the command line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"startup: {' '.join(argv)} failed ({proc.returncode}): "
                 f"{proc.stderr.decode(errors='replace').strip()[-500:]}")
    CPU_S.setdefault(key or " ".join(argv), []).append(
        after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def heavy_importers(argv: list[str]) -> list[tuple[str, str, float]]:
    """(heavy package, the benchlab module whose import pulled it in first, total import time of
    the package's modules in s) for one run of ``argv`` (a benchlab command line)."""
    code = ("import sys; from benchlab.cli.main import main; sys.argv = ['benchlab'] + "
            f"{argv!r}; main()")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows = []  # (depth, module, self us), in completion order: children before their parents
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((depth, name.strip(), int(own)))
    first: dict[str, str] = {}
    total: dict[str, float] = {}
    for index, (depth, name, own) in enumerate(rows):
        top = name.split(".")[0]
        if top not in HEAVY:
            continue
        total[top] = total.get(top, 0.0) + own / 1e6
        if top in first:
            continue
        # The nearest enclosing benchlab module; depth 0 means a function imported it at run time.
        culprit, level = "(a function, at run time)", depth
        for later_depth, later_name, _ in rows[index + 1:]:
            if later_depth < level:
                level = later_depth
                if later_name.startswith("benchlab"):
                    culprit = later_name
                    break
        first[top] = culprit
    return [(top, first[top], total[top]) for top in first]


def demo_store(benchlab: str, tmp: str, given: str | None) -> tuple[str, str]:
    """(the demo's store, its session uid): ``--demo-db`` if given, else a fresh ``benchlab
    demo`` (a few seconds)."""
    db = given or str(Path(tmp) / "demo.db")
    if given is None:
        subprocess.run([benchlab, "demo", "--runs", "5", "--warmup", "1", "--db", db],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    out = subprocess.run([benchlab, "list", "--db", db], capture_output=True, text=True,
                         check=True).stdout  # a title line, the header, then newest first
    uid = next(line.split()[0] for line in out.splitlines()[2:] if line.strip())
    return db, uid


PHASES = """
import atexit, gc, sys, time
clock = time.process_time
marks = {}
gc.disable()  # as the console script's start-up does (benchlab.cli.main._hold_collection)
t = clock(); import click; marks["import click"] = clock() - t
t = clock(); import benchlab.cli.run; marks["import benchlab.cli.run (its module graph)"] = clock() - t
import benchlab.core.session as session, benchlab.environment as environment
import benchlab.store.writer as writer
def timed(owner, name, label):
    inner = getattr(owner, name)
    def wrapper(*a, **k):
        t = clock()
        try:
            return inner(*a, **k)
        finally:
            marks[label] = marks.get(label, 0.0) + clock() - t
    setattr(owner, name, wrapper)
timed(environment, "collect_environment", "  environment probe")
timed(session, "_system_checks", "  system checks")
timed(session, "_sweep_leftovers", "  sweep of leftovers")
timed(session, "prepare_execution", "  placement (cgroups, affinity)")
timed(writer.SessionWriter, "create", "  store: session created")
timed(session, "run_session", "  the runs, each stored")
timed(session, "_start", " session start (all of the above but runs)")
from benchlab.cli.main import main
def report():  # atexit: the console script's fast exit runs the handlers, then os._exit
    marks["the command, to its end (lazy imports too)"] = clock() - t
    for label, value in marks.items():
        print(f"{label:44} {value * 1e3:7.1f} ms")
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "scipy", "rich", "pandas"})
    print(f"{'heavy packages imported':44} {', '.join(heavy) or 'none'}")
    print(f"{'process CPU at exit (all of it, threads too)':44} {clock() * 1e3:7.1f} ms")
    sys.stdout.flush()
atexit.register(report)
sys.argv = ["benchlab", *sys.argv[1:]]
t = clock()
main()  # the console script's path (argv None): its fast exit included
"""


def instructions(argv: list[str], cwd: str) -> int | None:
    """User-space instructions of one run of ``argv`` (a whole process, its children not
    counted), by valgrind's cachegrind; None without valgrind. They do not depend on the
    machine's load, so a change of a few per cent shows on a busy machine too."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    proc = subprocess.run([valgrind, "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd)
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    return int(found.group(1).replace(",", "")) if proc.returncode == 0 and found else None


def print_instructions(bl: str) -> None:
    """``--instructions``: the instructions of the interpreter, of importing Click, and of
    ``run -q -N -r 1`` and ``-r 101`` (the second on the same store): fixed and per-run cost."""
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        db = str(Path(tmp) / "i.db")
        subprocess.run([bl, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", db], check=True)
        script = [sys.executable, bl]  # the console script, run by the interpreter valgrind runs
        counts = {
            "python -c pass": instructions([sys.executable, "-c", "pass"], tmp),
            "python -c 'import click'": instructions([sys.executable, "-c", "import click"], tmp),
            "run -q -N -r 1 /bin/true": instructions(
                [*script, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", db], tmp),
            "run -q -N -r 101 /bin/true": instructions(
                [*script, "run", "-q", "-N", "-r", "101", "/bin/true", "--db", db], tmp),
        }
        # opening a store that changed since its last whole check runs PRAGMA quick_check,
        # which reads every page, in proportion to the store's size (a user's default store
        # keeps every run); a run remembers the store it wrote as checked (unless a checkpoint
        # rewrote the file during it: a session of more than ~300 runs), so only a change by
        # another program (here a plain sqlite3 write) makes the next command pay it
        big = str(Path(tmp) / "big.db")
        subprocess.run([bl, "run", "-q", "-N", "-r", str(BIG_STORE_RUNS), "/bin/true", "--db", big],
                       check=True)
        subprocess.run([bl, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", big], check=True)
        counts[f"run -q -N -r 1, store of {BIG_STORE_RUNS} runs"] = instructions(
            [*script, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", big], tmp)
        subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                        "c.execute(\"INSERT INTO store_meta VALUES ('bench', 'x')\"); c.commit()",
                        big], check=True)
        counts["  the same, changed by another program"] = instructions(
            [*script, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", big], tmp)
    if None in counts.values():
        print("instructions: valgrind is not installed (or a run failed)")
        return
    print("instructions (valgrind cachegrind, user space, load-independent; millions):")
    for name, count in counts.items():
        print(f"  {name:40} {count / 1e6:9.1f} M")
    fixed_run = counts["run -q -N -r 1 /bin/true"]
    per_run = (counts["run -q -N -r 101 /bin/true"] - fixed_run) / 100
    click_too = counts["python -c 'import click'"]
    print(f"  per run {per_run / 1e6:.3f} M; fixed {(fixed_run - per_run) / 1e6:.1f} M, of "
          f"which the interpreter and Click {click_too / 1e6:.1f} M")


#: Imports the modules named in the file argv[1] (stdlib and others first when argv[2] is
#: "std"), with the collector off and the fast exit of ``benchlab run``: what importing costs.
IMPORT_ONLY = """
import gc, importlib, os, sys
gc.disable()
names = open(sys.argv[1]).read().split()
for name in names:
    if sys.argv[2] == "all" or not name.startswith("benchlab"):
        importlib.import_module(name)
os._exit(0)
"""
#: Runs the console script's ``main`` and writes the names of the modules it imported.
MODULES_OF_RUN = """
import atexit, sys
from benchlab.cli.main import main
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(" ".join(
    name for name in sys.modules if not name.startswith("__"))))
sys.argv = ["benchlab", *sys.argv[1:]]
main()
"""


def print_fixed_cost_parts(bl: str) -> None:
    """``--instructions``: where the fixed cost of ``run -q -N -r 1 /bin/true`` goes, in
    instructions: the interpreter, Click with the stdlib it imports, the other stdlib modules
    run imports, benchlab's own modules, and the command's work (the difference)."""
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        db, names = str(Path(tmp) / "p.db"), str(Path(tmp) / "modules")
        run = ["run", "-q", "-N", "-r", "1", "/bin/true", "--db", db]
        subprocess.run([bl, *run], check=True)
        subprocess.run([sys.executable, "-c", MODULES_OF_RUN, names, *run], check=True,
                       stdout=subprocess.DEVNULL)
        py = sys.executable
        counts = [instructions([py, "-c", "import os; os._exit(0)"], tmp),
                  instructions([py, "-c", "import gc, os; gc.disable(); import click; "
                                "os._exit(0)"], tmp),
                  instructions([py, "-c", IMPORT_ONLY, names, "std"], tmp),
                  instructions([py, "-c", IMPORT_ONLY, names, "all"], tmp),
                  instructions([py, bl, *run], tmp)]
        count_benchlab = len([n for n in Path(names).read_text().split()
                              if n.startswith("benchlab")])
    if None in counts:
        print("fixed cost parts: valgrind is not installed (or a run failed)")
        return
    labels = ["the interpreter's start-up (and a fast exit)",
              "Click, with the stdlib it imports",
              "the other stdlib modules run imports",
              f"benchlab's own {count_benchlab} modules",
              "the command: parse, probe, store, 1 run, exit"]
    print("where the instructions of `run -q -N -r 1 /bin/true` go (millions, cumulative "
          "differences):")
    previous = 0
    for label, count in zip(labels, counts):
        print(f"  {label:48} {(count - previous) / 1e6:7.1f} M")
        previous = count
    print(f"  {'all':48} {counts[-1] / 1e6:7.1f} M")


def compile_bytecode() -> None:
    """Write the missing or stale bytecode of benchlab and of the packages its commands import
    (Click, numpy): with PYTHONDONTWRITEBYTECODE set, a module edited since the setup compiled
    the tree is compiled from source by every process (4 stale modules cost ~21 M instructions
    of ``run -r 1``), and an environment synced without compiling (a new work tree) compiles
    all of Click in every process (~35 ms); pip's installed wheels never do either."""
    packages = subprocess.run(
        [sys.executable, "-c", "import os, benchlab, click, numpy; print('\\n'.join("
         "os.path.dirname(m.__file__) for m in (benchlab, click, numpy)))"],
        capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages],
                   stdout=subprocess.DEVNULL, check=True)


def print_full_output(medians: dict[str, float], cpu: dict[str, float]) -> None:
    """The everyday run's ratios to hyperfine (wall and CPU) beside the previous figures, and
    for two commands the floor's: Python, Click, SQLite, 200 runs and numpy for the verdict."""
    for ours, theirs in ((FULL1, HF1), (FULL2, HF2)):
        wall_ratio = medians[ours] / medians[theirs]
        before_cpu, before_wall = PREVIOUS[ours]
        print(f"ratio {ours} / hyperfine (full output, to a pipe): wall {wall_ratio:4.2f}x "
              f"(goal <= {FULL_GOAL:g}x{'' if wall_ratio <= FULL_GOAL else ': OVER'}), "
              f"CPU {cpu[ours] / cpu[theirs]:4.2f}x (before: wall {before_wall}x, "
              f"CPU {before_cpu}x)")
    print(f"ratio {FLOOR2} / hyperfine two commands: wall {medians[FLOOR2] / medians[HF2]:4.2f}x, "
          f"CPU {cpu[FLOOR2] / cpu[HF2]:4.2f}x")


def print_floor(medians: dict[str, float], cpu: dict[str, float]) -> None:
    """The floor's ratios to hyperfine, and what benchlab spends above the floor (wall and CPU)."""
    hf, bl = "hyperfine -N -r 100 /bin/true", "benchlab run -q -N -r 100 /bin/true"
    for name in (FLOOR, FLOOR_NO_CLICK):
        print(f"ratio {name.strip()} / hyperfine -N -r 100: wall "
              f"{medians[name] / medians[hf]:4.2f}x, CPU {cpu[name] / cpu[hf]:4.2f}x")
    print(f"benchlab -r 100 above the floor: wall {(medians[bl] - medians[FLOOR]) * 1e3:.0f} ms, "
          f"CPU {(cpu[bl] - cpu[FLOOR]) * 1e3:.0f} ms; the 2x goal leaves "
          f"{(RATIO_GOAL * medians[hf] - medians[FLOOR]) * 1e3:.0f} ms of wall for it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--benchlab", default=str(Path(sys.executable).parent / "benchlab"))
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions with valgrind (load-independent)")
    parser.add_argument("--demo-db", default=None, help="the demo's store (default: run "
                        "`benchlab demo` into a temporary one)")
    args = parser.parse_args()
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        sys.exit("startup: hyperfine is not installed; run scripts/setup.sh")
    bl = args.benchlab
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        db = str(Path(tmp) / "bench.db")
        demo_db, uid = demo_store(bl, tmp, args.demo_db)
        cases = {
            "benchlab --version": ([bl, "--version"], "--version"),
            "benchlab --help": ([bl, "--help"], "--help"),
            "benchlab run -r 3 /bin/true": ([bl, "run", "-q", "-r", "3", "/bin/true",
                                             "--db", db], "run"),
            "benchlab run -q -N -r 1 /bin/true": ([bl, "run", "-q", "-N", "-r", "1", "/bin/true",
                                                   "--db", db], "run1"),
            "benchlab run -q -N -r 100 /bin/true": ([bl, "run", "-q", "-N", "-r", "100",
                                                     "/bin/true", "--db", db], None),
            # what a hyperfine user types: no -q, the summary and the verdict printed (to a
            # pipe here, as hyperfine's lines below: plain text)
            FULL1: ([bl, "run", "-N", "-r", "100", "/bin/true", "--db", db], None),
            FULL2: ([bl, "run", "-N", "-r", "100", "/bin/true", "/bin/true", "--db", db], None),
            # the environment probe records the git commit and dirty state of the cwd: two
            # forks of git that the other lines (run in a temporary directory) do not pay
            "  the same -r 1 in a git work tree": ([bl, "run", "-q", "-N", "-r", "1", "/bin/true",
                                                    "--db", db], None),
            "benchlab show (demo)": ([bl, "show", uid, "--db", demo_db], "store"),
            "benchlab compare (demo)": ([bl, "compare", f"{uid}:qsort", f"{uid}:quicksort",
                                         "--db", demo_db], "store"),
            "benchlab list (demo)": ([bl, "list", "--db", demo_db], "store"),
            "hyperfine --version": ([hyperfine, "--version"], None),
            "hyperfine -N -r 3 /bin/true": ([hyperfine, "-N", "-r", "3", "/bin/true",
                                             "--style", "none"], None),
            "hyperfine -N -r 100 /bin/true": ([hyperfine, "-N", "-r", "100", "/bin/true",
                                               "--style", "none"], None),
            HF1: ([hyperfine, "-N", "-r", "100", "/bin/true"], None),
            HF2: ([hyperfine, "-N", "-r", "100", "/bin/true", "/bin/true"], None),
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            # the least a Python tool of benchlab's design can do (bench/floor_program.py)
            FLOOR: ([sys.executable, str(FLOOR_PROGRAM), "100", str(Path(tmp) / "floor.db")],
                    None),
            FLOOR_NO_CLICK: ([sys.executable, str(FLOOR_PROGRAM), "100",
                              str(Path(tmp) / "floor.db"), "--no-click"], None),
            FLOOR2: ([sys.executable, str(FLOOR_PROGRAM), "200", str(Path(tmp) / "floor.db"),
                      "--numpy"], None),
        }
        repo = str(Path(__file__).resolve().parents[1])

        def where(name: str) -> str:
            return repo if "git work tree" in name else tmp

        for name, (argv, _) in cases.items():  # one warm-up each: page cache, the store's schema
            wall_s(argv, where(name), name)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (argv, _) in cases.items():
                times[name].append(wall_s(argv, where(name), name))
        load = os.getloadavg()
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(f"start-up, median of {args.runs} interleaved runs "
              f"(PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}, "
              f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
        print(f"{'command':38} {'median':>9} {'min':>9} {'max':>9} {'target':>8}   CPU (median)")
        for name, (argv, key) in cases.items():
            target = f"{TARGETS_S[key]:.2f} s" if key else ""
            flag = "" if key is None or medians[name] <= TARGETS_S[key] else "  OVER"
            cpu = statistics.median(CPU_S[name][1:])  # the warm-up's left out
            print(f"{name:38} {medians[name]:8.3f}s {min(times[name]):8.3f}s "
                  f"{max(times[name]):8.3f}s {target:>8}{flag:6} {cpu:8.3f}s")
        print()
        ratio = (medians["benchlab run -q -N -r 100 /bin/true"]
                 / medians["hyperfine -N -r 100 /bin/true"])
        print("ratio benchlab --version / hyperfine --version:                 "
              f"{medians['benchlab --version'] / medians['hyperfine --version']:6.1f}x")
        print("ratio benchlab run -r 3 / hyperfine -N -r 3 (/bin/true):         "
              f"{medians['benchlab run -r 3 /bin/true'] / medians['hyperfine -N -r 3 /bin/true']:6.1f}x")
        print("ratio benchlab run -q -N -r 100 / hyperfine -N -r 100 (/bin/true): "
              f"{ratio:6.1f}x (goal <= {RATIO_GOAL:g}x{'' if ratio <= RATIO_GOAL else ': OVER'})")
        # On a loaded machine wall time is mostly waiting for a CPU: the same ratio in CPU time
        cpu = {name: statistics.median(CPU_S[name][1:]) for name in cases}
        cpu_ratio = cpu["benchlab run -q -N -r 100 /bin/true"] / cpu["hyperfine -N -r 100 /bin/true"]
        print("the same ratio in CPU time (user + system):                        "
              f"{cpu_ratio:6.1f}x")
        per_run = (medians["benchlab run -q -N -r 100 /bin/true"]
                   - medians["benchlab run -q -N -r 1 /bin/true"]) / 99
        hf_per_run = (medians["hyperfine -N -r 100 /bin/true"]
                      - medians["hyperfine -N -r 3 /bin/true"]) / 97
        print(f"per run of /bin/true: benchlab {per_run * 1e3:.2f} ms, hyperfine "
              f"{hf_per_run * 1e3:.2f} ms; fixed cost: benchlab "
              f"{(medians['benchlab run -q -N -r 1 /bin/true'] - per_run) * 1e3:.0f} ms, "
              f"bare interpreter {medians['python -c pass'] * 1e3:.0f} ms")
        print_full_output(medians, cpu)
        print_floor(medians, cpu)
        print()
        print("where `benchlab run -q -N -r 1 /bin/true` spends its CPU (one process, ms):")
        phases = subprocess.run([sys.executable, "-c", PHASES, "run", "-q", "-N", "-r", "1",
                                 "/bin/true", "--db", db], capture_output=True, text=True,
                                cwd=tmp)
        print(textwrap.indent(phases.stdout.rstrip() or phases.stderr[-800:], "  "))
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        pulled = heavy_importers(["run", "-q", "-r", "3", "/bin/true", "--db",
                                  str(Path(tmp) / "who.db")])
    print()
    print("heavy packages imported by `benchlab run -r 3 /bin/true` (first importer, s spent importing it):")
    for top, culprit, cost in pulled or [("none", "-", 0.0)]:
        print(f"  {top:12} via {culprit:45} {cost:6.3f} s")
    if args.instructions:
        print()
        print_instructions(bl)
        print()
        print_fixed_cost_parts(bl)


if __name__ == "__main__":
    main()
