"""Each extension point takes a new extension as one module plus its registration, and nothing
else (docs/architecture.md, "Extension points"): :mod:`tests.extension_plugins` registers a
sandbox, a container engine, an export format, a store backend and a harness at run time, then the real
command line runs in a process of its own, and every option, message, help text and stored
record that names the built-in ones picks the new one up. No file of benchlab is edited."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.measure.harnesses import HARNESS_MODULES
from tests.conftest import assert_one_line_error, require_tool
from tests.control.container_image import busybox_image

REPO = Path(__file__).resolve().parents[1]
DRIVER = ("import sys; from tests.extension_plugins import register; register(); "
          "from benchlab.cli.main import main; sys.argv[0] = 'benchlab'; main()")
#: A command that succeeds only with an empty environment (HOME unset): through ``env -i``.
NEEDS_CLEAN_ENV = 'test -z "$HOME"'


def extended(*args: str, path: str | None = None) -> subprocess.CompletedProcess:
    """``benchlab ARGS`` with the extensions registered first (``path``: PATH's value)."""
    env = dict(os.environ, COLUMNS="160", PYTHONPATH=str(REPO))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-c", DRIVER, *args], capture_output=True,
                          text=True, timeout=180, cwd=REPO, env=env)


def _setups(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        return [json.loads(r[0]) for r in conn.execute("SELECT data FROM setups")]


def test_a_registered_sandbox_wraps_each_run_and_is_named_by_messages(tmp_path):
    db = tmp_path / "s.db"
    base = ["run", "-r", "2", "-w", "0", "--db", str(db)]
    bare = extended(*base, "--isolation", "bare", NEEDS_CLEAN_ENV)
    assert "exited with code 1" in bare.stderr  # the user's environment has HOME
    wrapped = extended(*base, "--isolation", "env", NEEDS_CLEAN_ENV)
    assert wrapped.returncode == 0, wrapped.stderr
    (level,) = [s["isolation"] for s in _setups(db) if s["isolation"]["mode"] == "sandbox"]
    assert level["level"] == "env" and level["startup"]["wall_ns"] > 0
    assert level["startup"]["command"].startswith("env -i")
    missing = extended(*base, "--isolation", "benchlab-no-such-jail", "true")
    assert_one_line_error(missing, "benchlab-no-such-jail is not installed here; build it")
    unknown = extended(*base, "--isolation", "nsjail", "true")
    assert_one_line_error(unknown, "not understood", "firejail, isolate, env,",
                          "podwrap:IMAGE, podwrap-exec:IMAGE")


def test_a_registered_container_engine_is_a_level_of_its_own(tmp_path):
    db = tmp_path / "s.db"
    proc = extended("run", "--db", str(db), "--isolation", "podwrap", "true")
    assert_one_line_error(proc, "--isolation podwrap needs an image: podwrap:IMAGE")
    proc = extended("run", "--db", str(db), "--isolation", "podwrap:busybox", "true",
                    path="/usr/bin:/bin")  # no podwrap on PATH
    assert_one_line_error(proc, "podwrap is not installed here")


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the container tests run as root")
def test_a_registered_container_engine_runs_each_run_in_a_container(tmp_path):
    """``podwrap`` is podman under another name: every run goes through the new entry."""
    require_tool("podman")
    image = busybox_image()
    if image is None:
        pytest.skip("busybox-static is missing")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "podwrap"
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which('podman')} \"$@\"\n")
    wrapper.chmod(0o755)
    db = tmp_path / "s.db"
    proc = extended("run", "-N", "-r", "2", "-w", "0", "--db", str(db), "--isolation",
                    f"podwrap:{image}", "/bin/true",
                    path=f"{bin_dir}:{os.environ['PATH']}")
    assert proc.returncode == 0, proc.stderr
    (level,) = [s["isolation"] for s in _setups(db) if s["isolation"]["mode"] == "container"]
    assert level["tool"] == "podwrap" and level["image"] == image
    assert level["startup"]["command"].split()[0].endswith("podwrap")


def test_a_registered_export_format_is_offered_and_written(tmp_path):
    db = tmp_path / "s.db"
    proc = extended("run", "-N", "-r", "3", "-w", "0", "-n", "noop", "--db", str(db), "true")
    assert proc.returncode == 0, proc.stderr
    helped = extended("export", "--help")
    assert "tsv" in " ".join(helped.stdout.split()), helped.stdout
    out = extended("export", "--format", "tsv", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["noop\t3"]


def test_a_registered_store_backend_is_reached_by_db_and_its_files_are_guarded(tmp_path):
    path = tmp_path / "tagged.db"
    db = f"tagged:{path}"
    proc = extended("run", "-N", "-r", "2", "-w", "0", "--db", db, "true")
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(path) as conn:  # the backend's own file holds the session
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    # its files are this machine's: an output over one is refused (a server's would not be)
    over = extended("export", "--db", db, "--format", "json", "-o", f"{path}-wal")
    assert_one_line_error(over, f"{path}-wal", "is the store")
    vacuumed = extended("store", "vacuum", "--db", db)
    assert vacuumed.returncode == 0, vacuumed.stderr
    assert vacuumed.stdout.strip().endswith("MB"), vacuumed.stdout


def test_a_registered_harness_stores_each_benchmark_it_reports(tmp_path):
    db = tmp_path / "s.db"
    lines = "printf 'BenchmarkSum-2 100 50 ns/op\\nBenchmarkProduct-2 100 70 ns/op\\n'"
    proc = extended("run", "--harness", "golines", "-r", "2", "--db", str(db), lines)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM benchmarks ORDER BY name")]
    assert names == ["Product", "Sum"]
    unknown = extended("run", "--harness", "nonesuch", "--db", str(db), "true")
    assert_one_line_error(unknown, "unknown harness 'nonesuch'", "jmh, golines")
    kinds = "|".join([*HARNESS_MODULES, "golines"])  # the built-in ones, then the new one
    for command in ("run", "ab"):  # the help lists the registry's kinds
        helped = extended(command, "--help")
        assert f"--harness {kinds}" in helped.stdout, helped.stdout
