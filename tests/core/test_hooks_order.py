"""hyperfine's meaning of ``-s/--setup`` and ``-c/--cleanup``: parameters substituted in them,
and each command's setup right before its warmups and runs, its cleanup right after (the
default order when hooks are given); ``--order interleaved`` and ``--workers`` run every setup
first. Checked against the real hyperfine when it is installed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import run_cli

HOOKS = ["-r", "2", "-w", "1", "-s", "echo setup-{n} >> log", "-c", "echo cleanup-{n} >> log",
         "-P", "n", "1", "2", "echo run-{n} >> log"]
IN_ORDER = ["setup-1", "run-1", "run-1", "run-1", "cleanup-1",
            "setup-2", "run-2", "run-2", "run-2", "cleanup-2"]


def _log(tmp_path, *args, db) -> list[str]:
    log = tmp_path / "log"
    log.unlink(missing_ok=True)
    run_cli("run", "-q", *args, db=db, cwd=tmp_path, check=True)
    return log.read_text().split()


def test_setup_and_cleanup_wrap_each_command_as_in_hyperfine(tmp_path, db_path):
    assert _log(tmp_path, *HOOKS, db=db_path) == IN_ORDER
    if shutil.which("hyperfine"):
        (tmp_path / "log").unlink()
        subprocess.run(["hyperfine", "--style", "none", *HOOKS], cwd=tmp_path, check=True,
                       capture_output=True, timeout=120)
        assert (tmp_path / "log").read_text().split() == IN_ORDER


@pytest.mark.parametrize("extra", [["--order", "interleaved"], ["--workers", "2"]])
def test_interleaved_or_parallel_runs_set_everything_up_first(tmp_path, db_path, extra):
    log = _log(tmp_path, *extra, *HOOKS, db=db_path)
    assert log[:2] == ["setup-1", "setup-2"] and log[-2:] == ["cleanup-1", "cleanup-2"]
    runs = log[2:-2]
    assert sorted(runs) == ["run-1"] * (3 if "--order" in extra else 6) + \
        ["run-2"] * (3 if "--order" in extra else 6)


def test_a_resumed_sequential_session_sets_up_the_command_it_continues(tmp_path, db_path):
    """Stopped by the second command's first run failing (that run is kept, as every run is):
    resume runs the second command's setup, its one remaining run and its cleanup, and nothing
    of the first command again."""
    from benchlab.store import Store

    args = ["-r", "2", "-s", "echo setup-{n} >> log", "-c", "echo cleanup-{n} >> log",
            "-P", "n", "1", "2", "echo run-{n} >> log; test {n} = 1 || test -e go"]
    proc = run_cli("run", "-q", *args, db=db_path, cwd=tmp_path)
    assert proc.returncode != 0  # the second command fails until 'go' exists
    with Store.open(db_path) as store:
        uid = store.sessions()[0]["uid"]
    (tmp_path / "go").touch()
    (tmp_path / "log").unlink()
    run_cli("run", "-q", "--resume", uid, db=db_path, cwd=tmp_path, check=True)
    assert (tmp_path / "log").read_text().split() == ["setup-2", "run-2", "cleanup-2"]


def test_hooks_run_through_the_chosen_shell_and_without_one_with_n(tmp_path, db_path):
    """As hyperfine: -S picks the shell of the hooks too; -N splits them into words (shell
    syntax there is refused in one line, before any session)."""
    from tests.conftest import assert_one_line_error

    run_cli("run", "-q", "-r", "1", "-S", "bash", "--prepare",
            'echo "${BASH_VERSION:+bash}" > shell', "true", db=db_path, cwd=tmp_path, check=True)
    assert (tmp_path / "shell").read_text().strip() == "bash"
    run_cli("run", "-q", "-r", "2", "-N", "--prepare", "touch prepared", "true", db=db_path,
            cwd=tmp_path, check=True)
    assert (tmp_path / "prepared").exists()
    refused = run_cli("run", "-q", "-r", "1", "-N", "--prepare", "echo x > f", "true",
                      db=tmp_path / "other.db", cwd=tmp_path)
    assert_one_line_error(refused, "--prepare", "shell syntax")
    if (tmp_path / "other.db").exists():
        from benchlab.store import Store

        with Store.open(tmp_path / "other.db", readonly=True) as store:
            assert store.sessions() == [], "a refused plan created a session"
