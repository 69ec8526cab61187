"""Start-up of the ``benchlab`` command.

- ``--version`` imports neither Click nor numpy, scipy, rich or pandas; ``--help`` imports no
  command module: the command table in ``benchlab.cli.main`` is static, and a test keeps it equal
  to every command's real help.
- Ctrl-C while modules are still importing exits 130 with one line and no traceback.
- Timings are ratios against a bare interpreter, never absolute (other processes load the
  machine); the absolute figures are printed by ``bench/startup.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import BENCHLAB, sigint_as_in_a_terminal

PY = sys.executable
HEAVY = ("numpy", "scipy", "rich", "pandas", "matplotlib", "dask")
CLI_DIR = Path(__file__).resolve().parents[1] / "src" / "benchlab" / "cli"
#: A traceback frame of benchlab's ``main()``: Ctrl-C arrived while it was running.
IN_MAIN = re.compile(r'benchlab/cli/main\.py", line \d+, in main\b')


def _modules_after(args: list[str], tmp_path: Path,
                   cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run the console entry point in a fresh interpreter (-I: no user site, no PYTHON* env)
    in ``cwd``; return the process and the set of modules it had imported when it exited."""
    out = tmp_path / "modules.json"
    code = textwrap.dedent(f"""
        import atexit, json, sys
        atexit.register(lambda: open({str(out)!r}, "w").write(json.dumps(sorted(sys.modules))))
        from benchlab.cli.main import main
        main({args!r})
    """)
    proc = subprocess.run([PY, "-I", "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=cwd)
    return proc, set(json.loads(out.read_text()))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_version_imports_nothing_heavy(tmp_path):
    proc, modules = _modules_after(["--version"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "benchlab, version " + importlib.import_module("benchlab").__version__ + "\n"
    assert _heavy(modules) == []
    assert "click" not in modules, "--version is answered before Click is imported"


def test_version_text_matches_clicks_version_option():
    """The fast path prints what click.version_option would (``benchlab --version -h`` is Click's)."""
    from click.testing import CliRunner

    from benchlab.cli.main import cli
    fast = subprocess.run([BENCHLAB, "--version"], capture_output=True, text=True, timeout=30)
    slow = CliRunner().invoke(cli, ["--version"])
    assert fast.returncode == 0 and slow.exit_code == 0
    assert fast.stdout == slow.output


def test_help_lists_every_command_without_importing_one(tmp_path):
    from benchlab.cli.main import COMMANDS
    proc, modules = _modules_after(["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in COMMANDS:
        assert f"\n  {name} " in proc.stdout, name
    loaded = sorted(m for m in modules if m.startswith("benchlab.cli.")
                    and m not in {"benchlab.cli.main"})
    assert loaded == [], f"--help imported command modules: {loaded}"
    assert _heavy(modules) == []


def test_a_command_imports_only_its_own_module(tmp_path):
    proc, modules = _modules_after(["predict", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "benchlab.cli.predict" in modules
    others = {f"benchlab.cli.{m}" for m in ("run", "data", "study", "compare", "demo")}
    assert not (others & modules), sorted(others & modules)


def _command_modules() -> list[str]:
    return sorted(p.stem for p in CLI_DIR.glob("*.py")
                  if p.stem not in {"__init__", "main", "common", "params"}
                  and "\ncommands = " in p.read_text())


@pytest.mark.parametrize("module_name", _command_modules())
def test_static_table_matches_each_commands_real_help(module_name):
    """Every command a cli module exposes is in COMMANDS under that module, with its real help."""
    from benchlab.cli.main import COMMANDS
    module = importlib.import_module(f"benchlab.cli.{module_name}")
    assert module.commands, module_name
    for command in module.commands:
        assert command.name in COMMANDS, f"add {command.name!r} to COMMANDS in cli/main.py"
        table_module, table_help = COMMANDS[command.name]
        assert table_module == module_name, command.name
        assert table_help == command.get_short_help_str(1000), command.name


def test_every_table_entry_names_an_existing_module():
    from benchlab.cli.main import COMMANDS
    existing = set(_command_modules())
    assert {module for module, _ in COMMANDS.values()} <= existing


def test_unknown_command_is_one_line_listing_the_commands():
    proc = subprocess.run([BENCHLAB, "frobnicate"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("benchlab: error: no command 'frobnicate'")
    assert "run" in line and "compare" in line


def test_run_parses_short_options_without_clicks_suggestions_and_keeps_them_for_typos(tmp_path):
    """run's parser skips difflib's suggestions for ``-q`` (a failed long match Click throws
    away); a mistyped ``--option`` still gets them, an unknown ``-x`` the same one line."""
    db = str(tmp_path / "t.db")
    typo = subprocess.run([BENCHLAB, "run", "--quiett", "-r", "1", "/bin/true", "--db", db],
                          capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2 and "Did you mean" in typo.stderr and "'--quiet'" in typo.stderr
    unknown = subprocess.run([BENCHLAB, "run", "-qx", "-r", "1", "/bin/true", "--db", db],
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2, unknown.stderr
    assert unknown.stderr.startswith("benchlab: error: No such option '-x'."), unknown.stderr
    ok = subprocess.run([BENCHLAB, "run", "-q", "-N", "-r1", "-w", "0", "/bin/true", "--db", db],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout == "", ok.stderr


_INTERRUPT_DURING_IMPORT = """
import signal
from benchlab.cli.main import main
# SIGALRM raising KeyboardInterrupt: exactly what Ctrl-C does, at a chosen moment, no thread.
signal.signal(signal.SIGALRM, signal.default_int_handler)
signal.setitimer(signal.ITIMER_REAL, {delay})
main({args!r})
"""


@pytest.mark.parametrize("delay", [0.001, 0.01, 0.03, 0.08])
def test_ctrl_c_while_importing_exits_130_without_traceback(delay):
    """SIGINT lands while Click or the command's module (numpy, scipy...) is still importing."""
    code = _INTERRUPT_DURING_IMPORT.format(delay=delay, args=["compare", "--help"])
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    if proc.returncode == 0:
        pytest.skip(f"start-up finished before the SIGINT at {delay} s")
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "benchlab: interrupted"


_INTERRUPT_IN_SET_NAME = """
from benchlab.cli import main as entry

class Descriptor:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt  # what Ctrl-C does when it lands there

def command(**kwargs):
    class Imported:  # a class body run by an import (platform's uname_result)
        field = Descriptor()

entry.__getattr__ = lambda name: command
entry.main(["run"])
"""


def test_ctrl_c_inside_an_imported_class_body_exits_130_without_traceback():
    """Python 3.11 wraps an exception raised in ``__set_name__`` in a RuntimeError; a Ctrl-C
    landing there (seen once in 40 signals at start-up, in ``platform``) is still Ctrl-C."""
    proc = subprocess.run([PY, "-c", _INTERRUPT_IN_SET_NAME], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "benchlab: interrupted"


def test_ctrl_c_to_the_console_script_never_shows_a_traceback():
    """The real entry point signalled from outside at a few moments of its start-up."""
    seen = []
    for delay in (0.02, 0.05, 0.1, 0.2, 0.5):
        proc = subprocess.Popen([BENCHLAB, "compare", "--help"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=sigint_as_in_a_terminal)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if "init_import_site" in err:
            continue  # the interpreter itself was still starting: no benchlab code had run yet
        if "Traceback" in err and not IN_MAIN.search(err):
            # before benchlab's main() was running: in pip's console-script wrapper or while it
            # imported benchlab.cli.main, where nothing of benchlab can catch it (a loaded
            # machine stretches that window: 'File ".../bin/benchlab", line 0, in <module>')
            continue
        # -SIGINT: the signal arrived before Python installed its handler (default action).
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err)
        assert "Traceback" not in err, err
        seen.append(proc.returncode)
    assert seen, "every SIGINT landed before the interpreter had started"


def _median_cpu_s(commands: list[list[str]], repeats: int = 7) -> list[float]:
    """Median CPU seconds (user + system) of each command, the commands interleaved: measured
    one after the other in blocks of wall time, a load that moved between the blocks failed the
    ratio (--help 134 ms against import click's 44 ms beside stress-ng --cpu 2, 1 serial phase
    in 5); interleaved CPU time at load 10-11 gave 0.41-0.44 of the --help bound, 0.23-0.26 of
    the --version one."""
    import resource

    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeats):
        for argv, spent in zip(commands, times):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(argv, capture_output=True, timeout=60,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return [statistics.median(spent) for spent in times]


@pytest.mark.serial
def test_version_and_help_cost_little_more_than_the_interpreter():
    """Ratios to a bare ``python -c pass`` / ``import click`` (absolute targets: bench/startup.py)."""
    bare, version, with_click, help_ = _median_cpu_s([
        [PY, "-c", "pass"], [BENCHLAB, "--version"], [PY, "-c", "import click"],
        [BENCHLAB, "--help"]])
    assert version < 3 * bare + 0.02, (version, bare)
    assert help_ < 2 * with_click + 0.03, (help_, with_click)


def _cpu_s(argv: list[str], cwd: Path) -> float:
    """CPU seconds (user + system, its children included) of one run of ``argv``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, capture_output=True, timeout=60, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.serial
def test_a_one_run_session_costs_at_most_three_click_imports(tmp_path):
    """``run -q -N -r 1 /bin/true`` as a whole process (interpreter, Click, benchlab's modules,
    the session, the store, the exit) against ``python -c 'import click'``, both in CPU time,
    interleaved (a load slows both alike). Measured 2.4-2.5x after the fast exit
    (bench/startup.py has the figures); numpy on run's path alone would add ~2x."""
    db = str(tmp_path / "s.db")
    run = [BENCHLAB, "run", "-q", "-N", "-r", "1", "/bin/true", "--db", db]
    click_only = [PY, "-c", "import click"]
    _cpu_s(run, tmp_path)  # the store's schema, the helper's binary, the page cache
    runs, clicks = [], []
    for _ in range(7):
        runs.append(_cpu_s(run, tmp_path))
        clicks.append(_cpu_s(click_only, tmp_path))
    assert statistics.median(runs) < 3 * statistics.median(clicks), (runs, clicks)


_SCRIPT = """import os, signal, sys, time
import benchlab  # what the console script's first import runs first
os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the script is still importing
time.sleep(5)
print("not interrupted")
"""


@pytest.mark.parametrize("name,quiet", [("benchlab", True), ("notebook-script", False)])
def test_ctrl_c_while_the_console_script_imports_is_one_line(tmp_path, name, quiet):
    """A file named ``benchlab`` stands in for the console script: until ``main`` runs, a
    Ctrl-C ends it with one line and exit 130. Any other program importing benchlab keeps
    Python's KeyboardInterrupt (a library does not take over Ctrl-C)."""
    script = tmp_path / name
    script.write_text(_SCRIPT)
    proc = subprocess.run([PY, str(script)], capture_output=True, text=True, timeout=60,
                          preexec_fn=sigint_as_in_a_terminal)
    if quiet:
        assert proc.returncode == 130 and proc.stderr == "benchlab: interrupted\n", proc
    else:
        assert "KeyboardInterrupt" in proc.stderr and proc.returncode != 130, proc


# --- per-session costs: forks of the environment probe ---------------------------------------


def test_a_per_boot_probe_forks_once_per_boot(tmp_path):
    """systemd-detect-virt's answer is remembered per boot and namespaces: a second process (a
    second session) reads it from the cache instead of forking again."""
    log = tmp_path / "ran.log"
    code = textwrap.dedent(f"""
        from benchlab.environment._read import Probe
        argv = ["sh", "-c", "echo ran >> {log}; echo kvm"]
        import time; end = time.monotonic() + 30
        print(Probe(argv, per_boot=True).result(end), Probe(argv, per_boot=True).result(end))
    """)
    env = dict(os.environ, BENCHLAB_CACHE=str(tmp_path / "cache"))
    outs = [subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env,
                           timeout=60) for _ in range(2)]
    assert all(p.returncode == 0 for p in outs), outs
    assert {p.stdout for p in outs} == {"(0, 'kvm\\n', '') (0, 'kvm\\n', '')\n"}
    assert log.read_text() == "ran\n"


def test_outside_a_git_work_tree_git_is_not_run_and_says_the_same(tmp_path):
    import shutil

    from benchlab.environment import collect_environment
    from benchlab.environment._read import outside_git_work_tree

    if shutil.which("git") is None:
        pytest.skip("git is not installed (a fresh Debian has none; benchlab does not need it)")
    plain = tmp_path / "plain"
    plain.mkdir()
    if not outside_git_work_tree(str(plain)):
        pytest.skip("the temporary directory is inside a git work tree")
    skipped = collect_environment(cwd=str(plain))["git"]["commit"]
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert not outside_git_work_tree(str(repo / ".")) and not outside_git_work_tree(str(repo))
    (repo / ".git").rename(repo / "not-git")  # git really runs now (GIT_DIR unset) and fails
    (repo / ".git").write_text("gitdir: /nonexistent\n")  # ... a .git file: git is run
    ran = collect_environment(cwd=str(repo))["git"]["commit"]
    assert "not a git repository" in skipped["unknown"]
    assert "usable git work tree" in skipped["unknown"] and "usable git work tree" in ran["unknown"]


# --- per-command costs: what compare and a quiet run import or compute -----------------------


def test_compare_and_quiet_run_import_only_what_they_use(tmp_path):
    """compare needs scipy.special, not scipy.stats (~0.5 s) or scipy.optimize (~0.2 s); a
    quiet run of one command prints nothing and has no verdict, so it computes no statistics
    and imports neither numpy nor rich (its random order is pure Python:
    tests/core/test_planner_rng.py). A quiet run of two stores their verdict, as without -q."""
    db = str(tmp_path / "b.db")
    two, two_modules = _modules_after(
        ["run", "-q", "-N", "-r", "5", "/bin/true", "/bin/echo", "--db", db],
        tmp_path, cwd=tmp_path)  # the session compare and show read
    assert two.returncode == 0, two.stderr
    # the verdict of two: rank tests, not the bootstrap with numpy.random (~10 ms), nor the
    # export formats' readers (~7 ms)
    assert not {"numpy.random", "benchlab.stats.bootstrap", "benchlab.store.formats.gather",
                "benchlab.store.formats.common"} & two_modules
    run_proc, run_modules = _modules_after(
        ["run", "-q", "-N", "-r", "5", "/bin/true", "--db", str(tmp_path / "one.db")], tmp_path,
        cwd=tmp_path)  # outside a git work tree, where the probe runs no git
    assert run_proc.returncode == 0, run_proc.stderr
    assert "numpy" not in run_modules  # the planner's order, the store: no numpy (~80 ms)
    assert "difflib" not in run_modules  # Click's suggestions, for -q, -N and -r (~3 ms)
    assert "logging" not in run_modules  # two debug lines of the cgroup sweep (~3 ms)
    assert not [m for m in run_modules if m.split(".")[0] == "rich"]  # nothing is printed
    # the helper is found and started with os.posix_spawn; subprocess only to compile it,
    # probe a shell (-S) or ask git (~1.5 ms); uids from os.urandom, not secrets/random (~1.5 ms)
    assert not {"subprocess", "secrets"} & run_modules
    # the session's cheap checks, not the contention probe, tune or restore (~1.5 ms)
    assert not {"benchlab.control.system.contention", "benchlab.control.system.tuning",
                "benchlab.control.system.restore"} & run_modules
    # without limits: the sweep and the helper's tracking leaf, not run cgroups (~3 ms)
    assert not {"benchlab.control.cgroups.limits", "benchlab.control.cgroups.accounting",
                "benchlab.control.cgroups.lifecycle"} & run_modules
    # MetricSpec alone from store.formats: not its importers' helpers (~10 ms)
    assert not {"benchlab.store.formats.gather", "benchlab.store.formats.common",
                "benchlab.store.formats.readers"} & run_modules
    # digests by CPython's own SHA-256 (benchlab.digests): OpenSSL is not loaded (~3 %)
    assert not {"hashlib", "hmac", "_hashlib"} & run_modules
    proc, modules = _modules_after(["compare", "/bin/true", "/bin/echo", "--db", db], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "scipy.stats" not in modules and "scipy.optimize" not in modules
    shown, show_modules = _modules_after(["show", "--db", db], tmp_path)
    assert shown.returncode == 0, shown.stderr
    # reading stored environments runs no probe: no subprocess, no CPU or topology reader
    for modules_of_command in (modules, show_modules):
        assert "subprocess" not in modules_of_command
        assert "benchlab.environment.collect" not in modules_of_command
    assert "scipy.special" not in show_modules  # ~0.15 s: show's verdict needs none of it
    assert "numpy.ma" not in show_modules  # ~10 ms: np.median/np.percentile/np.unique import it


def test_digests_without_openssl_equal_hashlibs_and_hmacs():
    """benchlab.digests (CPython's own SHA-256, so run loads no OpenSSL) gives hashlib's SHA-256
    and hmac's HMAC-SHA256 bit for bit: keys shorter than, as long as and longer than a block,
    empty and long messages, and one keyed object reused for many messages."""
    import hashlib
    import hmac

    from benchlab.digests import HmacSha256, sha256, sha256_hex

    messages = [b"", b"a", b"benchlab env-key id\0" + bytes(range(32)), bytes(range(256)) * 40,
                "PATH=/usr/bin:/bin é".encode("utf-8", "surrogateescape")]
    for message in messages:
        assert sha256_hex(message) == hashlib.sha256(message).hexdigest()
        incremental = sha256()
        incremental.update(message)
        incremental.update(b"\0tail")
        assert incremental.hexdigest() == hashlib.sha256(message + b"\0tail").hexdigest()
    for key in (bytes(16), os.urandom(32), os.urandom(64), os.urandom(65), os.urandom(200)):
        keyed = HmacSha256(key)
        for message in messages:
            assert keyed.hexdigest(message) == hmac.new(key, message, hashlib.sha256).hexdigest()


def test_the_power_plans_root_search_is_scipys_brentq():
    import math
    import random

    from scipy import optimize

    from benchlab.stats.power import _brentq

    rng = random.Random(19)
    for _ in range(300):
        c, s, k = rng.uniform(-5, 5), rng.uniform(0.1, 10), rng.choice([1, 3])

        def f(x, c=c, s=s, k=k):
            return math.tanh(s * (x - c)) ** k + 1e-3 * (x - c)

        assert _brentq(f, -20.0, 20.0, 1e-10, 1e-15, 500) == optimize.brentq(
            f, -20.0, 20.0, xtol=1e-10, rtol=1e-15, maxiter=500)


def test_the_digests_fast_exclusion_is_excluded():
    """environment_digest's set lookups decide exactly what ``excluded`` decides."""
    from benchlab.environment import collect_environment
    from benchlab.environment.fingerprint import (
        DIGEST_EXCLUDED,
        _excluded_from_digest,
        excluded,
        flatten,
    )

    paths = [path for path, _ in flatten(collect_environment())]
    paths += ["load", "loadx", "load.1m", "gitx", "cpu.affinity", "cpu.affinityx", "x.load",
              "cpu.frequency", "cpu.frequency.cpuinfo_mhz", "cpu.frequency.cpuinfo_mhz.x"]
    assert any(_excluded_from_digest(p) for p in paths)
    assert any(not _excluded_from_digest(p) for p in paths)
    assert [p for p in paths if _excluded_from_digest(p) != excluded(p, DIGEST_EXCLUDED)] == []


def test_a_store_checked_whole_and_unchanged_is_not_checked_again(tmp_path, monkeypatch):
    """Store.open's quick_check reads every page (200-300 ms for 50 MB); it is remembered for
    a store unchanged since, and a store changed after it (a damaged page) is checked again."""
    import sqlite3

    from benchlab.errors import UserError
    from benchlab.store import verified
    from benchlab.store.db import Store

    monkeypatch.setenv("BENCHLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(verified, "SETTLED_S", 0.05)
    db = str(tmp_path / "s.db")
    with Store.open(db) as store:  # a new store: created, nothing to check
        store.sessions()
    conn = sqlite3.connect(db)  # grow it past a few pages, then one self-contained file
    conn.execute("CREATE TABLE filler (b BLOB)")
    conn.executemany("INSERT INTO filler VALUES (?)", [(b"x" * 3000,) for _ in range(20)])
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert not verified.unchanged_since_check(db)
    time.sleep(0.1)  # settled: a later change has later file times
    with Store.open(db, readonly=True) as store:
        store.sessions()
    assert verified.unchanged_since_check(db)
    with Store.open(db, readonly=True):  # unchanged: no check, nothing re-noted
        pass
    assert verified.unchanged_since_check(db)
    with open(db, "r+b") as fh:  # wreck a page after the header page
        fh.seek(2 * 4096)
        fh.write(b"\xff" * 4096)
    assert not verified.unchanged_since_check(db)
    with pytest.raises(UserError, match="corrupt"):
        Store.open(db, readonly=True)


def test_a_check_right_after_a_change_is_not_remembered(tmp_path, monkeypatch):
    """A change in the same coarse clock tick as the check could keep the file's times, so a
    check is remembered only when the file clock, read before the identity it notes, had passed
    the file's times (a writer's close waits for that: tests/store/test_checked_at_close.py)."""
    import sqlite3

    from benchlab.store import verified
    from benchlab.store.db import Store

    monkeypatch.setenv("BENCHLAB_CACHE", str(tmp_path / "cache"))
    db = str(tmp_path / "s.db")
    with Store.open(db):
        pass
    conn = sqlite3.connect(db)  # another program's change: the note no longer holds
    conn.execute("INSERT INTO store_meta (key, value) VALUES ('k', 'v')")
    conn.commit()
    conn.close()
    before = verified.identity(db)
    newest = max(max(f[3], f[4]) for f in before if f is not None)
    verified.remember_check(db, before, clock_ns=newest)  # the clock still in the change's tick
    assert not verified.unchanged_since_check(db)
    verified.remember_check(db, before, clock_ns=newest + verified.unsettled_ns(before, newest))
    assert verified.unchanged_since_check(db)


def test_a_session_reads_the_topology_once_and_prepares_its_placement_once(tmp_path):
    """The placement was prepared at the session's start and again by run_session, and the
    topology read by each and twice by the environment probe (4 reads, 2 placements)."""
    code = textwrap.dedent(f"""
        import benchlab.core.executor as executor, benchlab.core.session as session
        import benchlab.environment.topology as topology
        calls = {{"read": 0, "prepare": 0}}
        read, prepare = topology._read_topology, session.prepare_execution
        def counted_read(*a, **k):
            calls["read"] += 1
            return read(*a, **k)
        def counted_prepare(*a, **k):
            calls["prepare"] += 1
            return prepare(*a, **k)
        topology._read_topology = counted_read
        session.prepare_execution = executor.prepare_execution = counted_prepare
        from benchlab.cli.main import main
        try:
            main(["run", "-q", "-N", "-r", "2", "/bin/true", "--db", {str(tmp_path / "t.db")!r}])
        except SystemExit as exc:
            assert not exc.code, exc.code
        print(calls["read"], calls["prepare"])
    """)
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1"]


def test_the_quantiles_without_numpy_ma_equal_numpys_bit_for_bit():
    """descriptive.percentile (method linear) and descriptive.median compute what np.percentile
    and np.median do, by the same float operations, without numpy.ma (show's ~10 ms): equal
    bytes on samples of every size and shape of values, signed zeros and huge ones included."""
    import warnings

    import numpy as np

    from benchlab.stats.descriptive import median, percentile

    rng = np.random.default_rng(19)
    percents = [50.0, 0.0, 100.0, [25.0, 75.0], [25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9],
                rng.uniform(0, 100, 13), [100 / 3, 200 / 3, 12.5, 87.5, 1e-9, 100 - 1e-12]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1e308 - -1e308 overflows in both
        for trial in range(600):
            n = int(rng.integers(1, 40)) if trial % 4 else int(rng.integers(1, 1500))
            x = [rng.normal(size=n), rng.integers(-3, 3, n).astype(float),
                 np.exp(rng.normal(0, 20, n)), np.full(n, -0.0),
                 rng.choice([-0.0, 0.0, 1e308, -1e308, 5e-324, 1.0], n)][trial % 5]
            assert np.float64(median(x)).tobytes() == np.median(x).tobytes(), x
            for q in percents:
                want, got = np.percentile(x, q), percentile(x, q)
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (x, q)
                assert np.shape(got) == np.shape(want)
    assert np.isnan(median([])) and np.isnan(median([1.0, np.nan]))
    assert median(np.array([3, 1, 2, 8])) == np.median([3, 1, 2, 8]) == 2.5


def test_each_run_is_stored_in_three_statements(tmp_path):
    """A run's row is one transaction of BEGIN, INSERT, COMMIT (its savepoint inside an outer
    transaction was two more statements a run); counted by SQLite's trace callback."""
    code = textwrap.dedent(f"""
        import sqlite3
        count = [0]
        connect = sqlite3.connect
        def counting(*a, **k):
            conn = connect(*a, **k)
            conn.set_trace_callback(lambda sql: count.__setitem__(0, count[0] + 1))
            return conn
        sqlite3.connect = counting
        from benchlab.cli.main import main
        for runs in ("1", "21"):
            count[0] = 0
            try:
                main(["run", "-q", "-N", "-r", runs, "/bin/true", "--db", {str(tmp_path / "s.db")!r}])
            except SystemExit as exc:
                assert not exc.code, exc.code
            print(count[0])
    """)
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    one, twenty_one = map(int, proc.stdout.split())
    assert (twenty_one - one) / 20 <= 3.0, (one, twenty_one)


def _record_and_dataclass_twins():
    """The same classes twice: once @dataclass, once benchlab.records.record."""
    import dataclasses

    from benchlab.records import record

    def define(decorate, frozen):
        @decorate
        class Point:
            """A record with every kind of field the run path uses."""

            x: int
            y: int = 0
            tags: list = dataclasses.field(default_factory=list)
            note: str = dataclasses.field(default="", repr=False, compare=False)
            made: dict = dataclasses.field(default_factory=dict, init=False)

            def __post_init__(self):
                if self.x < 0:
                    raise ValueError("x must be >= 0")

            @property
            def norm(self):
                return abs(self.x) + abs(self.y)

        return Point

    return [(define(dataclasses.dataclass(frozen=frozen), frozen),
             define(record(frozen=frozen), frozen)) for frozen in (False, True)]


def test_a_record_behaves_as_the_same_dataclass():
    """benchlab.records.record (no source compiled at import) against @dataclass, frozen and
    not: construction (positional, keyword, defaults, factories, init=False fields,
    __post_init__), the errors of a bad call, repr, equality, hashing, immutability, and the
    dataclasses functions."""
    import dataclasses

    for (dc, rec), frozen in zip(_record_and_dataclass_twins(), (False, True)):
        for cls in (dc, rec):
            assert dataclasses.is_dataclass(cls)
            assert [f.name for f in dataclasses.fields(cls)] == ["x", "y", "tags", "note", "made"]
            assert cls.__match_args__ == ("x", "y", "tags", "note")
        for args, kwargs in [((1,), {}), ((1, 2), {"tags": [3]}), ((), {"x": 4, "note": "n"})]:
            a, b = dc(*args, **kwargs), rec(*args, **kwargs)
            assert repr(a).replace(dc.__qualname__, "C") == repr(b).replace(rec.__qualname__, "C")
            assert dataclasses.asdict(a) == dataclasses.asdict(b)
            assert dataclasses.astuple(a) == dataclasses.astuple(b)
            assert b == rec(*args, **kwargs) and b != dc(*args, **kwargs)
            assert (b == rec(*args, **{**kwargs, "note": "other"})) is True  # compare=False
            assert dataclasses.replace(b, y=9).y == 9 and dataclasses.replace(b, y=9).x == b.x
            assert b.made == {} and b.made is not rec(*args, **kwargs).made
            assert b.norm == a.norm
            if frozen:
                b.tags.append(1)  # a field's own value stays mutable, as in a frozen dataclass
                for obj in (a, b):
                    with pytest.raises(TypeError):  # a list among the hashed fields
                        hash(obj)
                for act in (lambda o: setattr(o, "x", 1), lambda o: delattr(o, "y"),
                            lambda o: setattr(o, "new", 1)):
                    for obj in (a, b):
                        with pytest.raises(dataclasses.FrozenInstanceError):
                            act(obj)
            else:
                b.x = 7
                assert b.x == 7
                assert dc.__hash__ is None and rec.__hash__ is None
        for cls in (dc, rec):
            for bad_args, bad_kwargs in [((), {}), ((1, 2, [], "", 5), {}), ((1,), {"z": 1}),
                                         ((1,), {"x": 2}), ((1,), {"made": {}})]:
                with pytest.raises(TypeError):
                    cls(*bad_args, **bad_kwargs)
            with pytest.raises(ValueError, match="x must be >= 0"):
                cls(-1)
    from benchlab.records import record

    for decorate in (dataclasses.dataclass(frozen=True), record(frozen=True)):
        @decorate
        class Hashed:
            """Hashable fields."""

            x: int
            y: str = ""
            note: str = dataclasses.field(default="", compare=False)

        assert hash(Hashed(1, "a")) == hash(Hashed(1, "a", "n")) == hash((1, "a"))

    @record(frozen=True)
    class Own:
        """Its own __init__ stays (as @dataclass(init=False)'s); the rest is made."""

        x: int

        def __init__(self, text: str) -> None:
            object.__setattr__(self, "x", int(text))

    assert Own("3") == Own("3") and repr(Own("3")) == f"{Own.__qualname__}(x=3)"
    assert dataclasses.asdict(Own("4")) == {"x": 4}


def test_run_path_records_compile_no_dataclass_methods(tmp_path):
    """The classes `run -q -N` builds at import are records, NamedTuples or plain classes:
    @dataclass's compiled methods (exec of source text) are left to the listed few."""
    code = textwrap.dedent(f"""
        import dataclasses, sys
        made = []
        create = dataclasses._create_fn
        def counted(name, *args, **kwargs):
            made.append(sys._getframe(2).f_locals.get("cls", None))
            return create(name, *args, **kwargs)
        dataclasses._create_fn = counted
        sys.argv = ["benchlab", "run", "-q", "-N", "-r", "1", "/bin/true", "--db",
                    {str(tmp_path / "r.db")!r}]
        import atexit
        atexit.register(lambda: print(sorted({{c.__module__ + "." + c.__qualname__
                                             for c in made if c is not None}})))
        from benchlab.cli.main import main
        main()
    """)
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    compiled = set(eval(proc.stdout.strip().splitlines()[-1]))
    assert compiled <= RUN_PATH_DATACLASSES, compiled - RUN_PATH_DATACLASSES


#: The dataclasses left on run's path, with why (none: every class it makes is a record).
RUN_PATH_DATACLASSES: set[str] = set()


def test_run_streams_keeps_the_dataclass_it_was():
    """RunStreams (made once a run) writes its own __init__ as a record: the same fields,
    order, defaults, a fresh list per instance, repr and equality as the @dataclass it was."""
    import dataclasses

    from benchlab.core.streams import RunStreams

    @dataclasses.dataclass
    class RunStreamsTwin:
        stdout_path: str | None
        stderr_path: str
        _drain: object | None = None
        _copy: list = dataclasses.field(default_factory=list)

    for args, kwargs in [(("o", "e"), {}), ((None, "e"), {"_drain": None}),
                         (("o", "e", None, [("p", 1)]), {}), ((), {"stdout_path": "o",
                                                                  "stderr_path": "e"})]:
        ours, twin = RunStreams(*args, **kwargs), RunStreamsTwin(*args, **kwargs)
        assert list(vars(ours).items()) == list(vars(twin).items())
        assert repr(ours).split("(", 1)[1] == repr(twin).split("(", 1)[1]
        assert ours == RunStreams(*args, **kwargs)
    assert RunStreams("o", "e")._copy is not RunStreams("o", "e")._copy
    assert [f.name for f in dataclasses.fields(RunStreams)] == ["stdout_path", "stderr_path",
                                                                 "_drain", "_copy"]
    with pytest.raises(TypeError):
        RunStreams("o")
