"""What ``benchlab run -q -N -r 1 /bin/true``, ``show``, ``compare`` and ``list`` import
(the fixed cost of a command is mostly its imports).

Each command runs in a fresh interpreter (the console script's ``main``, its fast exit
included) with a temporary store and temporary ``XDG_*`` directories, warmed by one run first
(the exec helper compiled, the per-boot probes remembered), as a user's second command is. At
exit it writes every imported module with the chain of modules and functions that imported it
(a meta-path hook reads the stack), so a failure names the importer to change. Counts of
modules and compiled patterns, never times: the machine may be loaded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PY = sys.executable

#: Imported by the child before anything else: records, for each module, who imported it
#: (module-level code as ``module``, a function as ``module.function``, innermost first), and
#: the patterns compiled by benchlab's module-level code; both written as JSON at exit.
_TRACKER = """
import atexit, json, re, sys
_chains, _compiled = {}, []
class _Tracker:
    def find_spec(self, name, path=None, target=None):
        if name not in _chains and name not in sys.modules:
            chain, frame = [], sys._getframe(1)
            while frame is not None and len(chain) < 8:
                owner = frame.f_globals.get("__name__", "?")
                if not owner.startswith(("importlib", "_frozen")) and owner != __name__:
                    code = frame.f_code.co_name
                    chain.append(owner if code == "<module>" else f"{owner}.{code}")
                frame = frame.f_back
            _chains[name] = " <- ".join(chain)
        return None
sys.meta_path.insert(0, _Tracker())
_compile = re.compile
def _counted(pattern, flags=0):
    frame = sys._getframe(1)
    owner = frame.f_globals.get("__name__", "")
    if owner.startswith("benchlab") and frame.f_code.co_name == "<module>":
        _compiled.append(f"{owner}:{pattern}")
    return _compile(pattern, flags)
re.compile = _counted
def _dump(out=sys.argv.pop(1)):
    with open(out, "w") as fh:
        json.dump({"modules": {n: _chains.get(n, "(at start-up)") for n in sys.modules},
                   "compiled": _compiled}, fh)
atexit.register(_dump)
sys.argv = ["benchlab", *sys.argv[1:]]
from benchlab.cli.main import main
main()
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A directory with XDG dirs of its own and two stores warm-up runs wrote (the exec helper
    built, the per-boot probes remembered): ``s.db`` for the reading commands, ``r.db`` for
    the runs. Returns (directory, environment)."""
    root = tmp_path_factory.mktemp("run-imports")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHLAB_", "XDG_"))}
    for name in ("CACHE", "DATA", "CONFIG", "STATE"):
        (root / name.lower()).mkdir()
        env[f"XDG_{name}_HOME"] = str(root / name.lower())
    _run(root, env, ["run", "-q", "-N", "-r", "5", "/bin/true", "/bin/echo", "--db",
                     str(root / "s.db")])  # read by show, compare and list
    _run(root, env, ["run", "-q", "-N", "-r", "1", "/bin/true", "--db", str(root / "r.db")])
    return root, env


def _run(root: Path, env: dict[str, str], args: list[str]) -> dict:
    """Run ``benchlab ARGS`` in ``root`` through :data:`_TRACKER`; its report."""
    out = root / "imports.json"
    proc = subprocess.run([PY, "-c", _TRACKER, str(out), *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _imported(report: dict, names: tuple[str, ...]) -> list[str]:
    """Each imported module that is one of ``names`` or inside one of them (a package), with
    its importers: what to change when a guard fails."""
    return [f"{name} <- {chain}" for name, chain in sorted(report["modules"].items())
            if any(name == n or name.startswith(n + ".") for n in names)]


def _benchlab_modules(report: dict) -> list[str]:
    return [name for name in report["modules"] if name.split(".")[0] == "benchlab"]


def test_lazy_pattern_is_the_compiled_pattern():
    """A lazy pattern answers as ``re.compile``'s, compiling on first use."""
    from benchlab.lazy import lazy_pattern

    text = r"^(?P<name>[a-z]+)-(?P<n>\d+)$"
    lazy, real = lazy_pattern(text), re.compile(text)
    assert "match" not in vars(lazy)  # nothing compiled or looked up yet
    assert lazy.match("ab-12").group("n") == real.match("ab-12").group("n") == "12"
    assert lazy.fullmatch("ab-") is None and lazy.search("x ab-3") is None
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (real.pattern, real.flags,
                                                           real.groupindex)
    assert lazy_pattern("a.b", re.DOTALL).match("a\nb") and not lazy_pattern("a.b").match("a\nb")
    with pytest.raises(AttributeError):
        lazy.no_such_method  # noqa: B018 - the attribute error of re.Pattern, not a fallback


#: The patterns benchlab compiles at import that ``run -q -N`` uses (CPU lists, parameters,
#: ``VAR=`` words of a command, its scratch directories); any other is compiled on first use.
RUN_PATTERNS = {"benchlab.units", "benchlab.core.parameters", "benchlab.measure.shell_syntax",
                "benchlab.core.scratch"}


def test_run_compiles_only_the_patterns_it_uses(home):
    """Compiling a pattern at import costs ~0.6 M instructions; ``run -q -N`` never parses a
    duration, size, age, metric or cgroup name (they were 7 of its 11)."""
    root, env = home
    report = _run(root, env, ["run", "-q", "-N", "-r", "1", "/bin/true", "--db",
                              str(root / "r.db")])
    owners = [entry.split(":")[0] for entry in report["compiled"]]
    assert set(owners) <= RUN_PATTERNS, report["compiled"]
    assert len(owners) == len(RUN_PATTERNS), report["compiled"]  # one pattern each


