"""Containers as isolation levels, with the real engine: podman runs a local busybox image
(built by tests/control/container_image.py, no registry), each run in a fresh container or
``exec``'d into one per worker; bad input gets one line before any session; no container is
left after Ctrl-C, SIGTERM, or kill -9 and the next start."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from benchlab.control import containers
from benchlab.store import Store
from benchlab.workloads import build_workload
from tests.conftest import BENCHLAB, assert_one_line_error, run_cli, sigint_as_in_a_terminal
from tests.control.container_image import busybox_image, owner_containers

IMAGE = busybox_image() if os.geteuid() == 0 else None
needs_podman = pytest.mark.skipif(IMAGE is None, reason="podman or busybox-static missing, or "
                                  "not root")
SELF_WALL = r"self_wall:ns=BENCHLAB_SELF wall_ns=(\d+)"
SELF_CPU = r"self_cpu:ns=BENCHLAB_SELF .*?\bcpu_ns=(\d+)"


def _parents(pid: int) -> list[str]:
    """benchlab's container cgroup parents of process ``pid``, in any hierarchy."""
    return [str(p) for p in Path("/sys/fs/cgroup").glob(f"*/benchlab-containers/{pid}-w*")]


def _setups(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        return [json.loads(r[0]) for r in conn.execute("SELECT data FROM setups")]


def _runs(db: Path):
    store = Store.open(db)
    sess = store.sessions()[0]
    return sess, store.runs(session_id=sess["id"], include_warmup=False), store


@needs_podman
@pytest.mark.parametrize("kind", ["podman", "podman-exec"])
def test_a_static_workload_runs_in_the_container_and_reports_its_own_time(tmp_path, kind):
    exe = build_workload("exp_float", static=True)
    db = tmp_path / "c.db"
    run_cli("run", "--runs", "2", "-w", "0", "-N", "--isolation", f"{kind}:{IMAGE}",
            "--metric", SELF_WALL, "--metric", SELF_CPU, f"{exe} 1000000", db=db, check=True)
    sess, runs, store = _runs(db)
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    manager = subprocess.run(["podman", "info", "--format", "{{.Host.CgroupManager}}"],
                             capture_output=True, text=True).stdout.strip()
    for r in runs:
        samples = store.samples_of_run(r["id"])
        (self_wall,), (self_cpu,) = samples["self_wall"], samples["self_cpu"]
        # the program's own view is inside the harness's, which adds the engine's start-up
        assert 0 < self_wall < r["wall_ns"]
        engine_view = {m["name"]: m["value"] for m in store.measurements_of_run(r["id"])
                       if m["source"] == "container"}
        if manager == "cgroupfs":
            # the container's cgroup saw the program's CPU time (and the runtime's start-up)
            assert engine_view["cpu_ns"] >= 0.8 * self_cpu
    (iso,) = [s["isolation"] for s in _setups(db) if s["isolation"]["mode"] == "container"]
    assert iso["image"] == IMAGE and iso["model"] == ("exec" if kind.endswith("exec") else "run")
    # on hybrid cgroup v1 the default crun refuses and runc is chosen; elsewhere the default
    assert iso["runtime"] in ("runc", "crun") and iso["startup"]["wall_ns"] > 1e6
    assert iso["startup"]["command"].split()[0].endswith("podman")
    assert iso["versions"]["podman"].startswith("podman version")
    assert iso["versions"][iso["runtime"]].startswith(iso["runtime"])


@needs_podman
def test_the_runtime_that_works_here_is_found_and_recorded():
    engine = containers.prepare_engine("podman", IMAGE)
    assert containers._engine_cmd(containers.trial_argv(engine, IMAGE)).returncode == 0
    default = subprocess.run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"],
                             capture_output=True, text=True).stdout.strip()
    # a forced runtime is named on every command; the default is not
    assert engine.runtime_forced == (engine.runtime != default)


