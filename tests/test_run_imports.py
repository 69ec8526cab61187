"""What ``benchlab run -q -N -r 1 /bin/true``, ``show``, ``compare`` and ``list`` import
(issue 19 item 4: the fixed cost of a command is mostly its imports).

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
    """A directory with XDG dirs of its own and a store a warm-up run wrote (the exec helper
    built, the per-boot probes remembered): (directory, environment)."""
    root = tmp_path_factory.mktemp("run-imports")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHLAB_", "XDG_"))}
    for name in ("CACHE", "DATA", "CONFIG", "STATE"):
        (root / name.lower()).mkdir()
        env[f"XDG_{name}_HOME"] = str(root / name.lower())
    _run(root, env, ["run", "-q", "-N", "-r", "1", "/bin/true", "/bin/echo", "--db",
                     str(root / "s.db")])
    return root, env


def _run(root: Path, env: dict[str, str], args: list[str]) -> dict:
    """Run ``benchlab ARGS`` in ``root`` through :data:`_TRACKER`; its report."""
    out = root / "imports.json"
    proc = subprocess.run([PY, "-c", _TRACKER, str(out), *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _imported(report: dict, names: set[str]) -> list[str]:
    """Each of ``names`` that was imported, with its importers."""
    modules = report["modules"]
    return [f"{name} <- {modules[name]}" for name in sorted(names & modules.keys())]


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
                              str(root / "s.db")])
    owners = [entry.split(":")[0] for entry in report["compiled"]]
    assert set(owners) <= RUN_PATTERNS, report["compiled"]
    assert len(owners) == len(RUN_PATTERNS), report["compiled"]  # one pattern each