#: Never imported by ``run -q -N -r 1 /bin/true``: each serves an option it was not given, or
#: a command it is not (package names stand for everything inside).
NOT_ON_RUN_PATH = (
    # the stdlib: --rlimit, building the helper or asking git, OpenSSL, debug logging,
    # Click's suggestions, secrets' random, compressed formats, statistics' decimal, signal's
    # enums (benchlab uses the C module _signal: the same numbers and handlers)
    "resource", "subprocess", "hashlib", "logging", "difflib", "secrets", "gzip", "decimal",
    "statistics", "signal",
    # heavy libraries: a quiet run computes and prints nothing
    "numpy", "scipy", "rich", "pandas", "matplotlib", "dask",
    # output a quiet run does not make: JSON, reports, verdict prose, summaries
    "benchlab.cli.json_output", "benchlab.jsonable", "benchlab.report.output",
    # commands that are not run: `cluster certs` (run shares only its TLS options)
    "benchlab.cli.cluster_certs",
    "benchlab.report.verdict_text", "benchlab.report.run_summary", "benchlab.stats",
    # options not given: --metric, --cluster, --load, containers and sandboxes, perf counters,
    # --count, --until-decided, limits (cgroup run leaves), tuning, calibrations, studies
    "benchlab.measure.metrics", "benchlab.core.cluster", "benchlab.control.load",
    "benchlab.control.containers", "benchlab.control.sandboxes", "benchlab.measure.perf",
    "benchlab.measure.counts", "benchlab.core.until_decided", "benchlab.control.cgroups.limits",
    "benchlab.control.cgroups.accounting", "benchlab.control.cgroups.lifecycle",
    "benchlab.control.system.contention", "benchlab.control.system.tuning",
    "benchlab.control.system.restore", "benchlab.machines", "benchlab.core.study",
    "benchlab.core.suite", "benchlab.workloads",
    # importers and exporters of other tools' formats: run needs MetricSpec alone
    "benchlab.store.formats.gather", "benchlab.store.formats.common",
    "benchlab.store.formats.readers", "benchlab.environment.diff",
)

#: benchlab's modules each command imports at most (what they import today, + 3 for what
#: another change may need; lower it when a change makes a command import fewer). run's 87
#: include the store backends' registry and the two backends it asks (a few hundred
#: microseconds of loading together: bench/startup.py's run figure did not move).
MOST_MODULES = {"run": 87 + 3, "show": 56 + 3, "compare": 53 + 3, "list": 23 + 3}


def test_a_quiet_run_imports_only_what_it_uses(home):
    """``run -q -N -r 1`` imports no module of an option it was not given, and no more of
    benchlab's modules than :data:`MOST_MODULES` says (each one costs its loading)."""
    root, env = home
    report = _run(root, env, ["run", "-q", "-N", "-r", "1", "/bin/true", "--db",
                              str(root / "r.db")])
    assert _imported(report, NOT_ON_RUN_PATH) == []
    ours = _benchlab_modules(report)
    assert len(ours) <= MOST_MODULES["run"], (len(ours), ours)


@pytest.mark.parametrize("args", [["show"], ["compare", "/bin/true", "/bin/echo"], ["list"]],
                         ids=["show", "compare", "list"])
def test_reading_commands_import_a_bounded_set(home, args):
    """``show``, ``compare`` and ``list`` on a small store: no probe of this machine (reading a
    stored environment runs none), no exec helper, no session; show and list no JSON printer
    without ``--json``, list no statistics; at most :data:`MOST_MODULES` of benchlab's
    modules."""
    root, env = home
    report = _run(root, env, [*args, "--db", str(root / "s.db")])
    assert _imported(report, ("subprocess", "benchlab.environment.collect",
                              "benchlab.measure.spawn", "benchlab.core.session")) == []
    if args[0] != "compare":  # (compare's JSON printer is loaded with it: ~0.1 % of it)
        assert _imported(report, ("benchlab.cli.json_output",)) == []
    if args == ["list"]:  # a table of rows: no statistics, no numpy, no JSON values
        assert _imported(report, ("numpy", "benchlab.stats", "rich", "benchlab.jsonable")) == []
    ours = _benchlab_modules(report)
    assert len(ours) <= MOST_MODULES[args[0]], (len(ours), ours)


def test_a_run_printing_to_a_pipe_loads_no_rich(home):
    """A run's full output read by a program (a pipe, a CI log) is plain lines: no progress
    bar, no boxed tables, so rich (~30-80 ms of CPU to import) is not loaded; the same
    command's tables and verdict are all there."""
    root, env = home
    report = _run(root, env, ["run", "-N", "-r", "3", "/bin/true", "/bin/true", "--db",
                              str(root / "r.db")])
    assert _imported(report, ("rich",)) == []
    assert "benchlab.report.run_summary" in report["modules"]  # the summary was printed


def test_a_run_of_one_command_loads_no_numpy(home):
    """One command has a summary and no verdict: its numbers are computed from the store's
    values without numpy (importing it costs more CPU than a hundred runs of /bin/true)."""
    root, env = home
    report = _run(root, env, ["run", "-N", "-r", "3", "/bin/true", "--db",
                              str(root / "r.db")])
    assert _imported(report, ("numpy", "rich", "benchlab.stats")) == []
    assert "benchlab.report.summary_numbers" in report["modules"]
