"""The environment collector against the real machine: /proc, /sys, git, the CLI."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import benchlab
from benchlab.environment import (
    collect_environment,
    diff_environments,
    environment_digest,
    flatten,
    is_unknown,
    load_average,
    read_text,
)
from benchlab.environment.cpu import CPUFREQ_ABSENT_REASON
from benchlab.environment.process import env_var_digests
from benchlab.units import parse_cpu_list

PLAIN = (str, int, float, bool, type(None))


@pytest.fixture(scope="module")
def env() -> dict:
    return collect_environment(argv=["benchlab", "run", "--", "true"], cwd=os.getcwd())


def _git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    )
    return result.stdout.strip()


def test_every_leaf_is_a_plain_value_or_unknown_with_a_reason(env):
    assert json.loads(json.dumps(env)) == env
    leaves = list(flatten(env))
    assert len(leaves) > 60
    for path, value in leaves:
        if is_unknown(value):
            assert isinstance(value["unknown"], str) and len(value["unknown"]) > 10, path
        elif isinstance(value, list):
            assert all(isinstance(item, PLAIN) for item in value), path
        elif isinstance(value, dict):
            assert value == {}, f"{path}: non-empty dict leaf {value}"
        else:
            assert isinstance(value, PLAIN), f"{path}: {type(value)}"


def test_stable_top_level_keys(env):
    assert list(env) == [
        "schema_version", "collected_at", "host", "os", "cpu", "memory", "kernel_settings",
        "numa", "cgroup", "virtualization", "python", "benchlab", "git", "process", "env_vars",
            "env_vars_digest",
        "load", "digest",
    ]


def test_machine_fields_match_independent_sources(env):
    assert env["host"]["hostname"] == socket.gethostname()
    assert env["os"]["kernel"]["release"] == os.uname().release
    assert env["cpu"]["logical_cores"] == os.cpu_count()
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert env["benchlab"]["version"] == benchlab.__version__
    assert env["kernel_settings"]["aslr"] == int(
        Path("/proc/sys/kernel/randomize_va_space").read_text())
    total = next(line for line in Path("/proc/meminfo").read_text().splitlines()
                 if line.startswith("MemTotal:"))
    assert env["memory"]["total_kib"] == int(total.split()[1])
    os_release = Path("/etc/os-release").read_text()
    assert f'ID={env["os"]["distribution"]["id"]}' in os_release
    assert env["kernel_settings"]["clocksource"] == Path(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().strip()


def test_physical_cores_agree_with_proc_cpuinfo(env):
    """/proc/cpuinfo's (physical id, core id) is a second, independent view of the topology."""
    pairs, current = set(), {}
    for line in Path("/proc/cpuinfo").read_text().splitlines() + [""]:
        if not line.strip():
            if "physical id" in current and "core id" in current:
                pairs.add((current["physical id"], current["core id"]))
            current = {}
        elif ":" in line:
            key, value = line.split(":", 1)
            current[key.strip()] = value.strip()
    if not pairs:
        pytest.skip("/proc/cpuinfo has no physical id/core id on this architecture")
    assert env["cpu"]["physical_cores"] == len(pairs)
    threads = env["cpu"]["threads_per_core"]
    assert env["cpu"]["physical_cores"] * threads == len(parse_cpu_list(env["cpu"]["online"]))
    assert env["cpu"]["smt"]["enabled"] == (threads > 1)


def test_caches_report_sizes_in_kib(env):
    caches = env["cpu"]["caches"]
    index0 = Path("/sys/devices/system/cpu/cpu0/cache/index0")
    if not index0.exists():
        assert is_unknown(caches)
        return
    for name in ("L1d", "L1i", "L2"):
        assert isinstance(caches[name]["size_kib"], int) and caches[name]["size_kib"] > 0
    assert caches["L2"]["size_kib"] > caches["L1d"]["size_kib"]


def test_frequency_is_read_or_unknown_with_the_reason(env):
    frequency = env["cpu"]["frequency"]
    governor_file = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if governor_file.exists():
        assert governor_file.read_text().strip() in frequency["governor"]
    else:
        assert frequency["governor"] == {"unknown": CPUFREQ_ABSENT_REASON}
        assert "cpufreq" in frequency["driver"]["unknown"]
    boost_file = Path("/sys/devices/system/cpu/cpufreq/boost")
    if boost_file.exists():
        assert frequency["boost"] == (boost_file.read_text().strip() == "1")
    elif not Path("/sys/devices/system/cpu/intel_pstate/no_turbo").exists():
        assert is_unknown(frequency["boost"])


