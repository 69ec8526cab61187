"""``benchlab ab --harness jmh`` end to end, as docs/ci.md's JMH workflow runs it: its Gate step
in a throwaway repository (an ``origin`` and a pull-request branch) holding a Maven JMH project
of two benchmarks, ``heavy`` doing 3x the work of ``light`` on the pull request (the same work
on main). Each revision is built by the step's ``mvn`` (the dependencies are fetched once, as
scripts/setup.sh does), one JMH run per side per pair. The job fails (exit 1) naming only
``heavy`` in JUnit and Markdown; once it is decided the JMH runs are narrowed to ``light`` (JMH's
benchmark regexp).

Not as written: the budget and JMH's iterations. Each JMH run starts three JVMs (JMH's own and
one fork per benchmark), about 2 s at load 2-10 with ``-wi 0 -i 3 -r 100ms``; the test looks
from the fourth pair at alpha 0.05, without warmup runs, where a 3x regression was decided at
8 pairs in each of four trials at load 8-11 (10 at the default alpha 0.01; once in six runs of
the test at load 8-12 not by the 10th), and stops after 14 pairs, as ``light``, unchanged,
stays undecided at a 2 % threshold within such a budget. 3x, not 5 %, for the reason
tests/ci/test_ab_harness_go.py gives: on this shared 2-vCPU machine a harness's own time measures
the run queue, and the JVM's compiler adds its noise to three short iterations."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
import yaml

from tests.ci.test_docs_ci_harness import DOC, project, run_gate
from tests.harnesses.toolchains import jmh_project, jmh_sources

#: One worker runs every JMH test: JMH takes a machine-wide lock (java.io.tmpdir/jmh.lock) and
#: exits at once when another JMH holds it, and both modules build the same cached project.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("jmh")]

#: What the test changes in the Gate step: the workflow's budget and JMH's iterations.
LEAN = {"--max-time 5min": "--max-time 150 --max-pairs 14 --min-pairs 4 --look-every 1 "
                           "--alpha 0.05 --warmup 0",
        "-wi 1 -w 200ms -i 3 -r 200ms": "-wi 0 -i 3 -r 100ms"}
JAVA = "src/main/java/bench/Work.java"


def jmh_gate_step() -> str:
    """The Gate step of docs/ci.md's JMH workflow, as written but for :data:`LEAN`."""
    workflow = next(w for w in re.findall(r"^```yml\n(.*?)^```", DOC.read_text(),
                                          flags=re.S | re.M) if "--harness jmh" in w)
    steps = [s for job in yaml.safe_load(workflow)["jobs"].values() for s in job["steps"]]
    script = next(s["run"] for s in steps if s.get("name") == "Gate")
    for written, lean in LEAN.items():
        assert script.count(written) == 1, script
        script = script.replace(written, lean)
    return script


def test_a_slower_jmh_benchmark_fails_the_gate_alone(tmp_path):
    jmh_project()  # JMH and Maven's plugins in ~/.m2
    clone = project(tmp_path, jmh_sources(1000), {JAVA: jmh_sources(3000)[JAVA]})
    res = run_gate(jmh_gate_step(), clone, tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    cases = ET.parse(clone / "benchlab.xml").getroot().iter("testcase")
    failed = {case.get("name"): case.find("failure") is not None for case in cases}
    assert failed == {"bench.Work.heavy/loops=1000": True, "bench.Work.light/loops=1000": False}
    markdown = (clone / "benchlab.md").read_text()
    regressed = [line for line in markdown.splitlines() if "REGRESSION" in line]
    assert regressed and all("light" not in line for line in regressed), markdown
    assert any("heavy" in line for line in regressed), markdown
    assert "bench.Work.light" in markdown
