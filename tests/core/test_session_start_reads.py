"""A session's start reads each /proc and /sys file once: the sweep, the
placement, the system checks and the environment probe used to read ~20 files twice (cpuinfo,
meminfo, the SMT, boost, THP and clocksource settings, the mount table, the CPU list up to
nine times). Inside :func:`benchlab.environment.reading_once` they share one reading, and what
a session stores (its environment, its checks) is what it stored before. Real files, a real
SQLite store; the runs are scripted (no process: the helper's tracking thread would race the
count), as tests/core/scripted.py says."""

from __future__ import annotations

import builtins
import contextlib
import io
from collections import Counter

import benchlab.environment
from benchlab.core import session as session_module
from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.environment import flatten
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner

#: Read by the store's owner record (its own layer, which may not use the environment's reader).
_READ_BY_THE_STORE = {"/proc/sys/kernel/random/boot_id"}
#: Fields that change between any two readings (ms apart), with or without a shared reading.
_VOLATILE = ("collected_at", "host.uptime_s", "host.booted_at", "load.", "memory.available_kib",
             "memory.free_kib", "memory.swap_free_kib", "cpu.frequency.cpuinfo_mhz")


def _plan() -> RunPlan:
    return RunPlan(benchmarks=[BenchmarkSpec("a", "true")], runs=1, min_runs=1, cwd="/tmp",
                   seed=7)


def _while_starting(monkeypatch) -> list:
    """Wrap the session's start: the returned list is non-empty exactly while a session starts."""
    starting: list = []
    real_start = session_module._start

    def counted_start(*args, **kwargs):
        starting.append(1)
        try:
            return real_start(*args, **kwargs)
        finally:
            starting.clear()

    monkeypatch.setattr(session_module, "_start", counted_start)
    return starting


def _start_reads(monkeypatch) -> Counter:
    """Run one session; count the /proc and /sys files opened while it starts."""
    opened: Counter = Counter()
    starting = _while_starting(monkeypatch)
    real_open = builtins.open

    def counting_open(path, *args, **kwargs):
        if starting and str(path).startswith(("/proc/", "/sys/")):
            opened[str(path)] += 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)  # pathlib opens through io.open
    return opened


def test_a_session_start_reads_each_proc_and_sys_file_once(db_path, monkeypatch):
    """Fails on the code before reading_once: /sys/devices/system/cpu/online 7 times, 20 others
    twice."""
    with Store.open(db_path) as store:
        execute(_plan(), store, Here(ScriptedRunner()))  # modules imported, probes remembered
        opened = _start_reads(monkeypatch)
        execute(_plan(), store, Here(ScriptedRunner()))
    assert opened, "the count saw no read: it does not work"
    twice = {path: n for path, n in opened.items() if n > 1 and path not in _READ_BY_THE_STORE}
    assert not twice, f"read more than once while the session started: {twice}"


def test_a_session_start_looks_up_each_program_and_namespace_once(db_path, monkeypatch):
    """The checks and the probe both look up systemd-detect-virt on PATH (a stat per PATH
    entry) and both key its remembered answers by the boot id and this process's namespaces
    (two readlinks a key): once each at a start. Fails on the code before (2 lookups, 8
    readlinks)."""
    import os
    import shutil

    looked_up: Counter = Counter()
    links: Counter = Counter()
    real_which, real_readlink = shutil.which, os.readlink

    def counting_which(name, *args, **kwargs):
        if starting:
            looked_up[name] += 1
        return real_which(name, *args, **kwargs)

    def counting_readlink(path, *args, **kwargs):
        if starting and str(path).startswith("/proc/self/ns/"):
            links[str(path)] += 1
        return real_readlink(path, *args, **kwargs)

    with Store.open(db_path) as store:
        execute(_plan(), store, Here(ScriptedRunner()))
        starting = _while_starting(monkeypatch)
        monkeypatch.setattr(shutil, "which", counting_which)
        monkeypatch.setattr(os, "readlink", counting_readlink)
        execute(_plan(), store, Here(ScriptedRunner()))
    assert looked_up, "the count saw no lookup: it does not work"
    assert max(looked_up.values()) == 1, looked_up
    if shutil.which("systemd-detect-virt"):  # the per-boot keys exist only with the program
        assert links and max(links.values()) == 1, links


def test_the_stored_environment_and_checks_are_those_of_separate_readings(db_path,
                                                                          monkeypatch):
    """A session started with one shared reading stores the same environment (every field but
    those that change between any two readings) and the same checks as one started with each
    reader reading for itself (reading_once made a no-op)."""
    with Store.open(db_path) as store:
        shared = execute(_plan(), store, Here(ScriptedRunner())).session.uid
        monkeypatch.setattr(benchlab.environment, "reading_once", contextlib.nullcontext)
        separate = execute(_plan(), store, Here(ScriptedRunner())).session.uid
        rows = [store.get_session(uid) for uid in (shared, separate)]
    envs = [{path: value for path, value in flatten(row["environment"])
             if not path.startswith(_VOLATILE)} for row in rows]
    assert len(envs[0]) > 100
    assert envs[0] == envs[1]
    assert rows[0]["environment"]["digest"] == rows[1]["environment"]["digest"]
    assert rows[0]["system_checks"] and rows[0]["system_checks"] == rows[1]["system_checks"]


def test_the_mount_table_is_parsed_once_inside_and_afresh_outside(tmp_path):
    """The sweep and the helper's tracking leaf both detect the cgroup layout at a session's
    start: inside reading_once the second gets the first's layout; outside, a changed mount
    table is seen at once."""
    from benchlab.control.cgroups.layout import detect_layout
    from benchlab.environment import reading_once

    table = tmp_path / "mountinfo"
    table.write_text("30 1 0:26 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n")
    with reading_once():
        first = detect_layout(table)
        table.write_text("")
        assert detect_layout(table) is first and "freezer" in first.v1
    assert detect_layout(table).version == "none"
    table.write_text("30 1 0:26 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n")
    assert set(detect_layout(table).v1) == {"pids"}