def test_cgroup_version_follows_proc_mounts(env):
    fstypes = {line.split()[2] for line in Path("/proc/mounts").read_text().splitlines()}
    expected = {
        (True, True): "hybrid", (True, False): "v1", (False, True): "v2",
    }.get(("cgroup" in fstypes, "cgroup2" in fstypes))
    assert env["cgroup"]["version"] == expected
    if expected == "hybrid":
        assert "cpu" in env["cgroup"]["v1_controllers"]
        assert env["cgroup"]["v2_mount"].startswith("/sys/fs/cgroup")


def test_cmdline_isolation_parameters_follow_proc_cmdline(env):
    kernel_args = Path("/proc/cmdline").read_text().split(" -- ")[0].split()
    for name in ("isolcpus", "nohz_full"):
        given = [arg.split("=", 1)[1] for arg in kernel_args if arg.startswith(name + "=")]
        assert env["kernel_settings"]["cmdline"][name] == (given[-1] if given else None)


def test_virtualisation_evidence_is_recorded(env):
    virt = env["virtualization"]
    flags = Path("/proc/cpuinfo").read_text()
    assert virt["hypervisor_flag"] == (" hypervisor" in flags)
    if os.path.exists("/.dockerenv"):
        assert "file: /.dockerenv" in virt["evidence"]
    if shutil.which("systemd-detect-virt"):
        detected = subprocess.run(["systemd-detect-virt", "--vm"], capture_output=True,
                                  text=True).stdout.strip()
        assert virt["vm"] == detected


def test_session_fields(env):
    assert env["process"]["argv"] == ["benchlab", "run", "--", "true"]
    stamp = env["collected_at"]
    assert stamp.endswith("Z")
    moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs((dt.datetime.now(dt.timezone.utc) - moment).total_seconds()) < 600
    assert all(isinstance(env["load"][k], float) for k in ("1min", "5min", "15min"))


def test_environment_variable_values_are_never_stored_without_a_key(monkeypatch):
    secret = "hunter2-very-secret-value-7f3a"
    monkeypatch.setenv("BENCHLAB_TEST_TOKEN", secret)
    collected = collect_environment(argv=[])
    dumped = json.dumps(collected)
    assert secret not in dumped
    # No key: names only, every value None, and the session says so.
    assert collected["env_vars"]["BENCHLAB_TEST_TOKEN"] is None
    assert set(collected["env_vars"]) == set(os.environ)
    assert all(value is None for value in collected["env_vars"].values())
    assert "not stored" in collected["env_vars_digest"]


def _dictionary() -> list[str]:
    """Common passwords and their usual mutations: what an attacker tries first."""
    words = ["password", "hunter", "letmein", "qwerty", "dragon", "monkey", "secret", "admin",
             "welcome", "trustno1", "abc", "iloveyou", "sunshine", "master", "shadow"]
    guesses = []
    for word in words:
        for suffix in ["", *map(str, range(100)), "!", "123", "2024"]:
            guesses += [word + suffix, word.capitalize() + suffix, word.upper() + suffix]
    return guesses


def _public_digests(value: str) -> set[str]:
    """Every digest of ``value`` an attacker can compute knowing the algorithm but not the key."""
    data = value.encode()
    out = set()
    for full in (hashlib.sha256(data).hexdigest(), hmac.new(b"", data, hashlib.sha256).hexdigest(),
                 hmac.new(b"\0" * 32, data, hashlib.sha256).hexdigest(),
                 hmac.new(b"benchlab", data, hashlib.sha256).hexdigest()):
        out |= {full[:16], full[:32], full, "hmac:" + full[:32]}
    return out


