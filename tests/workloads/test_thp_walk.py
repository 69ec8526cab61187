"""The transparent-huge-pages workload: the same walk with MADV_HUGEPAGE and MADV_NOHUGEPAGE,
judged by page-fault counts (exact, not timings); and the THP settings in the environment."""

from __future__ import annotations

import subprocess

import pytest

from benchlab.environment.kernel import thp_setting
from benchlab.environment.memory import thp_details
from benchlab.workloads import build_workload, parse_workload_output

SIZE_MIB = 64


def _walk(mode: str) -> tuple[dict, dict]:
    out = subprocess.run([str(build_workload("thp_walk")), mode, str(SIZE_MIB), "100000"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    parsed = parse_workload_output(out)
    return {k: v for k, (v, _) in parsed.metrics.items()}, parsed.check


def test_huge_and_small_pages_do_the_same_work_with_the_faults_their_page_size_implies():
    huge, huge_check = _walk("huge")
    small, small_check = _walk("nohuge")
    assert huge_check["checksum"] == small_check["checksum"]
    # 4 KiB pages: one first-touch fault per page of the buffer (and no huge page)
    assert small["setup_faults"] >= 0.95 * SIZE_MIB * 256 and small["anon_huge_kib"] == 0
    if thp_setting().get("enabled") in ("always", "madvise") and huge["anon_huge_kib"] > 0:
        # 2 MiB pages: about one fault per 2 MiB, and the buffer mapped with huge pages
        assert huge["setup_faults"] < small["setup_faults"] / 50
        assert huge["anon_huge_kib"] >= SIZE_MIB * 1024 / 2
    else:  # THP off (or no huge page free): the advice changes nothing
        assert huge["setup_faults"] >= 0.95 * SIZE_MIB * 256


def test_bad_mode_is_refused_with_usage():
    proc = subprocess.run([str(build_workload("thp_walk")), "giant"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_thp_settings_are_recorded():
    details = thp_details()
    with open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") as fh:
        assert details["pmd_size_kib"] == int(fh.read()) // 1024
    assert details["khugepaged_defrag"] in (0, 1)
    assert thp_setting()["enabled"] in ("always", "madvise", "never")


@pytest.mark.parametrize("mode", ["huge", "nohuge"])
def test_the_walk_reports_its_own_time(mode):
    out = subprocess.run([str(build_workload("thp_walk")), mode, "8", "1000"], capture_output=True,
                         text=True, check=True).stdout
    self_times = parse_workload_output(out).self_times
    assert 0 < self_times["cpu_ns"] and self_times["setup_ns"] > 0
