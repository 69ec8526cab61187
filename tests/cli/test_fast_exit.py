"""The console script's fast exit (``cli.main._exit_now``): a successful ``run``, ``show``,
``compare`` or ``list`` ends with ``os._exit`` after flushing, closing and cleaning up, and
leaves exactly what the interpreter's own exit left: every run stored and committed, the store
checkpointed (no ``-wal``/``-shm`` beside it), no scratch directory, no exec helper, no
tracking cgroup. Real processes, a real SQLite file, real cgroups (as root)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import BENCHLAB

PY = sys.executable

#: The console script, plus an object whose ``__del__`` says when the interpreter's teardown
#: ran (it clears ``__main__``'s globals); stdout gets the text after a command's own output.
_CANARY_SCRIPT = textwrap.dedent("""
    import os, sys

    class Canary:
        def __del__(self):
            os.write(1, b"TEARDOWN\\n")

    canary = Canary()
    sys.argv = ["benchlab", *sys.argv[1:]]
    from benchlab.cli.main import main
    sys.exit(main())
""")


def _console(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-c", _CANARY_SCRIPT, *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _tracking_leaves(pid: int) -> list[str]:
    found = []
    for hierarchy in ("freezer", "pids"):
        parent = Path("/sys/fs/cgroup") / hierarchy / "benchlab"
        if parent.is_dir():
            found += [str(p) for p in parent.glob(f"track-{pid}-*")]
    return found


def test_a_successful_run_skips_the_teardown_and_leaves_everything_stored_and_clean(tmp_path):
    db = tmp_path / "s.db"
    proc = subprocess.Popen([BENCHLAB, "run", "-q", "-N", "-r", "7", "/bin/true", "/bin/echo",
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert (out, err) == ("", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]  # checkpointed, no WAL
    conn = sqlite3.connect(db)
    ((runs,),) = conn.execute("SELECT count(*) FROM runs WHERE warmup = 0").fetchall()
    ((status,),) = conn.execute("SELECT status FROM sessions").fetchall()
    conn.close()
    assert (runs, status) == (14, "complete")
    assert not list(Path("/tmp").glob(f"benchlab-*-p{proc.pid}-*"))  # the scratch directory
    assert _tracking_leaves(proc.pid) == []
    helpers = subprocess.run(["pgrep", "-f", "exec_helper", "-P", str(proc.pid)],
                             capture_output=True, text=True)
    assert helpers.stdout == ""


@pytest.mark.parametrize("command", ["run", "show", "list", "compare"])
def test_fast_exit_is_taken_and_leaves_what_the_interpreters_exit_leaves(tmp_path, command):
    """The same command on two copies of one store, through the console script (fast exit)
    and as a library call (the interpreter's exit): the same output, the same files (a store
    opened read-only keeps its -wal and -shm either way)."""
    fast_dir, slow_dir = tmp_path / "fast", tmp_path / "slow"
    fast_dir.mkdir()
    first = _console(["run", "-q", "-N", "-r", "3", "/bin/true", "/bin/echo", "--db", "s.db"],
                     fast_dir)
    assert first.returncode == 0 and first.stdout == "", first.stderr
    assert sorted(p.name for p in fast_dir.iterdir()) == ["s.db"]
    shutil.copytree(fast_dir, slow_dir)
    args = {"run": ["run", "-q", "-N", "-r", "2", "/bin/true", "--db", "s.db"],
            "show": ["show", "--db", "s.db"], "list": ["list", "--db", "s.db"],
            "compare": ["compare", "/bin/true", "/bin/echo", "--db", "s.db"]}[command]
    fast = _console(args, fast_dir)
    assert fast.returncode == 0, fast.stderr
    assert "TEARDOWN" not in fast.stdout
    slow = subprocess.run([PY, "-c", "import sys; from benchlab.cli.main import main; "
                           f"main({args!r})"], capture_output=True, text=True, timeout=120,
                          cwd=slow_dir)
    assert slow.returncode == 0, slow.stderr
    if command != "run":
        assert fast.stdout.strip(), "the command's output was flushed before os._exit"
        assert fast.stdout == slow.stdout
    assert (sorted(p.name for p in fast_dir.iterdir())
            == sorted(p.name for p in slow_dir.iterdir()))


@pytest.mark.parametrize("args,code", [(["run", "-q", "-N", "-r", "1", "/bin/false"], 1),
                                       (["run", "-q", "--bogus"], 2),
                                       (["env", "--help"], 0)])
def test_failures_and_other_commands_exit_through_the_interpreter(tmp_path, args, code):
    proc = _console([*args, "--db", str(tmp_path / "s.db")] if args[0] == "run" else args,
                    tmp_path)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.endswith("TEARDOWN\n")


def test_output_to_a_closed_pipe_takes_the_normal_exit(tmp_path):
    """``benchlab list | head -0``: the flush fails, so the interpreter's exit handles it as
    before (no traceback from the fast path)."""
    db = str(tmp_path / "s.db")
    subprocess.run([BENCHLAB, "run", "-q", "-N", "-r", "2", "/bin/true", "--db", db],
                   check=True, timeout=120, cwd=tmp_path)
    proc = subprocess.run(f"{BENCHLAB} list --db {db} | head -c 0", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr


def test_main_called_with_argv_returns(tmp_path):
    """``main([...])`` is a library call (tests, scripts): it returns, never os._exit."""
    code = ("from benchlab.cli.main import main; "
            f"main(['run', '-q', '-N', '-r', '1', '/bin/true', '--db', {str(tmp_path / 's.db')!r}]);"
            " print('returned')")
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "returned\n", proc.stderr
    assert os.path.exists(tmp_path / "s.db")


def test_garbage_collection_is_paused_while_starting_and_resumed_for_the_command(tmp_path):
    """The console script holds the cyclic collector while Click and the command's modules
    import, then freezes what they made and collects again: a long session's cycles are freed."""
    code = textwrap.dedent(f"""
        import gc, sys
        seen = []
        import benchlab.core.executor as executor
        run_session = executor.run_session
        def observed(*a, **k):
            seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
            return run_session(*a, **k)
        executor.run_session = observed
        import benchlab.core.session as session
        session.run_session = observed
        import atexit
        atexit.register(lambda: print(seen, gc.isenabled()))
        sys.argv = ["benchlab", "run", "-q", "-N", "-r", "2", "/bin/true", "--db",
                    {str(tmp_path / "s.db")!r}]
        from benchlab.cli.main import main
        main()
    """)
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[(True, True)] True\n"