def test_a_dictionary_attack_cannot_invert_a_keyed_value(monkeypatch):
    """The old format (unsalted sha256[:16]) gave hunter2 back at once; the keyed one does not."""
    key = os.urandom(32)
    monkeypatch.setenv("BENCHLAB_TEST_TOKEN", "hunter2")
    stored = collect_environment(argv=[], env_key=key)["env_vars"]["BENCHLAB_TEST_TOKEN"]
    assert stored.startswith("hmac:") and "hunter2" not in stored
    dictionary = _dictionary()
    assert "hunter2" in dictionary
    cracked = [word for word in dictionary if stored in _public_digests(word)]
    assert cracked == []
    # The same attack against the unsalted digest benchlab used to store finds it.
    old_format = hashlib.sha256(b"hunter2").hexdigest()[:16]
    assert [w for w in dictionary if old_format in _public_digests(w)] == ["hunter2"]
    # With the key (the store owner's secret) the digest is reproducible: same value, same digest,
    # so a changed variable still shows between two sessions of one store.
    assert env_var_digests({"T": "hunter2"}, key=key)["T"] == stored
    assert env_var_digests({"T": "hunter3"}, key=key)["T"] != stored
    assert env_var_digests({"T": "hunter2"}, key=os.urandom(32))["T"] != stored


def test_a_short_key_is_refused():
    with pytest.raises(ValueError, match="16 random bytes"):
        env_var_digests({"T": "x"}, key=b"short")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed here")
def test_git_commit_and_dirty_state(tmp_path):
    outside = collect_environment(argv=[], cwd=str(tmp_path))
    assert is_unknown(outside["git"]["commit"])
    assert "not in a usable git work tree" in outside["git"]["commit"]["unknown"]
    assert is_unknown(outside["git"]["dirty"])

    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    head = _git(tmp_path, "rev-parse", "HEAD")
    clean = collect_environment(argv=[], cwd=str(tmp_path))
    assert clean["git"]["commit"] == head
    assert clean["git"]["dirty"] is False

    (tmp_path / "a.txt").write_text("changed\n")
    dirty = collect_environment(argv=[], cwd=str(tmp_path))
    assert dirty["git"]["dirty"] is True and dirty["git"]["changed_paths"] == 1
    # Same machine, different checkout state: the machine digest does not move.
    assert dirty["digest"] == clean["digest"] == outside["digest"]


def test_without_external_tools_fields_become_unknown_not_guessed(monkeypatch, tmp_path):
    """An empty PATH is the real situation of a machine without git and systemd-detect-virt."""
    monkeypatch.setenv("PATH", str(tmp_path))
    collected = collect_environment(argv=[])
    assert collected["git"]["commit"] == {"unknown": "git is not installed"}
    vm = collected["virtualization"]["vm"]
    if collected["virtualization"]["hypervisor_flag"] is True:
        assert is_unknown(vm) and "hypervisor" in vm["unknown"]
    else:
        assert vm == "none" or is_unknown(vm)


def test_read_text_names_the_missing_path():
    value = read_text("/sys/nonexistent/benchlab-probe")
    assert value == {"unknown": "/sys/nonexistent/benchlab-probe does not exist"}


def test_digest_is_shared_by_sessions_on_the_same_machine(env):
    again = collect_environment(argv=["something", "else"], cwd="/")
    assert again["digest"] == env["digest"] == environment_digest(env)
    changed = copy.deepcopy(env)
    changed["os"]["kernel"]["release"] = "0.0.0-other"
    assert environment_digest(changed) != env["digest"]
    changed = copy.deepcopy(env)
    changed["kernel_settings"]["aslr"] = 0 if env["kernel_settings"]["aslr"] else 2
    assert environment_digest(changed) != env["digest"]
    changed = copy.deepcopy(env)
    changed["load"]["1min"] = 99.0
    changed["collected_at"] = "2000-01-01T00:00:00.000000Z"
    changed["env_vars"]["NEW"] = "0" * 16
    assert environment_digest(changed) == env["digest"]


def test_diff_lists_changed_fields_and_ignores_time_and_load(env):
    other = copy.deepcopy(env)
    other["collected_at"] = "2000-01-01T00:00:00.000000Z"
    other["load"]["1min"] = 42.0
    other["memory"]["available_kib"] = 1
    assert diff_environments(env, other) == []

    other["cpu"]["model"] = "Other CPU"
    other["cpu"]["frequency"]["governor"] = "performance"
    other["git"]["commit"] = "f" * 40
    del other["python"]["compiler"]
    differences = diff_environments(env, other)
    paths = [path for path, _, _ in differences]
    assert paths == sorted(paths)
    by_path = {path: (a, b) for path, a, b in differences}
    assert by_path["cpu.model"] == (env["cpu"]["model"], "Other CPU")
    assert by_path["cpu.frequency.governor"][1] == "performance"
    assert by_path["git.commit"][1] == "f" * 40
    assert by_path["python.compiler"] == (env["python"]["compiler"], None)
    assert len(differences) == 4