@needs_podman
def test_the_runtime_choice_is_remembered_for_the_boot_and_checked_before_use(tmp_path,
                                                                             monkeypatch):
    from benchlab.control.container_choice import remembered_choice
    from benchlab.control.container_engines import ENGINE_KINDS

    files = ENGINE_KINDS["podman"].config_files
    monkeypatch.setenv("BENCHLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(containers, "_REGISTRY", containers._Registry())  # a fresh process
    chosen = containers.prepare_engine("podman", IMAGE)
    assert remembered_choice(chosen.path, None, files) == (chosen.runtime, chosen.runtime_forced,
                                                    chosen.cgroup_manager)
    asked = []
    real_info = containers._engine_info
    monkeypatch.setattr(containers, "_engine_info", lambda *a: asked.append(a) or real_info(*a))
    monkeypatch.setattr(containers, "_REGISTRY", containers._Registry())  # the next process
    assert containers.prepare_engine("podman", IMAGE) == chosen and asked == [], \
        "a remembered choice is used without asking the engine's info"
    # a choice that no longer runs (a runtime removed) is found again, not used
    (file,) = (tmp_path / "probes").glob("engine-*.json")
    file.write_text(json.dumps(["benchlab-no-such-runtime", True, chosen.cgroup_manager]))
    monkeypatch.setattr(containers, "_REGISTRY", containers._Registry())
    assert containers.prepare_engine("podman", IMAGE) == chosen and len(asked) == 1
    assert remembered_choice(chosen.path, None, files)[0] == chosen.runtime


@needs_podman
def test_bad_container_input_is_one_line_before_any_session(tmp_path):
    db = tmp_path / "bad.db"
    cases = [(("--isolation", "podman:localhost/benchlab-no-such-image:0"), ("does not exist",)),
             (("--isolation", "podman"), ("needs an image",)),
             (("--isolation", f"podman:{IMAGE},color=red"), ("runtime=NAME",))]
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        cases.append((("--isolation", f"docker:{IMAGE}"), ("docker",)))
    crun = subprocess.run(["podman", "--runtime", "crun", "run", "--rm", *containers.ULIMITS,
                           IMAGE, "true"], capture_output=True, text=True)
    if crun.returncode != 0:  # crun refuses this cgroup layout (hybrid v1) or is not installed
        cases.append((("--isolation", f"podman:{IMAGE},runtime=crun"), ("crun",)))
    for args, needles in cases:
        proc = run_cli("run", "--runs", "2", "-N", *args, "true", db=db)
        assert_one_line_error(proc, *needles)
    # an engine that is not installed: PATH without /usr/bin, where podman lives
    proc = run_cli("run", "--runs", "2", "-N", "--isolation", f"podman:{IMAGE}", "/bin/true",
                   db=db, env={"PATH": "/nonexistent"})
    assert_one_line_error(proc, "podman is not installed")
    assert not db.exists() or not Store.open(db).sessions()


def _start(db: Path, level: str) -> subprocess.Popen:
    return subprocess.Popen(
        [BENCHLAB, "run", "--runs", "50", "-w", "0", "-N", "--isolation", level,
         "/bin/sleep 20", "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_as_in_a_terminal)


def _session_started(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return bool(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:
        return False


def _wait_for_container(proc: subprocess.Popen, db: Path, program: str = "sleep 20",
                        timeout: float = 60) -> list[str]:
    """Containers of ``proc`` once its session exists and a run's ``program`` runs in one (the
    level's check before it also runs short containers: an empty ``true`` timed as the start-up
    cost; a fixed wait instead let the signal land while the run's ``exec`` was being set up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = subprocess.run(["podman", "ps", "--quiet", "--filter",
                                  f"label=benchlab.owner={proc.pid}"],
                                 capture_output=True, text=True).stdout.split()
        if running and _session_started(db) and any(
                program in subprocess.run(["podman", "top", cid, "args"], capture_output=True,
                                          text=True).stdout for cid in running):
            return running
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    raise AssertionError(f"no container started {program!r}")


@needs_podman
@pytest.mark.slow
@pytest.mark.parametrize("kind,signum", [("podman", signal.SIGINT),
                                         ("podman-exec", signal.SIGTERM)])
def test_no_container_is_left_after_ctrl_c_or_sigterm(tmp_path, kind, signum):
    proc = _start(tmp_path / "s.db", f"{kind}:{IMAGE}")
    _wait_for_container(proc, tmp_path / "s.db")
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert proc.returncode in (130, 143, 2), proc.stderr.read() if proc.stderr else ""
    assert owner_containers(proc.pid) == []
    assert _parents(proc.pid) == []
    sess, runs, _ = _runs(tmp_path / "s.db")
    assert sess["status"] == "interrupted"


@needs_podman
@pytest.mark.slow
def test_kill_9_leaves_a_container_that_the_next_start_removes(tmp_path):
    proc = _start(tmp_path / "k.db", f"podman:{IMAGE}")
    _wait_for_container(proc, tmp_path / "k.db")
    proc.kill()
    proc.wait(timeout=30)
    assert owner_containers(proc.pid), "kill -9 cannot clean up: the test needs the leftover"
    # the next benchlab start that uses an engine sweeps the dead owner's containers
    run_cli("run", "--runs", "2", "-w", "0", "-N", "--isolation", f"podman:{IMAGE}", "/bin/true",
            db=tmp_path / "k2.db", check=True)
    assert owner_containers(proc.pid) == []
    assert _parents(proc.pid) == []  # and its containers' cgroup parents


@needs_podman
@pytest.mark.slow
def test_a_study_killed_with_kill_9_resumes_and_leaves_no_container(tmp_path):
    suite = tmp_path / "s.toml"
    # 2 runs a cell: the kill lands in the first cell's first run, so the resume still has
    # runs of both container models left to do (3 only made the resume longer)
    suite.write_text(f'[study]\nruns = 2\nwarmup = 0\n[[workload]]\nname = "nap"\n'
                     f'command = "/bin/sleep 0.7"\n[matrix]\n'
                     f'isolation = ["podman-exec:{IMAGE}", "podman:{IMAGE}"]\n')
    db = tmp_path / "study.db"
    proc = subprocess.Popen([BENCHLAB, "study", str(suite), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for_container(proc, db, "sleep 0.7")
    proc.kill()
    proc.wait(timeout=30)
    assert owner_containers(proc.pid)
    study = [s for s in Store.open(db).sessions() if s["kind"] == "study"][0]
    run_cli("study", "run", "--resume", study["uid"], db=db, check=True, timeout=300)
    # the resume swept the dead owner's containers, and removed its own at exit
    assert owner_containers(proc.pid) == []
    assert Store.open(db).get_session(study["uid"])["status"] == "complete"


@needs_podman
@pytest.mark.slow
@pytest.mark.parametrize("kind,spawn", [("podman", "helper"), ("podman-exec", "helper"),
                                        ("podman-exec", "python")])
def test_a_timed_out_run_does_not_keep_running_in_its_container(tmp_path, kind, spawn):
    """Killing the engine's client on a timeout leaves the program running in the container;
    benchlab stops it, so at most one run's program is alive at a time (2 runs: a first
    run's program left running would be seen beside the second's). The program ignores
    SIGTERM and forks a sleeping child. ``BENCHLAB_SPAWN=python`` (no C compiler) has no
    subreaper exec helper to inherit and kill the exec session's orphans: there only
    benchlab's own stop, from the host, ends the program (the image has no ``kill``)."""
    marker = f"sleep 4{os.getpid() % 10000:04d}{spawn == 'python':d}"
    exact = [f"{marker}1", f"{marker}2"]  # the two sleeps, not the client or sh
    env = {**os.environ, "BENCHLAB_SPAWN": spawn} if spawn == "python" else None
    proc = subprocess.Popen(
        [BENCHLAB, "run", "--runs", "2", "-w", "0", "-N", "-i", "--timeout", "2",
         "--isolation", f"{kind}:{IMAGE}", f"sh -c \"trap '' TERM; {exact[0]} & {exact[1]}\"",
         "--db", str(tmp_path / "t.db")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    most = 0
    while proc.poll() is None:
        alive = [pid for m in exact for pid in subprocess.run(
            ["pgrep", "-xf", m], capture_output=True, text=True).stdout.split()]
        most = max(most, len(alive))
        time.sleep(0.2)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert 1 <= most <= 2, most
    _, runs, _ = _runs(tmp_path / "t.db")
    assert [r["status"] for r in runs] == ["timeout"] * 2
    assert not any(_marked(m) for m in exact)


@needs_podman
def test_each_worker_execs_into_its_own_container():
    from benchlab.measure.isolation import parse_isolation

    iso = parse_isolation(f"podman-exec:{IMAGE}").check()
    try:
        first, second = (iso.wrap(["true"], worker=w) for w in (0, 1))
        name = first.index("exec") + 1
        assert first[name] != second[name]  # a killed run's cleanup cannot hit the other worker
        assert iso.wrap(["true"], worker=0)[name] == first[name]  # reused
        assert subprocess.run(first, capture_output=True).returncode == 0
        # its init (sleep) ignores SIGTERM: without SIGKILL as its stop signal every removal
        # waited the engine's 10 s stop timeout
        stop = subprocess.run(["podman", "inspect", "--format", "{{.Config.StopSignal}}",
                               first[name]], capture_output=True, text=True).stdout.strip()
        assert stop == str(int(signal.SIGKILL)), f"stop signal {stop!r}, not SIGKILL"
    finally:
        containers.remove_own_containers()
    assert owner_containers(os.getpid()) == []


def _marked(marker: str) -> list[str]:
    """Host processes whose command line holds ``marker`` (``pgrep -f``)."""
    return subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()


def _exec_monitors(container: str) -> list[str]:
    """Host pids of the conmon processes of ``container``'s exec sessions."""
    cid = subprocess.run(["podman", "inspect", "--format", "{{.Id}}", container],
                         capture_output=True, text=True).stdout.strip()
    lines = subprocess.run(["pgrep", "-af", "conmon"], capture_output=True,
                           text=True).stdout.splitlines()
    return [ln.split()[0] for ln in lines if cid and cid in ln and "--exec-attach" in ln]


@needs_podman
def test_a_timed_out_exec_run_is_killed_from_outside_an_image_without_kill(monkeypatch):
    """The busybox test image has no ``kill`` (its applets: sh, true, false, echo, cat, sleep,
    ls), like a distroless one. A program that ignores SIGTERM and forks a sleeping child is
    exec'd into the worker's container; its engine client is SIGKILLed as the harness does on a
    timeout. This test process is the harness here, not the exec helper: the helper is a
    subreaper, inherits the exec session's conmon and kills what it orphans, which hid that
    benchlab's own stop (``exec ... kill -KILL -1``) failed with 127. After ``after_run``
    nothing of the program is left, and the worker's container still serves the next run.
    Where the container's cgroup cannot be used (patched to be not found, as for a rootless
    engine), the container is removed instead and the next run gets a new one."""
    from benchlab.measure.isolation import parse_isolation

    marker = f"sleep 3{os.getpid() % 100000:05d}"
    sleeps = [f"{marker}1", f"{marker}2"]  # the program's processes (sh execs into the second)

    def alive() -> list[str]:
        return [pid for m in sleeps for pid in subprocess.run(
            ["pgrep", "-xf", m], capture_output=True, text=True).stdout.split()]

    def start_and_time_out(iso) -> str:
        """Start the program, kill its engine client as on a timeout; its container's name."""
        argv = iso.wrap(["sh", "-c", f"trap '' TERM; {sleeps[0]} & {sleeps[1]}"], worker=0)
        client = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(alive()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(client.pid, signal.SIGKILL)
        client.wait()
        time.sleep(0.2)
        assert len(alive()) == 2, "the engine's client took the program with it"
        iso.after_run(0, "timeout")
        assert alive() == [] and _marked(marker) == []
        container = argv[argv.index("exec") + 1]
        # the exec session's monitor (conmon) ends once its program has died
        deadline = time.monotonic() + 10
        while _exec_monitors(container) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _exec_monitors(container) == []
        return container

    iso = parse_isolation(f"podman-exec:{IMAGE}").check()
    try:
        container = start_and_time_out(iso)
        assert subprocess.run(["podman", "exec", container, "kill", "-0", "1"],
                              capture_output=True).returncode == 127, "the image has a kill"
        top = subprocess.run(["podman", "top", container, "args"], capture_output=True,
                             text=True).stdout.splitlines()[1:]
        if containers._REGISTRY.with_init.get(container):  # the engine's init reaps: no zombie
            assert all("sleep 2147483647" in line for line in top), top
        assert iso.wrap(["true"], worker=0)[-2] == container  # kept: the next run's
        # the same through the unified hierarchy's cgroup.freeze (a cgroup v2 machine's way;
        # on this hybrid one the v1 freezer is chosen first)
        from benchlab.control import container_cgroups

        unified = []

        def through_v2(pid):
            (rel,) = [ln[4:] for ln in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
                      if ln.startswith("0::/")]
            unified.append(Path("/sys/fs/cgroup/unified") / rel)
            return unified[-1], "v2"

        if Path("/sys/fs/cgroup/unified/cgroup.procs").exists():
            monkeypatch.setattr(container_cgroups, "container_cgroup", through_v2)
            assert start_and_time_out(iso) == container and unified
            assert "frozen 0" in (unified[-1] / "cgroup.events").read_text()  # thawed
            assert iso.wrap(["true"], worker=0)[-2] == container  # killed, not removed
        # where the container's cgroup cannot be used (a rootless engine), the container goes
        monkeypatch.setattr(container_cgroups, "container_cgroup", lambda pid: None)
        assert start_and_time_out(iso) == container
        assert container not in subprocess.run(["podman", "ps", "--all", "--format",
                                                "{{.Names}}"], capture_output=True,
                                               text=True).stdout.split()
        fresh = iso.wrap(["true"], worker=0)
        assert fresh[-2] != container and subprocess.run(fresh).returncode == 0
    finally:
        containers.remove_own_containers()
    assert _marked(marker) == [] and owner_containers(os.getpid()) == []


def test_a_forced_runtime_goes_where_each_engine_reads_it():
    """No docker daemon runs here: the argv is checked as text (podman's --runtime is a global
    option, docker's belongs to run)."""
    docker = containers.Engine("docker", "/usr/bin/docker", "runc", True)
    podman = containers.Engine("podman", "/usr/bin/podman", "runc", True)
    d = containers.run_argv(docker, "img", ["prog"], cpus=(1,), binds=["/opt/x"], name="n")
    p = containers.run_argv(podman, "img", ["prog"])
    assert d[:4] == ["/usr/bin/docker", "run", "--runtime", "runc"]
    assert p[:4] == ["/usr/bin/podman", "--runtime", "runc", "run"]
    assert d[-2:] == ["img", "prog"] and "--cpuset-cpus" in d and "/opt/x:/opt/x:ro" in d
    default = containers.Engine("podman", "/usr/bin/podman", "crun", False)
    assert containers.trial_argv(default, "img")[:2] == ["/usr/bin/podman", "run"]
