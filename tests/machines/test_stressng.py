"""stress-ng discovery, method lists and the --yaml parser, on the real stress-ng."""

from __future__ import annotations

import subprocess

import pytest

from benchlab.errors import UserError
from benchlab.machines import stressng
from tests.conftest import needs_tool

pytestmark = needs_tool("stress-ng")


def test_cpu_methods_come_from_the_installed_stress_ng():
    methods = stressng.cpu_methods()
    assert "all" not in methods
    assert {"int64", "fft", "matrixprod", "ackermann"} <= set(methods)
    # Debian's 0.15 has 82; other versions differ, but never by a handful.
    assert len(methods) >= 60
    assert not set(methods) & set(stressng.EXTRA_STRESSORS)


def test_resolve_methods_groups_lists_and_unknown_names():
    every = stressng.resolve_methods("all")
    assert every[-4:] == list(stressng.EXTRA_STRESSORS)
    assert len(every) == len(stressng.cpu_methods()) + 4
    assert stressng.resolve_methods("int64,stream,int64") == ["int64", "stream"]
    assert stressng.resolve_methods("memory") == list(stressng.EXTRA_STRESSORS)
    with pytest.raises(UserError, match="unknown stress-ng method 'int6'.*did you mean int64"):
        stressng.resolve_methods("int6")
    with pytest.raises(UserError, match="empty method"):
        stressng.resolve_methods("int64,,fft")


def test_a_real_run_parses_including_the_base60_looking_date(tmp_path):
    out = tmp_path / "r.yaml"
    argv = stressng.method_argv("int64", 1, out, stressng.find_stress_ng())
    subprocess.run(argv, capture_output=True, timeout=60, check=True)
    text = out.read_text()
    assert "date-yyyy-mm-dd" in text  # the field YAML 1.1 would turn into an integer
    result = stressng.parse_yaml_file(out)
    assert result.stressor == "cpu"
    assert result.bogo_ops > 0 and result.ops_per_s_real > 0
    # real-time rate = bogo-ops / wall; CPU-time rate >= it (stress-ng's worker can't exceed one CPU)
    assert result.ops_per_s_real == pytest.approx(result.bogo_ops / result.wall_s, rel=0.05)
    assert result.ops_per_s_cpu >= result.ops_per_s_real * 0.9
    assert result.version == stressng.stress_ng_version()


def test_malformed_reports_are_one_line_user_errors(tmp_path):
    with pytest.raises(UserError, match="not valid YAML"):
        stressng.parse_yaml_report("metrics: [unclosed", "x.yaml")
    with pytest.raises(UserError, match="no metrics section"):
        stressng.parse_yaml_report("---\nsystem-info:\n  cpus: 2\n", "x.yaml")
    with pytest.raises(UserError, match="non-numeric bogo-ops"):
        stressng.parse_yaml_report("metrics:\n  - stressor: cpu\n    bogo-ops: lots\n"
                                   "    bogo-ops-per-second-real-time: 1\n", "x.yaml")
    with pytest.raises(UserError, match="cannot read stress-ng report"):
        stressng.parse_yaml_file(tmp_path / "absent.yaml")


def test_missing_binary_says_how_to_install():
    with pytest.raises(UserError, match="apt-get install stress-ng"):
        stressng.find_stress_ng("/nonexistent/stress-ng")


def test_durations_must_be_whole_seconds():
    with pytest.raises(UserError, match="whole seconds"):
        stressng.method_argv("int64", 0, "x.yaml", "stress-ng")
