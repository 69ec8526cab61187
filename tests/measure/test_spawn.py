"""spawn_measured on real processes: rusage, exit kinds, timeouts, process groups, cgroups."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.measure import build
from benchlab.measure import spawn as spawn_module
from benchlab.measure.spawn import RunMeasurement, SpawnRequest, spawn_measured

MIB = 1024 * 1024

TEST_PROGRAMS = {
    # Allocate argv[1] MiB and touch every page, so it is resident.
    "alloc_touch": r"""
        #include <stdlib.h>
        #include <string.h>
        int main(int argc, char **argv) {
            size_t n = (size_t)atol(argv[1]) << 20;
            char *p = malloc(n);
            if (!p) return 1;
            for (size_t i = 0; i < n; i += 4096) p[i] = (char)i;
            return p[n / 2] == 42;
        }
    """,
    # Pure user-space arithmetic for argv[1] million iterations.
    "cpu_loop": r"""
        #include <stdlib.h>
        int main(int argc, char **argv) {
            long n = atol(argv[1]) * 1000000L;
            volatile unsigned long x = 1;
            for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1;
            return (int)(x & 0);
        }
    """,
    # Kernel work: argv[1] thousand 64 KiB reads from /dev/zero (copying is system time).
    "syscall_loop": r"""
        #include <fcntl.h>
        #include <stdlib.h>
        #include <unistd.h>
        static char buf[65536];
        int main(int argc, char **argv) {
            long n = atol(argv[1]) * 1000L;
            int fd = open("/dev/zero", O_RDONLY);
            if (fd < 0) return 1;
            for (long i = 0; i < n; i++) if (read(fd, buf, sizeof buf) < 0) return 1;
            return 0;
        }
    """,
    # argv[1] sleeps of 1 ms: each one is a voluntary context switch.
    "sleeper": r"""
        #include <stdlib.h>
        #include <time.h>
        int main(int argc, char **argv) {
            struct timespec ts = {0, 1000000};
            for (int i = 0; i < atoi(argv[1]); i++) nanosleep(&ts, 0);
            return 0;
        }
    """,
}


@pytest.fixture(scope="module")
def progs() -> dict[str, str]:
    return {
        name: str(build.build_source_text(f"test_{name}", textwrap.dedent(text)))
        for name, text in TEST_PROGRAMS.items()
    }


@pytest.fixture(params=["helper", "python"])
def method(request) -> str:
    return request.param


def run(argv, method="helper", **kwargs) -> RunMeasurement:
    return spawn_measured(SpawnRequest(argv=argv, **kwargs), method=method)


def live_processes_with_cmdline(cmdline: list[str]) -> list[int]:
    """Pids of non-zombie processes whose argv equals ``cmdline``."""
    wanted = ("\0".join(cmdline) + "\0").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes() != wanted:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def wait_until(predicate, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --- memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("helper_fork", [False, True], ids=["clone-vfork", "fork"])
def test_true_peak_rss_is_its_own_even_after_harness_touched_300mb(monkeypatch, helper_fork):
    monkeypatch.setattr(spawn_module.helper_client, "helper_uses_fork", helper_fork)
    ballast = bytearray(300 * MIB)
    ballast[::4096] = b"\x01" * len(range(0, len(ballast), 4096))  # make it resident
    try:
        m = run(["/bin/true"])
        failing = run(["sh", "-c", "exit 5"])
        fallback = run(["/bin/true"], method="python")
    finally:
        del ballast
    assert m.status == "ok" and m.method == "exec-helper"
    assert 0 < m.max_rss_kib < 2048, m
    assert failing.exit_code == 5
    # The reason the helper exists: from Python, the child inherits the harness's high-water mark.
    assert fallback.method == "python"
    assert fallback.max_rss_kib > 250 * 1024, fallback


def test_peak_rss_of_a_100mb_program(progs):
    m = run([progs["alloc_touch"], "100"])
    assert m.status == "ok", m
    assert 0.9 * 100 * 1024 <= m.max_rss_kib <= 1.1 * 100 * 1024, m
    assert m.minflt > 100 * 256 * 0.5  # about one minor fault per touched page (or per THP)


# --- CPU time -------------------------------------------------------------------------------


def test_user_and_system_time_split(progs, method):
    cpu = run([progs["cpu_loop"], "150"], method=method)
    sysheavy = run([progs["syscall_loop"], "80"], method=method)
    assert cpu.status == "ok" and sysheavy.status == "ok"
    assert cpu.user_ns > 50e6, cpu
    assert cpu.user_ns > 5 * cpu.sys_ns, cpu
    assert sysheavy.sys_ns > 30e6, sysheavy
    assert sysheavy.sys_ns > 2 * sysheavy.user_ns, sysheavy
    # CPU time cannot exceed wall time for a single-threaded program (small slack for ticks).
    assert cpu.user_ns + cpu.sys_ns <= cpu.wall_ns * 1.05 + 2e6


def test_wall_time_and_timestamps_are_consistent(method):
    before_unix = time.time_ns()
    m = run(["sleep", "0.05"], method=method)
    assert m.status == "ok"
    assert m.wall_ns == m.end_mono_ns - m.start_mono_ns
    assert 45e6 <= m.wall_ns < 2e9
    assert before_unix - 1e9 <= m.start_unix_ns <= time.time_ns()


def test_voluntary_context_switches_rise_for_a_sleeping_program(progs, method):
    idle = run([progs["sleeper"], "0"], method=method)
    sleepy = run([progs["sleeper"], "50"], method=method)
    assert sleepy.nvcsw >= 45, sleepy
    assert sleepy.nvcsw > idle.nvcsw + 30


# --- exit kinds -----------------------------------------------------------------------------


def test_nonzero_exit_is_failed(method):
    m = run(["sh", "-c", "exit 3"], method=method)
    assert (m.status, m.exit_code, m.signal, m.error) == ("failed", 3, None, None)


def test_program_exit_127_is_not_confused_with_exec_failure(method):
    m = run(["sh", "-c", "exit 127"], method=method)
    assert (m.status, m.exit_code, m.error) == ("failed", 127, None)


def test_killed_by_signal(method):
    m = run(["sh", "-c", "kill -SEGV $$"], method=method)
    assert (m.status, m.exit_code, m.signal) == ("signaled", None, signal.SIGSEGV)


def test_nonexistent_command_is_an_error_with_a_clear_message(method):
    m = run(["benchlab-no-such-command-xyz"], method=method)
    assert m.status == "error" and m.exit_code is None
    assert m.error.startswith("exec failed: No such file or directory"), m.error
    assert "benchlab-no-such-command-xyz" in m.error


def test_bad_cwd_is_an_error(method, tmp_path):
    m = run(["true"], method=method, cwd=str(tmp_path / "missing"))
    assert m.status == "error" and "cannot change directory" in m.error, m


def test_invalid_requests_are_user_errors():
    with pytest.raises(UserError):
        run([])
    with pytest.raises(UserError):
        run(["true"], timeout_s=0)
    with pytest.raises(UserError):
        run(["true"], rlimits={"NOT_A_LIMIT": 1})


# --- timeout and process groups -------------------------------------------------------------


def test_timeout_kills_the_whole_process_tree(method):
    marker = ["sleep", "10.%d" % (os.getpid() % 1000 + (1000 if method == "python" else 0))]
    script = f"{' '.join(marker)} & {' '.join(marker)}"
    m = run(["sh", "-c", script], method=method, timeout_s=0.3)
    assert m.status == "timeout" and m.signal == signal.SIGKILL, m
    assert 0.25e9 <= m.wall_ns < 3e9, m
    assert wait_until(lambda: not live_processes_with_cmdline(marker), 3.0), \
        "background sleep survived the timeout"


def test_no_timeout_when_program_finishes_in_time(method):
    m = run(["sleep", "0.01"], method=method, timeout_s=5)
    assert m.status == "ok", m


def test_child_runs_in_its_own_process_group(method, tmp_path):
    out = tmp_path / "pgid"
    m = run(["sh", "-c", "ps -o pgid= -p $$; echo $$"], method=method, stdout_path=str(out))
    assert m.status == "ok"
    pgid, pid = out.read_text().split()
    assert pgid == pid
    assert int(pgid) != os.getpgrp()


@pytest.mark.parametrize("whole_group", [False, True], ids=["sigint-python", "sigint-group"])
def test_ctrl_c_kills_the_child_group_and_reraises(method, whole_group, tmp_path):
    """SIGINT to the harness (or to its whole group, as a terminal does) leaves no target behind."""
    marker = ["sleep", "30.%d%d" % (os.getpid() % 1000, int(whole_group) + 2 * (method == "python"))]
    script = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from benchlab.measure.spawn import SpawnRequest, spawn_measured
        try:
            spawn_measured(SpawnRequest(argv={marker!r}), method={method!r})
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(42)
        print("returned", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            process_group=0)
    try:
        # 30 s: a fresh interpreter importing benchlab takes seconds on a loaded machine
        assert wait_until(lambda: live_processes_with_cmdline(marker), 30.0), "target never started"
        if whole_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 42 and "KeyboardInterrupt" in out, (proc.returncode, out)
        assert wait_until(lambda: not live_processes_with_cmdline(marker), 3.0), "sleep survived"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in live_processes_with_cmdline(marker):
            os.kill(pid, signal.SIGKILL)


# --- redirections, environment, limits ------------------------------------------------------


def test_stdin_stdout_stderr_go_to_files(method, tmp_path):
    stdin = tmp_path / "in.txt"
    stdin.write_text("from stdin\n")
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    out.write_text("old content that must be truncated " * 10)
    m = run(["sh", "-c", "cat; echo to-stdout; echo to-stderr >&2"], method=method,
            stdin_path=str(stdin), stdout_path=str(out), stderr_path=str(err))
    assert m.status == "ok"
    assert out.read_text() == "from stdin\nto-stdout\n"
    assert err.read_text() == "to-stderr\n"


def test_default_stdin_is_dev_null_and_output_discarded(method, capfd):
    m = run(["sh", "-c", "cat; echo should-not-appear"], method=method, timeout_s=5)
    assert m.status == "ok"
    captured = capfd.readouterr()
    assert "should-not-appear" not in captured.out + captured.err


def test_cwd_and_env(method, tmp_path):
    out = tmp_path / "out.txt"
    m = run(["sh", "-c", 'pwd; echo "$BENCHLAB_T"; echo "${HOME:-unset}"'], method=method,
            cwd=str(tmp_path), env={"BENCHLAB_T": "value", "PATH": os.environ["PATH"]},
            stdout_path=str(out))
    assert m.status == "ok"
    assert out.read_text().split("\n")[:3] == [str(tmp_path), "value", "unset"]


def test_rlimits_applied(method, tmp_path):
    out = tmp_path / "out.txt"
    m = run(["sh", "-c", "ulimit -n"], method=method, rlimits={"NOFILE": 37},
            stdout_path=str(out))
    assert m.status == "ok"
    assert out.read_text().strip() == "37"


def test_signal_dispositions_are_reset(method):
    """Python ignores SIGPIPE; the target must not inherit that (yes | head must end by SIGPIPE)."""
    m = run(["sh", "-c", "yes | head -c 1 >/dev/null; exit 0"], method=method, timeout_s=10)
    assert m.status == "ok", m


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_affinity_applied(method, tmp_path):
    cpu = max(os.sched_getaffinity(0))
    out = tmp_path / "out.txt"
    m = run(["grep", "Cpus_allowed_list", "/proc/self/status"], method=method, cpus=[cpu],
            stdout_path=str(out))
    assert m.status == "ok"
    assert m.cpus == (cpu,)
    assert out.read_text().split(":")[1].strip() == str(cpu)


def test_affinity_failure_is_an_error(method):
    m = run(["true"], method=method, cpus=[1000])
    assert m.status == "error" and "affinity" in m.error, m


# --- cgroups --------------------------------------------------------------------------------

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0 or not (CPUACCT / "cgroup.procs").exists(),
                    reason="needs root and a cgroup v1 cpuacct hierarchy")
def test_cgroup_join_accounts_all_cpu_time(progs, method):
    group = CPUACCT / f"benchlab-test-{os.getpid()}-{method}"
    group.mkdir()
    try:
        m = run([progs["cpu_loop"], "150"], method=method,
                cgroup_procs=[str(group / "cgroup.procs")])
        assert m.status == "ok", m
        usage_ns = int((group / "cpuacct.usage").read_text())
        cpu_ns = m.user_ns + m.sys_ns
        assert cpu_ns > 50e6
        # rusage is tick-sampled, cpuacct is exact: agree within 15% (+ a few ms).
        assert abs(usage_ns - cpu_ns) <= 0.15 * cpu_ns + 10e6, (usage_ns, cpu_ns)
    finally:
        wait_until(lambda: not (group / "cgroup.procs").read_text().strip(), 2.0)
        group.rmdir()


def test_cgroup_join_failure_is_an_error(method, tmp_path):
    m = run(["true"], method=method, cgroup_procs=[str(tmp_path / "nope" / "cgroup.procs")])
    assert m.status == "error" and "cannot join cgroup" in m.error, m


# --- the long-lived helper --------------------------------------------------------------------


def test_no_harness_fds_leak_into_the_target(method, tmp_path):
    out = tmp_path / "fds"
    keep_open = open(tmp_path / "decoy", "w")  # an fd the harness holds
    try:
        m = run(["ls", "/proc/self/fd"], method=method, stdout_path=str(out))
    finally:
        keep_open.close()
    assert m.status == "ok"
    assert sorted(out.read_text().split()) == ["0", "1", "2", "3"]  # 3: ls's own directory fd


def test_affinity_of_one_run_does_not_stick_to_the_next(method, tmp_path):
    allowed = sorted(os.sched_getaffinity(0))
    out = tmp_path / "out.txt"
    run(["true"], method=method, cpus=[allowed[0]])
    m = run(["grep", "Cpus_allowed_list", "/proc/self/status"], method=method,
            stdout_path=str(out))
    assert m.status == "ok" and m.cpus is None
    listed = out.read_text().split(":")[1].strip()
    expected = ",".join(map(str, allowed))
    compact = f"{allowed[0]}-{allowed[-1]}" if len(allowed) > 1 else str(allowed[0])
    assert listed in (expected, compact), listed


def test_environment_changes_between_runs_are_seen(monkeypatch, tmp_path):
    out = tmp_path / "out.txt"
    monkeypatch.setenv("BENCHLAB_T2", "first")
    run(["sh", "-c", 'echo "$BENCHLAB_T2"'], stdout_path=str(out))
    assert out.read_text() == "first\n"
    monkeypatch.setenv("BENCHLAB_T2", "second")
    run(["sh", "-c", 'echo "$BENCHLAB_T2"'], stdout_path=str(out))
    assert out.read_text() == "second\n"


def test_a_killed_helper_is_replaced_transparently():
    assert run(["true"]).status == "ok"
    server = spawn_module.servers.server
    os.kill(server.pid, signal.SIGKILL)
    os.waitpid(server.pid, 0)
    m = run(["sh", "-c", "exit 4"])
    assert (m.status, m.exit_code) == ("failed", 4)
    assert spawn_module.servers.server.pid != server.pid


def test_helper_is_rebuilt_if_the_cache_was_cleaned(tmp_path):
    script = textwrap.dedent("""
        import os, shutil, threading
        from benchlab.measure import spawn
        from benchlab.measure.spawn import SpawnRequest, spawn_measured
        assert spawn_measured(SpawnRequest(["true"]), method="helper").status == "ok"
        shutil.rmtree(os.environ["BENCHLAB_CACHE"])
        result = []
        worker = threading.Thread(target=lambda: result.append(
            spawn_measured(SpawnRequest(["true"]), method="helper")))
        worker.start(); worker.join()
        print(result[0].status, result[0].method)
    """)
    env = dict(os.environ, BENCHLAB_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["ok", "exec-helper"], out.stderr


def test_concurrent_threads_get_their_own_results():
    from concurrent.futures import ThreadPoolExecutor

    def one(code: int) -> int | None:
        return run(["sh", "-c", f"sleep 0.0{code % 3}; exit {code}"]).exit_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        codes = list(pool.map(one, range(1, 25)))
    assert codes == list(range(1, 25))


# --- method selection and the build cache --------------------------------------------------


def test_env_var_forces_python_fallback(monkeypatch):
    monkeypatch.setenv("BENCHLAB_SPAWN", "python")
    assert spawn_measured(SpawnRequest(["true"])).method == "python"
    monkeypatch.setenv("BENCHLAB_SPAWN", "helper")
    assert spawn_measured(SpawnRequest(["true"])).method == "exec-helper"


def test_build_without_compiler_is_a_user_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLAB_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(UserError, match="no C compiler found; install gcc"):
        build.build_source_text("nocc", "int main(void){return 0;}\n/* %d */" % os.getpid())


def test_build_is_cached_and_safe_under_concurrency(tmp_path):
    source = tmp_path / "prog.c"
    source.write_text("int main(void){return 7;}\n/* %d */\n" % time.time_ns())
    env = dict(os.environ, BENCHLAB_CACHE=str(tmp_path / "cache"))
    code = ("import sys; from benchlab.measure.build import build; "
            f"print(build({str(source)!r}))")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(4)]
    paths = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(paths) == 1
    binary = Path(paths.pop())
    assert binary.parent == tmp_path / "cache" / "bin"
    assert subprocess.run([binary]).returncode == 7
    assert [f.name for f in binary.parent.iterdir()] == [binary.name]  # no temp files left
