"""``benchlab ab --harness jmh`` end to end: a throwaway git repository holding a Maven JMH
project of two benchmarks, one of which does 3x the work at the head commit. Each revision is
built with Maven (offline: the project's dependencies are fetched once, as scripts/setup.sh
does), one JMH run (one JVM fork, three 100 ms iterations of each benchmark) per side per pair;
the job fails (exit 1) naming only the slower benchmark in JUnit and Markdown. Once it is
decided the JMH runs are narrowed to the other benchmark (JMH's benchmark regexp).

Lean on purpose (about 45 s at load 2-4): each JMH run starts three JVMs (JMH's own and one fork
per benchmark), about 2 s a run, so the job looks at every pair from the fourth on with alpha
0.05 (a 3x regression is decided at the first look the rule allows, 8 pairs here; 10 with the
default alpha 0.01) and stops after 12 pairs, as the other benchmark, unchanged, stays undecided
at a 2 % threshold within such a budget.

3x, not 5 %, for the reason tests/ci/test_ab_harness_go.py gives: on this shared 2-vCPU machine
a harness's own time measures the run queue, and the JVM adds its compiler's noise to three
short iterations."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.ci.conftest import git
from tests.conftest import BENCHLAB
from tests.harnesses.toolchains import jmh_project, jmh_sources

pytestmark = pytest.mark.slow

COMMAND = "java -jar {root}/target/benchmarks.jar -f 1 -wi 0 -i 3 -r 100ms"


def _repo(tmp_path: Path) -> Path:
    """Base: heavy loops as often as light (1000 times); head: 3000 times."""
    jmh_project()  # Maven's dependencies in ~/.m2, so each revision builds offline
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@benchlab.invalid")
    git(repo, "config", "user.name", "ci")
    for commit, heavy in (("base", 1000), ("head", 3000)):
        for name, text in {**jmh_sources(heavy), ".gitignore": "target/\n"}.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        git(repo, "add", ".")
        git(repo, "commit", "-qm", commit)
    return repo


def test_a_slower_jmh_benchmark_fails_the_gate_alone(tmp_path, cache_env):
    repo = _repo(tmp_path)
    out = tmp_path / "gate"
    res = subprocess.run([BENCHLAB, "ab", "-q", "--harness", "jmh", "--base", "HEAD~1",
                          "--build", "mvn -q -o -B package", "--max-time", "120",
                          "--max-pairs", "12", "--min-pairs", "4", "--look-every", "1",
                          "--alpha", "0.05", "--junit", f"{out}.xml",
                          "--markdown", f"{out}.md", COMMAND], cwd=repo, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 1, res.stdout + res.stderr
    suite = ET.parse(f"{out}.xml").getroot()
    names = [case.get("name") for case in suite.iter("testcase")]
    failed = [case.get("name") for case in suite.iter("testcase")
              if case.find("failure") is not None]
    assert len(failed) == 1 and "bench.Work.heavy" in failed[0], names
    assert any("bench.Work.light" in n for n in names), names
    markdown = Path(f"{out}.md").read_text()
    regressed = [line for line in markdown.splitlines() if "REGRESSION" in line.upper()]
    assert regressed and all("light" not in line for line in regressed), markdown
    assert any("heavy" in line for line in regressed), markdown