def test_collection_is_fast():
    durations = []
    for _ in range(3):
        start = time.perf_counter()
        collect_environment(argv=[])
        durations.append(time.perf_counter() - start)
    # Typically ~0.03 s; the budget is 0.3 s even on a loaded machine.
    assert min(durations) < 0.3


def test_load_average_matches_proc_loadavg():
    one, five, fifteen = load_average()
    fields = Path("/proc/loadavg").read_text().split()
    assert all(value >= 0 for value in (one, five, fifteen))
    # /proc/loadavg is rounded to 2 decimals and may tick between the two reads.
    assert abs(fifteen - float(fields[2])) < 0.5


def test_cli_json_and_table():
    from benchlab.cli.main import cli  # here: the CLI imports every layer, this file tests one

    runner = CliRunner()
    result = runner.invoke(cli, ["env", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["digest"] == environment_digest(data)
    assert data["host"]["hostname"] == socket.gethostname()

    table = runner.invoke(cli, ["env"])
    assert table.exit_code == 0, table.output
    assert "hostname" in table.output and socket.gethostname() in table.output
    assert data["digest"] in table.output


def test_console_script_env_json():
    script = Path(sys.executable).parent / "benchlab"
    if not script.exists():
        pytest.skip(f"{script} missing: run `bash scripts/setup.sh` to install the console script")
    result = subprocess.run([str(script), "env", "--json"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["process"]["argv"][1:] == ["env", "--json"]
    assert data["cpu"]["logical_cores"] == os.cpu_count()
    assert data["digest"] == environment_digest(data)


def test_diff_of_two_real_sessions_shows_only_session_fields(tmp_path):
    """Two real collections moments apart on one machine: only session fields may differ."""
    first = collect_environment(argv=["a"], cwd=str(tmp_path))
    second = collect_environment(argv=["b"], cwd=str(tmp_path))
    paths = {path for path, _, _ in diff_environments(first, second)}
    assert "process.argv" in paths
    assert all(path.startswith(("process.", "env_vars.")) for path in paths), paths


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed here")
def test_missing_working_directory_is_reported(tmp_path):
    missing = tmp_path / "gone"
    collected = collect_environment(argv=[], cwd=str(missing))
    assert collected["git"]["commit"] == {"unknown": f"{missing} does not exist"}


def test_a_run_stores_env_values_only_as_the_stores_keyed_digest(tmp_path):
    """End to end: `benchlab run` keys the digests with the user's secret (Store.env_key), which
    lives in the user's key file, not in the store."""
    import sqlite3
    import sys

    db = tmp_path / "store.db"
    key_file = tmp_path / "env-key"
    env = {**os.environ, "BENCHLAB_TEST_SECRET": "hunter2", "BENCHLAB_ENV_KEY_FILE": str(key_file)}
    done = subprocess.run([sys.executable, "-m", "benchlab.cli.main", "run", "-q", "--db", str(db),
                           "-r", "1", "--", "true"], env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0 and "No module named benchlab.cli.main" in done.stderr:
        pytest.skip("benchlab.cli.main is not runnable as a module here")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        stored = [json.loads(row[0]) for row in conn.execute("SELECT environment FROM sessions")]
        assert conn.execute("SELECT value FROM store_meta WHERE key = 'env_key'").fetchone() is None
    key = key_file.read_bytes()
    assert len(stored) == 1
    value = stored[0]["env_vars"]["BENCHLAB_TEST_SECRET"]
    assert "hunter2" not in json.dumps(stored[0])
    assert value == env_var_digests({"X": "hunter2"}, key=key)["X"]
    assert value not in _public_digests("hunter2")


def test_diff_compares_env_values_only_when_stored_the_same_way():
    key = os.urandom(32)
    base = {"env_vars_digest": "k", "env_vars": env_var_digests({"A": "1", "B": "2"}, key=key)}
    changed = {"env_vars_digest": "k", "env_vars": env_var_digests({"A": "1", "B": "3"}, key=key)}
    assert [d[0] for d in diff_environments(base, changed)] == ["env_vars.B"]
    unkeyed = {"env_vars_digest": "none", "env_vars": env_var_digests({"A": "1", "C": "2"})}
    # Different schemes: only which variables are set is compared.
    assert diff_environments(base, unkeyed) == [("env_vars.B", "set", None),
                                                ("env_vars.C", None, "set")]
