"""Install lines that run: every CI recipe of docs/ci.md installs benchlab's wheel committed in
the project (benchlab is not on a registry yet), and the missing-extra message names the
command of the installer that installed benchlab.

In a throwaway repository with the wheel in ``ci/`` (built here with ``uv build``), each
recipe's install step runs as written (``pipx install ./ci/benchlab-...whl``) into a private
pipx home, and the recipe's gate step then runs with the benchlab it installed (no developer
venv on PATH). Not run: the ``apt-get`` commands (machine packages that scripts/setup.sh
installs: valgrind, pipx) and the CI services' ``uses:`` steps. The dependencies come from
PyPI (numpy, rich, click, PyYAML), through one pip cache for the whole module.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.ci.test_docs_ci import blocks, origin_and_clone, run_script
from tests.conftest import REPO, assert_one_line_error, require_tool
from tests.install.test_wheel import UV, _uv

pytestmark = pytest.mark.slow
DOC_WHEEL = re.search(r"pipx install \./ci/(benchlab-\S+\.whl)",
                      (REPO / "docs" / "ci.md").read_text()).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if UV is None:
        pytest.skip("uv is not installed (scripts/setup.sh installs it)")
    require_tool("pipx", why="(the CI recipes install benchlab with pipx)")
    out = tmp_path_factory.mktemp("wheel")
    _uv("build", "-q", "--wheel", "-o", str(out), str(REPO))
    [built] = out.glob("benchlab-*.whl")
    assert built.name == DOC_WHEEL, "docs/ci.md names another wheel than this version builds"
    return built


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pip-cache")


def _home_env(tmp_path: Path, pip_cache: Path, **extra: str) -> dict:
    """An environment whose HOME, pipx home and caches are the test's own; PATH without the
    developers' venv, so `benchlab` is the one the recipe installed."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    dev_bin = str(Path(os.sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != dev_bin)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PIPX_"))}
    return {**env, "HOME": str(home), "PIP_CACHE_DIR": str(pip_cache),
            "PATH": f"{home / '.local' / 'bin'}{os.pathsep}{path}",
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "BENCHLAB_DB": str(tmp_path / "b.db"),
            **extra}


def _install_lines(script: str) -> list[str]:
    return [line for line in script.splitlines()
            if line.strip() and "apt-get" not in line]


def _project(tmp_path: Path, wheel: Path) -> Path:
    clone = origin_and_clone(tmp_path, None)  # an A/A pull request: the gate passes
    shutil.copy(wheel, clone / "ci" / wheel.name)
    return clone


def test_github_recipe_installs_the_wheel_and_gates_with_it(tmp_path, wheel, pip_cache):
    require_tool("valgrind")
    clone = _project(tmp_path, wheel)
    env = _home_env(tmp_path, pip_cache, GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    steps = {s.get("name"): s for job in yaml.safe_load(blocks("yaml")[0])["jobs"].values()
             for s in job["steps"]}
    for line in _install_lines(steps["Install benchlab"]["run"]):
        res = run_script(line, clone, env)
        assert res.returncode == 0, (line, res.stdout, res.stderr)
    assert shutil.which("benchlab", path=env["PATH"]) == \
        str(tmp_path / "home" / ".local" / "bin" / "benchlab")
    gate = run_script(steps["Gate"]["run"], clone, env)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert (clone / "benchlab.xml").exists()
    # the optional report: one line naming pipx's own command, with the extra's requirements
    report = run_script("benchlab report -o r.html", clone, env)
    assert_one_line_error(report, "pipx inject benchlab 'bokeh>=3.4' 'jinja2>=3.1' "
                                  "'matplotlib>=3.8'")


def test_gitlab_recipe_installs_the_wheel_and_gates_with_it(tmp_path, wheel, pip_cache):
    require_tool("valgrind")
    clone = _project(tmp_path, wheel)
    env = _home_env(tmp_path, pip_cache, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main",
                    GITLAB_CI="true", CI_PIPELINE_SOURCE="merge_request_event")
    job = yaml.safe_load(blocks("yaml")[1])["bench"]
    # before_script and script run in one shell in GitLab: one script here too
    script = "\n".join(_install_lines("\n".join(job["before_script"])) + job["script"])
    res = run_script(script, clone, env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (clone / "benchlab.md").read_text().startswith("## ")


def test_baseline_recipe_install_step(tmp_path, wheel, pip_cache):
    clone = _project(tmp_path, wheel)
    env = _home_env(tmp_path, pip_cache)
    steps = {s.get("name"): s for job in yaml.safe_load(blocks("yaml")[2])["jobs"].values()
             for s in job["steps"]}
    for line in _install_lines(steps["Install benchlab"]["run"]):
        assert run_script(line, clone, env).returncode == 0, line
    version = run_script("benchlab --version", clone, env)
    assert version.returncode == 0 and "0." in version.stdout + version.stderr


def test_uv_tool_install_gets_its_own_extra_command_and_it_works(tmp_path, wheel):
    """Under `uv tool install WHEEL` the message is `uv tool install --with ... WHEEL`; running
    that command as printed installs the extra (uv's cache: no download for what the
    developers' venv already has)."""
    env = {**os.environ, "UV_TOOL_DIR": str(tmp_path / "tools"),
           "UV_TOOL_BIN_DIR": str(tmp_path / "bin"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "BENCHLAB_DB": str(tmp_path / "b.db")}
    env["UV_CACHE_DIR"] = os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv")
    subprocess.run([UV, "tool", "install", "-q", str(wheel)], env=env, check=True,
                   capture_output=True, timeout=600)
    benchlab = str(tmp_path / "bin" / "benchlab")
    subprocess.run([benchlab, "run", "-N", "-r", "3", "true"], env=env, check=True,
                   capture_output=True, timeout=300)
    report = subprocess.run([benchlab, "report", "-o", str(tmp_path / "r.html")], env=env,
                            capture_output=True, text=True, timeout=300)
    assert_one_line_error(report, "uv tool install --with 'bokeh>=3.4' --with 'jinja2>=3.1' "
                                  f"--with 'matplotlib>=3.8' {wheel}")
    command = report.stderr.split("run: ", 1)[1].strip()
    assert command.startswith("uv tool install ")
    subprocess.run([UV, *shlex.split(command)[1:]], env=env, check=True, capture_output=True,
                   timeout=900)
    again = subprocess.run([benchlab, "report", "-o", str(tmp_path / "r.html")], env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000
