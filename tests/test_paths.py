"""The user's cache directory: one rule (``benchlab.paths.user_cache_dir``), and every cache
follows it: the compiled exec helper and workloads (``bin``), the remembered probe answers
(``probes``), the stores checked whole (``checked-stores``) and the build trees of ``ab`` and
``bisect`` (``builds``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchlab.paths import user_cache_dir

# Run in a fresh interpreter so no answer remembered by this process (the helper's path, the
# probes' memory) hides which directory a consumer would pick.
_CONSUMERS = r"""
import json, sys, time
from pathlib import Path
from benchlab.ci.revisions import Trees
from benchlab.environment._read import Probe
from benchlab.measure.build import cache_dir as bin_dir
from benchlab.measure.spawn.helper_client import helper_path
from benchlab.store import verified

db, repo = sys.argv[1], Path(sys.argv[2])
Probe(["echo", "remembered"], per_boot=True).result(time.monotonic() + 10)
before = verified.identity(db)
newest_s = max(max(f[3], f[4]) for f in before if f is not None) / 1e9
time.sleep(max(0.0, newest_s + verified.SETTLED_S + 0.05 - time.time()))
verified.remember_check(db, before)
with Trees(repo) as trees:
    built = trees.commit_tree("HEAD", "true", "head")  # a real worktree, built by `true`
print(json.dumps({"helper": helper_path(), "bin": str(bin_dir()), "tree": built.root,
                  "remembered": verified.unchanged_since_check(db)}))
"""


@pytest.mark.parametrize("empty", ["", None])
def test_the_rule_benchlab_cache_then_xdg_then_home(monkeypatch, tmp_path, empty):
    """``$BENCHLAB_CACHE`` wins; an empty or unset variable falls through to the next."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("BENCHLAB_CACHE", str(tmp_path / "mine"))
    assert user_cache_dir() == tmp_path / "mine"
    for name, expected in (("BENCHLAB_CACHE", tmp_path / "xdg" / "benchlab"),
                           ("XDG_CACHE_HOME", tmp_path / "home" / ".cache" / "benchlab")):
        if empty is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, empty)
        assert user_cache_dir() == expected


@pytest.mark.parametrize("setting", ["BENCHLAB_CACHE", "XDG_CACHE_HOME", "HOME"])
def test_every_cache_lives_in_the_one_directory(tmp_path, setting):
    """Set one variable (those ranked above it unset, those below pointing elsewhere) and every
    consumer writes under the directory the rule names: real compile of the exec helper, a real
    probe, a real store file remembered as checked, a real worktree of a git commit built."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    db = tmp_path / "store.db"
    db.write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHLAB_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp_path / "home")
    if setting != "HOME":
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    if setting == "BENCHLAB_CACHE":
        env["BENCHLAB_CACHE"] = str(tmp_path / "mine")
    cache = {"BENCHLAB_CACHE": tmp_path / "mine", "XDG_CACHE_HOME": tmp_path / "xdg" / "benchlab",
             "HOME": tmp_path / "home" / ".cache" / "benchlab"}[setting]
    started = time.time()
    out = subprocess.run([sys.executable, "-c", _CONSUMERS, str(db), str(repo)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(out.stdout)
    assert Path(found["helper"]).parent == cache / "bin"
    assert Path(found["helper"]).stat().st_mtime >= started - 1  # compiled there by this run
    assert Path(found["bin"]) == cache / "bin"
    assert Path(found["tree"]).parent.parent == cache / "builds"  # builds/<repo key>/<commit>
    assert (Path(found["tree"]) / ".benchlab-build.json").is_file()
    assert found["remembered"] and len(list((cache / "checked-stores").iterdir())) == 1
    assert len(list((cache / "probes").glob("*.json"))) == 1
    others = {tmp_path / "mine", tmp_path / "xdg", tmp_path / "home"} - {
        p for p in cache.parents} - {cache}
    assert not any(p.exists() for p in others), "a consumer wrote outside the one directory"
