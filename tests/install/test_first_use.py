"""The exec helper compiled at first use, the no-compiler fallback, and the optional extras.

- Two first runs at once compile the helper once (a file lock in the user's cache), and both
  get the same, complete binary.
- Without a C compiler (``CC`` pointing nowhere: the compiler is hidden by the environment, not
  uninstalled) ``benchlab run`` measures with the pure-Python fallback and says so once.
- Base commands import no optional dependency; a missing one is one line naming the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchlab.errors import EXTRA_OF_MODULE, MissingExtra, require_extra
from tests.conftest import BENCHLAB, run_cli

PY = sys.executable


def _logging_compiler(tmp_path: Path) -> tuple[Path, Path]:
    """A ``cc`` wrapper that logs each compile and takes 0.5 s first, so two builds overlap."""
    log = tmp_path / "compiles.log"
    wrapper = tmp_path / "slow-cc"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nsleep 0.5\nexec cc \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper, log


def test_two_first_runs_at_once_compile_the_helper_once(tmp_path):
    wrapper, log = _logging_compiler(tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), CC=str(wrapper))
    env.pop("BENCHLAB_CACHE", None)
    code = ("from benchlab.measure.spawn import helper_path, spawn_measured, SpawnRequest\n"
            "print(helper_path()); print(spawn_measured(SpawnRequest(['/bin/true'])).method)")
    procs = [subprocess.Popen([PY, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    paths = {out.splitlines()[0] for out, _ in outs}
    assert len(paths) == 1, paths
    helper = Path(paths.pop())
    assert helper.parent == tmp_path / "cache" / "benchlab" / "bin"
    assert os.access(helper, os.X_OK)
    assert [out.splitlines()[1] for out, _ in outs] == ["exec-helper", "exec-helper"]
    compiles = [line for line in log.read_text().splitlines() if "exec_helper.c" in line]
    assert len(compiles) == 1, compiles  # the second process waited on the lock, then reused it


def test_without_a_compiler_run_falls_back_and_says_so_once(tmp_path):
    env = {"CC": str(tmp_path / "no-such-cc"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "BENCHLAB_CACHE": ""}
    proc = run_cli("run", "-N", "-r", "3", "/bin/true", "/bin/echo",
                   db=tmp_path / "b.db", env=env)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("benchlab: note:")]
    assert len(notes) == 1, proc.stderr
    assert "no C compiler" in notes[0] and "spawned from Python" in notes[0]
    assert "max RSS" in notes[0]
    assert not (tmp_path / "cache" / "benchlab" / "bin").exists() or not any(
        p.name.startswith("exec_helper") for p in (tmp_path / "cache" / "benchlab" / "bin").iterdir())


def test_missing_extra_is_one_line_naming_the_pip_install():
    with pytest.raises(MissingExtra, match=r"pip install 'benchlab\[report\]'"):
        require_extra("benchlab_no_such_module_xyz", "report")
    assert require_extra("json") is json
    assert require_extra("json", load=False) is None


BASE_COMMANDS = [
    ["run", "-q", "-N", "-r", "3", "/bin/true", "/bin/echo"],
    ["list"], ["show"], ["analyze", "/bin/true"], ["compare", "/bin/true", "/bin/echo"],
    ["export", "--format", "csv", "-o", "{tmp}/x.csv"], ["history", "/bin/true"],
]


@pytest.mark.parametrize("args", BASE_COMMANDS, ids=lambda a: a[0])
def test_base_commands_import_no_optional_dependency(tmp_path, args):
    """The commands of the base install never import an extra's module (so a base install
    runs them); checked in this environment, which has every extra installed."""
    db = tmp_path / "b.db"
    if args[0] != "run":
        run_cli(*BASE_COMMANDS[0], db=db, check=True)
    out = tmp_path / "modules.json"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args] + ["--db", str(db)]
    code = textwrap.dedent(f"""
        import atexit, json, sys
        atexit.register(lambda: open({str(out)!r}, "w").write(json.dumps(sorted(sys.modules))))
        from benchlab.cli.main import main
        main({argv!r})
    """)
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = {m.split(".")[0] for m in json.loads(out.read_text())}
    assert sorted(loaded & set(EXTRA_OF_MODULE)) == []
    assert BENCHLAB  # the console script these tests' sibling runs


def test_setup_refuses_an_old_python_in_one_line(tmp_path):
    """scripts/setup.sh with a python3 that says it is 3.9 (a stand-in script: this machine has
    no old Python) stops before installing anything, with one line naming the fix."""
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\ncase \"$*\" in\n  *version_info*) exit 1 ;;\n"
                    "  *python_version*) echo 3.9.2 ;;\n  *) exec python3 \"$@\" ;;\nesac\n")
    fake.chmod(0o755)
    setup = Path(__file__).resolve().parents[2] / "scripts" / "setup.sh"
    proc = subprocess.run(["bash", str(setup)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHON=str(fake)))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs Python >= 3.11" in lines[0] and "3.9.2" in lines[0]
