"""docs/ci.md runs: the exact commands of its GitHub Actions and GitLab CI examples, executed in
a throwaway repository (with an ``origin`` to take the merge-base with) whose program does 1 %
more work on the pull request's branch: the gate step fails (exit 1), and on an A/A pull
request (a change that does not touch the program) it passes.

Not run, because they need the network or a CI service: the ``uses:`` steps (checkout,
artifacts) and the steps that install benchlab (named "Install benchlab", GitLab's
before_script): benchlab and valgrind are installed here already. Each remaining ``run:`` /
``script:`` line runs under ``bash -e`` with the variables the CI service would set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.ci.conftest import MAKEFILE, WORK_C, git
from tests.conftest import require_tool

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ci.md"
VENV_BIN = str(Path(sys.executable).parent)

pytestmark = pytest.mark.slow


def blocks(lang: str) -> list[str]:
    """The fenced code blocks of docs/ci.md in language ``lang``, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def github_steps(workflow: str) -> list[dict]:
    """The steps that run here: every job's ``run:`` steps but the install step."""
    doc = yaml.safe_load(workflow)
    return [s for job in doc["jobs"].values() for s in job["steps"]
            if "run" in s and s.get("name") != "Install benchlab"]


def origin_and_clone(tmp_path: Path, pr_extra: int | None) -> Path:
    """A bare ``origin`` with main (the program, the suite of docs/ci.md) and a clone on a
    pull-request branch: ``pr_extra`` per mille more work (10: 1 %), a README change when None."""
    if not all(map(lambda t: __import__("shutil").which(t), ("cc", "make"))):
        pytest.skip("cc and make build the test program")
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for key, value in (("user.email", "ci@benchlab.invalid"), ("user.name", "ci")):
        git(seed, "config", key, value)
    (seed / "work.c").write_text(WORK_C)
    (seed / "Makefile").write_text(MAKEFILE)
    (seed / "extra").write_text("0\n")
    (seed / ".gitignore").write_text("work\n*.db\nbenchlab.*\nbaseline/\n")
    (seed / "ci").mkdir()
    (seed / "ci" / "bench.toml").write_text(blocks("toml")[0])
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "main")
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(tmp_path / "origin.git")],
                   check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "origin.git"), str(clone)], check=True)
    for key, value in (("user.email", "ci@benchlab.invalid"), ("user.name", "ci")):
        git(clone, "config", key, value)
    git(clone, "checkout", "-q", "-b", "pr")
    if pr_extra is None:
        (clone / "README").write_text("docs only\n")
        git(clone, "add", "README")
    else:
        (clone / "extra").write_text(f"{pr_extra}\n")
        git(clone, "add", "extra")
    git(clone, "commit", "-qm", "the pull request")
    return clone


def run_script(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _env(tmp_path: Path, **extra: str) -> dict:
    return {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"],
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "BENCHLAB_DB": str(tmp_path / "b.db"),
            **extra}


@pytest.mark.parametrize("pr_extra, expected", [(10, 1), (None, 0)], ids=["1%", "a-a"])
def test_github_actions_pull_request_gate(tmp_path, pr_extra, expected):
    require_tool("valgrind")
    clone = origin_and_clone(tmp_path, pr_extra)
    summary = tmp_path / "summary.md"
    env = _env(tmp_path, GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTIONS="true")
    [gate] = github_steps(blocks("yaml")[0])
    res = run_script(gate["run"], clone, env)
    assert res.returncode == expected, res.stdout + res.stderr
    suite = ET.parse(clone / "benchlab.xml").getroot().find("testsuite")
    assert int(suite.get("failures")) == expected
    assert ("REGRESSION" in summary.read_text()) == bool(expected)
    assert (clone / "benchlab.json").exists()


@pytest.mark.parametrize("pr_extra, expected", [(10, 1), (None, 0)], ids=["1%", "a-a"])
def test_gitlab_merge_request_job(tmp_path, pr_extra, expected):
    require_tool("valgrind")
    clone = origin_and_clone(tmp_path, pr_extra)
    job = yaml.safe_load(blocks("yaml")[1])["bench"]
    env = _env(tmp_path, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main", GITLAB_CI="true",
               CI_PIPELINE_SOURCE="merge_request_event")
    for line in job["script"][:-1]:
        assert run_script(line, clone, env).returncode == 0, line
    res = run_script(job["script"][-1], clone, env)
    assert res.returncode == expected, res.stdout + res.stderr
    root = ET.parse(clone / "benchlab.xml").getroot()
    assert int(root.get("failures")) == expected
    assert (clone / "benchlab.md").read_text().startswith("## ")


def test_the_baseline_travels_in_a_sqlite_file(tmp_path):
    """The baseline workflow: main records (three nights), a pull request doing 6x the work
    fails against it (with gate, and with ab --baseline building it), an A/A one does not (CPU
    time, 30 runs).

    A stored baseline is not paired with the fresh run: a load that comes and goes during one
    session makes its CPU times drift (seen: +10 % within 30 runs of 4 ms), and the rule then
    widens the interval for the autocorrelation and the learned session offsets, by design. At
    -n 3 (load ~5) a 30 % pull request read 1.25 [0.50, 3.14], undecided: the outcome followed
    the load. 6x the work (a CPU ratio of ~5, log 1.6) is decided beyond that widest interval
    (log half-width 0.92); the 30 % case is judged on recorded sessions, quiet and drifting, in
    tests/ci/test_baseline_recorded.py."""
    clone = origin_and_clone(tmp_path, 5000)
    steps = {s["name"]: s for s in github_steps(blocks("yaml")[2])}
    env = _env(tmp_path)
    git(clone, "checkout", "-q", "main")
    assert run_script(steps["Build"]["run"], clone, env).returncode == 0
    for _ in range(3):
        rec = run_script(steps["Record the baseline of main"]["run"], clone, env)
        assert rec.returncode == 0, rec.stderr
    a_a = run_script(steps["Gate against main's baseline"]["run"], clone, env)
    assert a_a.returncode == 0, a_a.stdout + a_a.stderr
    git(clone, "checkout", "-q", "pr")
    assert run_script(steps["Build"]["run"], clone, env).returncode == 0
    slow = run_script(steps["Gate against main's baseline"]["run"], clone, env)
    assert slow.returncode == 1, slow.stdout + slow.stderr
    nightly = run_script(blocks("sh")[0], clone, env)
    assert nightly.returncode == 0  # three sessions: too few for a change point
    # the same gate from ab's side: the pull request's head built in a worktree. Against a
    # stored baseline the runs are not paired, so drifting runs (seen in a fresh-clone CI run
    # of the 30 % case: head/base 1.39 [0.86, 2.26]) can leave the interval too wide: the gate
    # then says undecided and passes, by design. It must decide the regression within three
    # tries and never call it anything else.
    outputs = []
    for _ in range(3):
        ab = run_script(blocks("shell")[0], clone, env)
        outputs.append(ab.stdout + ab.stderr)
        assert ab.returncode in (0, 1), outputs[-1]
        assert ab.returncode == 1 or "undecided" in ab.stdout, outputs[-1]
        if ab.returncode == 1:
            break
    assert ab.returncode == 1, "\n".join(outputs)
