"""System checks, the CPU contention probe and tune/restore, on the real machine.

tune/restore are exercised for real on ASLR (/proc/sys/kernel/randomize_va_space; we are root),
always putting the original value back in a ``finally``.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchlab.cli.main import cli
from benchlab.control.system import (
    CONTENTION_OK_RATIO,
    STATUSES,
    Check,
    check_cpu_contention,
    plan_tune,
    restore,
    run_checks,
    tune,
)
from benchlab.errors import UserError

ASLR = Path("/proc/sys/kernel/randomize_va_space")
CHEAP_NAMES = [
    "governor", "boost", "smt", "aslr", "swap", "transparent_hugepages", "load",
    "isolated_cpus", "perf_event_paranoid", "virtualization", "clocksource",
]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tune/restore write /proc: needs root")
# Tests that write or compare ASLR run in one xdist worker (make test uses --dist loadgroup).
aslr_group = pytest.mark.xdist_group("aslr")
needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                                    reason="the contention probe needs 2 CPUs")


@pytest.fixture
def aslr_lock():
    """Serialise tests that write or compare ASLR across processes (xdist workers, other runs).

    Without it, two workers could interleave so that one saves the other's temporary value as
    "original" and leaves ASLR off for the whole machine.
    """
    with open("/tmp/benchlab-test-aslr.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture
def original_aslr(aslr_lock):
    """Put ASLR back exactly as it was, whatever the test does."""
    original = ASLR.read_text().strip()
    try:
        yield original
    finally:
        ASLR.write_text(original + "\n")


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_cheap_checks_are_complete_fast_and_serialisable():
    start = time.process_time()  # CPU time: a busy machine does not stretch it
    checks = run_checks(include_contention=False)
    elapsed = time.process_time() - start
    assert [c.name for c in checks] == CHEAP_NAMES
    for check in checks:
        assert check.status in STATUSES
        assert check.observed and check.advice and "\n" not in check.advice
        assert json.loads(json.dumps(check.to_dict()))["name"] == check.name
    # Typically ~20 ms of CPU; the runner calls this at the start of every session.
    assert elapsed < 2.0


@aslr_group
def test_checks_agree_with_the_kernel_files(aslr_lock):
    checks = _by_name(run_checks(include_contention=False))
    aslr = int(ASLR.read_text())
    assert checks["aslr"].details["randomize_va_space"] == aslr
    assert checks["aslr"].status == ("ok" if aslr == 0 else "warn")

    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    active = thp[thp.index("[") + 1:thp.index("]")]
    assert checks["transparent_hugepages"].details["thp"]["enabled"] == active
    assert checks["transparent_hugepages"].status == ("warn" if active == "always" else "ok")

    if not Path("/sys/devices/system/cpu/cpu0/cpufreq").exists():
        governor = checks["governor"]
        assert governor.status == "unknown"
        assert "no /sys/devices/system/cpu/cpu*/cpufreq (virtualised or driver absent)" \
            in governor.observed

    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    swap_total = int(meminfo["SwapTotal"].split()[0])
    assert checks["swap"].details["swap_total_kib"] == swap_total

    isolated = Path("/sys/devices/system/cpu/isolated").read_text().strip()
    assert checks["isolated_cpus"].status == ("ok" if isolated else "warn")

    if " hypervisor" in Path("/proc/cpuinfo").read_text():
        assert checks["virtualization"].status in ("warn", "unknown")


@needs_two_cpus
@pytest.mark.serial  # compares times measured while other work may run
def test_contention_probe_measures_two_pinned_cpu_bound_processes():
    check = check_cpu_contention(duration_s=0.2)
    details = check.details
    a, b = details["cpus"]
    assert a != b and {a, b} <= os.sched_getaffinity(0)
    assert details["solo_rate"] > 0 and len(details["parallel_rates"]) == 2
    ratio = details["ratio"]
    assert 0.02 < ratio < 3.0
    assert f"{ratio:.2f}x speed each" in check.observed
    busy = max(details["other_cpus_during_solo"], details["other_cpus_during_parallel"])
    if busy > 0.3:
        # Other processes share this machine: then the probe must say it is inconclusive.
        assert check.status == "unknown" and "other processes used" in check.observed
    else:
        assert check.status == ("ok" if ratio >= CONTENTION_OK_RATIO else "warn")
    if check.status == "warn":
        assert "parallel workers will disturb each other" in check.advice
    # Each copy got some CPU time; a share above 1 would mean it was not a single thread.
    assert all(0 < share <= 1.05 for share in details["parallel_cpu_shares"])


def test_contention_probe_is_unknown_with_one_allowed_cpu():
    before = os.sched_getaffinity(0)
    only = min(before)
    try:
        os.sched_setaffinity(0, {only})
        check = check_cpu_contention(duration_s=0.05)
    finally:
        os.sched_setaffinity(0, before)
    assert check.status == "unknown"
    assert f"only CPU {only}" in check.observed


def test_contention_is_optional():
    assert "cpu_contention" not in _by_name(run_checks(include_contention=False))


@needs_root
@aslr_group
def test_tune_and_restore_aslr_for_real(tmp_path, original_aslr):
    ASLR.write_text("2\n")  # a known starting point that tune must change
    state = tmp_path / "state" / "tune-state.json"
    report = tune(state_path=state, only=["aslr"])
    assert ASLR.read_text().strip() == "0"
    assert report["state_path"] == str(state)
    assert report["actions"] == [{
        "name": "aslr", "path": str(ASLR), "current": "2", "target": "0",
        "status": "changed", "reason": "",
    }]
    saved = json.loads(state.read_text())
    assert saved["settings"] == [{"name": "aslr", "path": str(ASLR), "previous": "2",
                                  "applied": "0"}]
    assert saved["tuned_at"].endswith("Z")
    assert (state.stat().st_mode & 0o777) == 0o600 and state.stat().st_uid == 0

    with pytest.raises(UserError, match="already exists"):
        tune(state_path=state, only=["aslr"])
    assert json.loads(state.read_text()) == saved  # the original values are not overwritten

    ASLR.write_text("1\n")  # someone changed it meanwhile: restore still puts back the saved value
    result = restore(state_path=state)
    assert ASLR.read_text().strip() == "2"
    assert result["restored"] == [{"name": "aslr", "path": str(ASLR), "value": "2", "was": "1"}]
    assert not state.exists()
    with pytest.raises(UserError, match="nothing to restore"):
        restore(state_path=state)


@needs_root
@aslr_group
def test_nothing_to_change_writes_no_state(tmp_path, original_aslr):
    ASLR.write_text("0\n")
    state = tmp_path / "tune-state.json"
    report = tune(state_path=state, only=["aslr"])
    assert report["state_path"] is None
    assert report["actions"][0]["status"] == "already"
    assert not state.exists()


def test_missing_cpufreq_is_reported_not_faked():
    actions = {a.name.split(":")[0]: a for a in plan_tune(["governor", "boost"])}
    if not Path("/sys/devices/system/cpu/cpu0/cpufreq").exists():
        assert actions["governor"].status == "unavailable"
        assert actions["governor"].reason.startswith("not available here")
        assert actions["governor"].path is None
    else:
        assert actions["governor"].status in ("change", "already", "unavailable")
    if not any(Path(p).exists() for p in ("/sys/devices/system/cpu/cpufreq/boost",
                                          "/sys/devices/system/cpu/intel_pstate/no_turbo")):
        assert actions["boost"].status == "unavailable"


def test_unknown_setting_name_is_a_user_error():
    with pytest.raises(UserError, match="unknown setting"):
        plan_tune(["aslr", "hyperdrive"])


def _state_file(path: Path, settings: list, mode: int = 0o600, **extra) -> Path:
    """A state file as tune writes it (root, mode 600), with the given settings."""
    document = {"format": 1, "tuned_at": "2026-01-01T00:00:00Z", "boot_id": "x",
                "settings": settings, **extra}
    path.write_text(json.dumps(document))
    path.chmod(mode)
    return path


GOVERNOR0 = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")


@needs_root
@pytest.mark.skipif(GOVERNOR0.exists(), reason="needs a machine without cpufreq (a known path "
                                                "that cannot be written)")
def test_restore_keeps_state_for_what_it_could_not_write(tmp_path):
    state = _state_file(tmp_path / "tune-state.json", [
        {"name": "governor:cpu0", "path": str(GOVERNOR0), "previous": "schedutil",
         "applied": "performance"}])
    with pytest.raises(UserError, match="could not restore"):
        restore(state_path=state)
    kept = json.loads(state.read_text())
    assert kept["settings"][0]["path"] == str(GOVERNOR0)
    assert (state.stat().st_mode & 0o777) == 0o600  # rewritten owner-only as well


ASLR_SETTING = {"name": "aslr", "path": str(ASLR), "previous": "2", "applied": "0"}


def _hostile_states(tmp_path: Path, victim: Path) -> dict[str, tuple[list, dict, str]]:
    """(settings, extra top-level keys, expected message) per way a state file can lie."""
    return {
        "arbitrary path": ([{**ASLR_SETTING, "path": str(victim)}], {}, "tune writes aslr only at"),
        "unknown name": ([{"name": "fake", "path": str(victim), "previous": "1", "applied": "0"}],
                         {}, "tune never changes"),
        "path traversal in name": ([{"name": "governor:cpu0/../../../../tmp", "path": str(victim),
                                     "previous": "x", "applied": "y"}], {}, "tune never changes"),
        "bad value": ([{**ASLR_SETTING, "previous": "2\nkernel.panic=1"}], {}, "not a value"),
        "out of range": ([{**ASLR_SETTING, "previous": "7"}], {}, "not a value"),
        "not a string": ([{**ASLR_SETTING, "previous": 2}], {}, "not a value"),
        "duplicate": ([ASLR_SETTING, ASLR_SETTING], {}, "repeats"),
        "extra key": ([{**ASLR_SETTING, "mode": "w"}], {}, "does not have exactly"),
        "extra top-level key": ([ASLR_SETTING], {"run": "rm -rf /"}, "keys are not exactly"),
        "empty": ([], {}, "non-empty list"),
    }


@needs_root
@aslr_group
def test_restore_refuses_any_state_file_tune_would_not_have_written(tmp_path, original_aslr):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    ASLR.write_text("1\n")
    for case, (settings, extra, message) in _hostile_states(tmp_path, victim).items():
        state = _state_file(tmp_path / "tune-state.json", settings, **extra)
        with pytest.raises(UserError, match=message) as refused:
            restore(state_path=state)
        assert "\n" not in str(refused.value), case
        assert str(refused.value).startswith("refusing to restore"), case
        # Nothing written: not the victim, not the real setting, not the state file.
        assert victim.read_text() == "precious\n", case
        assert ASLR.read_text().strip() == "1", case
        assert state.exists(), case


@needs_root
@aslr_group
def test_restore_refuses_a_state_file_others_could_have_written(tmp_path, original_aslr):
    ASLR.write_text("1\n")
    state = _state_file(tmp_path / "tune-state.json", [ASLR_SETTING], mode=0o644)
    with pytest.raises(UserError, match="mode is 644, not 600"):
        restore(state_path=state)
    state.chmod(0o600)
    os.chown(state, 65534, 65534)
    with pytest.raises(UserError, match="owned by uid 65534, not root"):
        restore(state_path=state)
    os.chown(state, 0, 0)
    link = tmp_path / "link.json"
    link.symlink_to(state)
    with pytest.raises(UserError, match="cannot be opened as a plain file"):
        restore(state_path=link)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(UserError, match="not a regular file"):
        restore(state_path=fifo)
    state.write_text("{not json")
    with pytest.raises(UserError, match="not a JSON document"):
        restore(state_path=state)
    assert ASLR.read_text().strip() == "1"
    # The genuine article still works.
    _state_file(state, [ASLR_SETTING])
    assert restore(state_path=state)["restored"][0]["value"] == "2"
    assert ASLR.read_text().strip() == "2" and not state.exists()


def test_cli_checks_json_and_table():
    runner = CliRunner()
    result = runner.invoke(cli, ["system", "--quick", "--json"])
    assert result.exit_code == 0, result.output
    names = [item["name"] for item in json.loads(result.output)]
    assert names == CHEAP_NAMES
    table = runner.invoke(cli, ["system", "--quick"])
    assert table.exit_code == 0
    assert "aslr" in table.output and "clocksource" in table.output


@needs_root
@aslr_group
def test_cli_tune_and_restore_use_the_state_dir(tmp_path, original_aslr):
    script = Path(sys.executable).parent / "benchlab"
    if not script.exists():
        pytest.skip(f"{script} missing: run `bash scripts/setup.sh` to install the console script")
    ASLR.write_text("2\n")
    env = {**os.environ, "BENCHLAB_STATE_DIR": str(tmp_path)}
    tuned = subprocess.run([str(script), "system", "tune", "--only", "aslr"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert tuned.returncode == 0, tuned.stderr
    assert "aslr: 2 -> 0" in tuned.stdout
    assert (tmp_path / "tune-state.json").exists()
    assert ASLR.read_text().strip() == "0"

    again = subprocess.run([str(script), "system", "tune", "--only", "aslr"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr.startswith("benchlab: error: a tune state already exists")
    assert "Traceback" not in again.stderr

    restored = subprocess.run([str(script), "system", "restore"], env=env,
                              capture_output=True, text=True, timeout=60)
    assert restored.returncode == 0, restored.stderr
    assert ASLR.read_text().strip() == "2"
    assert not (tmp_path / "tune-state.json").exists()


_AS_NOBODY = """
import os, sys
from benchlab.cli.main import main
# Import while still root: the interpreter's standard library lives under /root (mode 700), and
# the CLI imports Click and the command's modules lazily.
import click, click.utils, importlib, benchlab.cli.system, benchlab.control.system, benchlab.errors
import benchlab.control.system.tuning, locale  # tune loads on first use; gettext needs locale
os.setgroups([]); os.setgid(65534); os.setuid(65534)
sys.argv = ["benchlab", "system", "tune"]
main()
"""


@needs_root
@aslr_group
def test_cli_tune_as_non_root_is_refused_clearly(tmp_path, aslr_lock):
    """Drops to uid 65534 (nobody) for real to see what an unprivileged user gets."""
    tmp_path.chmod(0o777)
    before = ASLR.read_text()
    result = subprocess.run([sys.executable, "-c", _AS_NOBODY],
                            env={**os.environ, "BENCHLAB_STATE_DIR": str(tmp_path)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "needs root" in result.stderr and "Traceback" not in result.stderr
    assert ASLR.read_text() == before
    assert not (tmp_path / "tune-state.json").exists()


def test_checks_can_reuse_a_collected_environment():
    from benchlab.environment import collect_environment

    environment = collect_environment(argv=[])
    reused = _by_name(run_checks(include_contention=False, environment=environment))
    probed = _by_name(run_checks(include_contention=False))
    assert reused["virtualization"].details == probed["virtualization"].details
    assert reused["virtualization"].details["evidence"] == environment["virtualization"]["evidence"]


@needs_root
@aslr_group
def test_cli_restore_from_a_hostile_state_file_is_one_line_exit_2_and_writes_nothing(
        tmp_path, original_aslr):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    ASLR.write_text("1\n")
    state = _state_file(tmp_path / "tune-state.json",
                        [{**ASLR_SETTING, "path": str(victim)}])
    done = subprocess.run([sys.executable, "-m", "benchlab.cli.main", "system", "restore",
                           "--state-file", str(state)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "refusing to restore" in done.stderr and "tune writes aslr only at" in done.stderr
    assert victim.read_text() == "precious\n" and ASLR.read_text().strip() == "1"
    assert state.exists()
