"""Container engines (podman, docker) as an isolation mechanism: detection, runtime choice,
the argv of a run, long-lived per-worker containers, and the sweep of containers left behind.

Every container benchlab starts carries the label ``benchlab.owner=PID`` (the harness's pid):
at exit this process removes its own (``atexit``, which Ctrl-C and SIGTERM reach), and the next
start of any benchlab process removes those of owners that are gone (``kill -9``):
:func:`sweep_dead_owners`.

The OCI runtime is chosen automatically: the engine's default first, then ``runc``. Debian's
podman defaults to ``crun``, which refuses a hybrid cgroup v1 layout ("cgroups in hybrid mode not
supported"); ``runc`` runs there when the ulimits are explicit (:data:`ULIMITS`). The runtime in
use is recorded with the run's setup.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import uuid
from dataclasses import dataclass, field

from benchlab.control.container_choice import remember_choice, remembered_choice
from benchlab.control.container_engines import ENGINE_KINDS
from benchlab.errors import UserError
from benchlab.processes import pid_alive

OWNER_LABEL = "benchlab.owner"
#: Without explicit limits runc cannot copy this host's rlimits into the container here
#: ("error setting rlimit type 7: operation not permitted").
ULIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000")
#: Directories never bind-mounted into a container: the image's own system directories.
SYSTEM_DIRS = ("/bin", "/sbin", "/usr", "/lib", "/lib64", "/etc", "/proc", "/dev", "/sys")
#: Seconds an engine command may take before benchlab calls the engine hung.
ENGINE_TIMEOUT_S = 60.0


@dataclass
class Engine:
    """A usable container engine: its executable and the OCI runtime that works here."""

    name: str
    path: str
    runtime: str
    runtime_forced: bool  # True when benchlab passes --runtime (the default refused)
    cgroup_manager: str = "unknown"  # cgroupfs: containers go under a parent per worker

    def base(self) -> list[str]:
        """The engine's argv prefix (podman's ``--runtime`` is global, when it is forced)."""
        if self.runtime_forced and ENGINE_KINDS[self.name].runtime_option_is_global:
            return [self.path, "--runtime", self.runtime]
        return [self.path]

    def run_flags(self) -> list[str]:
        """Options of ``run`` (docker's ``--runtime`` belongs to ``run``, when it is forced)."""
        return (["--runtime", self.runtime] if self.runtime_forced
                and not ENGINE_KINDS[self.name].runtime_option_is_global else [])


@dataclass
class _Registry:
    """The containers this process started, removed at exit."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    engines: dict[tuple, Engine] = field(default_factory=dict)
    workers: dict[tuple, str] = field(default_factory=dict)
    used: dict[str, str] = field(default_factory=dict)  # engine path -> engine name
    with_init: dict[str, bool] = field(default_factory=dict)  # worker container -> --init
    atexit_set: bool = False


_REGISTRY = _Registry()


def _engine_cmd(argv: list[str], timeout: float = ENGINE_TIMEOUT_S) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"{' '.join(argv[:3])} ... did not answer in {timeout:.0f} s; check the "
                        "container engine") from None


def _first_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "rror" in ln]
    return (errors or lines or ["no message"])[-1][:240]


def tool_version(tool: str) -> str | None:
    """First line of ``TOOL --version`` (e.g. ``runc version 1.1.5+ds1``), or None when the
    tool is missing or does not say: recorded with a level so a result names what ran it."""
    path = shutil.which(tool)
    if path is None:
        return None
    try:
        proc = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip()[:120] if proc.returncode == 0 and lines else None


def engine_path(name: str) -> str:
    """Path of engine ``name``; UserError (one line) when it is unknown or not installed."""
    if name not in ENGINE_KINDS:
        raise UserError(f"container engine {name!r} is unknown; use {' or '.join(ENGINE_KINDS)}")
    path = shutil.which(name)
    if path is None:
        raise UserError(f"{name} is not installed here; install it (apt-get install {name}) or "
                        "choose another --isolation")
    return path


def image_exists(path: str, image: str) -> bool:
    """True when ``image`` is present locally (benchlab never pulls from a registry)."""
    return _engine_cmd([path, "image", "inspect", "--format", "{{.Id}}", image]).returncode == 0


def trial_argv(engine: Engine, image: str) -> list[str]:
    """The argv of an empty run (``true``) in a fresh container: the engine's start-up cost."""
    return [*engine.base(), "run", *engine.run_flags(), "--rm", "--pull=never", "--label",
            f"{OWNER_LABEL}={os.getpid()}", "--network=none", *ULIMITS, image, "true"]


def prepare_engine(name: str, image: str, runtime: str | None = None) -> Engine:
    """Check engine ``name`` can run ``image`` here and choose its OCI runtime.

    ``runtime`` forces one (no fallback). Otherwise the engine's default is tried, then
    ``runc``. Sweeps dead owners' containers first. Raises UserError, one line, for an engine
    that is not installed, a docker without a daemon, a missing image, or a runtime that
    refuses (e.g. ``crun`` on hybrid cgroups). Cached per process; the choice is remembered
    for this boot (:mod:`benchlab.control.container_choice`) and only used after an empty run with it works.
    """
    key = (name, image, runtime)
    with _REGISTRY.lock:
        if key in _REGISTRY.engines:
            return _REGISTRY.engines[key]
    path = engine_path(name)
    files = ENGINE_KINDS[name].config_files
    remembered = remembered_choice(path, runtime, files)
    info = None if remembered else _engine_info(name, path)
    sweep_dead_owners(name)
    from benchlab.control.container_cgroups import sweep_dead_parents

    sweep_dead_parents()
    if not image_exists(path, image):
        if info is None:
            _engine_info(name, path)  # an engine that does not answer says so, not "no image"
        raise UserError(f"{name} image {image!r} does not exist here (benchlab never pulls); "
                        f"build or import it first, e.g. {name} import rootfs.tar {image}")
    if remembered:
        engine = Engine(name, path, *remembered)
        if _engine_cmd(trial_argv(engine, image)).returncode == 0:
            return _chosen(key, engine)
        info = _engine_info(name, path)  # what changed is found again
    default, _, manager = info.partition(" ")
    default, manager = default or "default", manager.strip() or "unknown"
    candidates = [(runtime, True)] if runtime else [(default, False)]
    if not runtime and default != "runc" and shutil.which("runc"):
        candidates.append(("runc", True))
    refusals = []
    for rt, forced in candidates:
        engine = Engine(name, path, rt, forced, manager)
        proc = _engine_cmd(trial_argv(engine, image))
        if proc.returncode == 0:
            remember_choice(path, runtime, (rt, forced, manager), files)
            return _chosen(key, engine)
        refusals.append(f"{rt}: {_first_error_line(proc.stderr)}")
    raise UserError(f"{name} cannot run {image!r} here ({'; '.join(refusals)}); "
                    + ("try another runtime (,runtime=runc)" if runtime else
                       "install runc or fix the engine"))


def _engine_info(name: str, path: str) -> str:
    """The engine's default OCI runtime and cgroup manager (``"crun cgroupfs"``); UserError
    when the engine does not answer."""
    info = _engine_cmd([path, "info", "--format", ENGINE_KINDS[name].info_format])
    if info.returncode != 0:
        raise UserError(f"{name} does not answer ({_first_error_line(info.stderr)}); start its "
                        "daemon or choose another --isolation")
    return info.stdout.strip()


def _chosen(key: tuple, engine: Engine) -> Engine:
    with _REGISTRY.lock:
        _REGISTRY.engines[key] = engine
    return engine


def bind_dirs(argv: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """Host directories to bind read-only at the same path: the program's own directory (when it
    is an absolute path outside the image's system directories) and ``extra``."""
    dirs = []
    if argv and os.path.isabs(argv[0]) and os.path.exists(argv[0]):
        d = os.path.dirname(os.path.realpath(argv[0]))
        if not any(d == s or d.startswith(s + "/") for s in SYSTEM_DIRS):
            dirs.append(d)
    for d in extra:
        if os.path.isdir(d) and d not in dirs:
            dirs.append(d)
    return dirs


def _options(engine: Engine, worker: int, cpus: tuple[int, ...] | None,
             binds: list[str]) -> list[str]:
    # A program that is its container's init (a worker's ``sleep``, a run's program) ignores
    # the default SIGTERM, so ``rm --force`` waited the engine's 10 s stop timeout before its
    # SIGKILL at every removal; nothing in a benchlab container needs a graceful stop.
    out = ["--pull=never", "--label", f"{OWNER_LABEL}={os.getpid()}", "--network=none",
           "--stop-signal=KILL", *ULIMITS]
    if engine.cgroup_manager == "cgroupfs":
        from benchlab.control.container_cgroups import cgroup_parent

        out += ["--cgroup-parent", cgroup_parent(worker)]
    if cpus:
        out += ["--cpuset-cpus", ",".join(map(str, cpus))]
    for d in binds:
        out += ["--volume", f"{d}:{d}:ro"]
    return out


def run_name() -> str:
    """A fresh name for one run's container (its owner's pid in it, as in the label)."""
    return f"benchlab-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def run_argv(engine: Engine, image: str, argv: list[str], *, cpus: tuple[int, ...] | None = None,
             env: dict[str, str] | None = None, binds: list[str] | None = None,
             name: str | None = None, worker: int = 0) -> list[str]:
    """The argv that runs ``argv`` in a fresh container removed at its end (``run --rm``)."""
    env_args = [a for k, v in (env or {}).items() for a in ("--env", f"{k}={v}")]
    named = ["--name", name] if name else []
    return [*engine.base(), "run", *engine.run_flags(), "--rm", *named,
            *_options(engine, worker, cpus, binds or []), *env_args, image, *argv]


def end_killed_run(engine: Engine, container: str, *, exec_mode: bool) -> None:
    """After a run the harness killed (timeout, signal): killing the engine's client leaves the
    program running in the container; stop it so it does not load the next runs. A per-run
    container is removed. In a worker's container every process but its init (and the worker's
    ``sleep``) is SIGKILLed from the host through the container's cgroup
    (:func:`benchlab.control.container_cgroups.kill_exec_programs`): ``exec ... kill -KILL -1``
    needed a ``kill`` in the image (the busybox test image has none, a distroless one neither)
    and the engine's ``kill`` signals only the init, which would end the container. Where the
    cgroup cannot be used or emptied, the container is removed; the next run starts a new one."""
    if exec_mode:
        from benchlab.control.container_cgroups import kill_exec_programs

        proc = _engine_cmd([engine.path, "inspect", "--format", "{{.State.Pid}}", container])
        init = int(proc.stdout.strip()) if proc.stdout.strip().isdigit() else 0
        if init > 0 and kill_exec_programs(init, with_init=_REGISTRY.with_init.get(container,
                                                                                   False)):
            return
    _remove(engine.path, [container])
    with _REGISTRY.lock:
        for key in [k for k, name in _REGISTRY.workers.items() if name == container]:
            del _REGISTRY.workers[key]


def worker_container(engine: Engine, image: str, *, worker: int, cpus: tuple[int, ...] | None,
                     binds: list[str]) -> str:
    """Name of a long-lived container (``sleep``ing) for worker ``worker``'s ``exec`` runs (each
    worker its own: runs of two workers never share one), started on first use and reused while
    this process lives; UserError when it cannot start."""
    key = (engine.name, engine.runtime, image, worker, cpus, tuple(binds))
    with _REGISTRY.lock:
        name = _REGISTRY.workers.get(key)
        if name is not None:
            return name
        name = f"benchlab-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        _remember(engine, name)
        # --init: the engine's own init (podman's catatonit, docker's tini, from the host) is
        # the container's pid 1 and reaps what a killed run orphans; the worker's ``sleep``
        # would leave them zombies. Without that init on the host, ``sleep`` is pid 1.
        for init in (["--init"], []):
            proc = _engine_cmd([*engine.base(), "run", *engine.run_flags(), "--detach", "--name",
                                name, *init, *_options(engine, worker, cpus, binds), image,
                                "sleep", "2147483647"])
            if proc.returncode == 0:
                break
            _remove(engine.path, [name])  # a container created before its init was missed
        if proc.returncode != 0:
            raise UserError(f"{engine.name} cannot start a worker container from {image!r} "
                            f"({_first_error_line(proc.stderr)}); the image needs a sleep command")
        _REGISTRY.with_init[name] = bool(init)
        _REGISTRY.workers[key] = name
        return name


def exec_argv(engine: Engine, container: str, argv: list[str],
              env: dict[str, str] | None = None) -> list[str]:
    """The argv that runs ``argv`` inside the running ``container``."""
    env_args = [a for k, v in (env or {}).items() for a in ("--env", f"{k}={v}")]
    return [engine.path, "exec", *env_args, container, *argv]


def _remember(engine: Engine, name: str) -> None:
    _REGISTRY.used[engine.path] = engine.name
    if not _REGISTRY.atexit_set:
        atexit.register(remove_own_containers)
        _REGISTRY.atexit_set = True


def note_engine_used(engine: Engine) -> None:
    """Make sure this process's containers of ``engine`` are removed at its exit."""
    with _REGISTRY.lock:
        _remember(engine, "")


def owned_containers(name: str, path: str, owner: int | None = None) -> list[tuple[str, int]]:
    """(container id, owner pid) of benchlab's containers known to engine ``name`` (its
    executable at ``path``); only those of ``owner`` when given."""
    label = OWNER_LABEL if owner is None else f"{OWNER_LABEL}={owner}"
    field = ENGINE_KINDS[name].owner_label_field.format(label=OWNER_LABEL)
    proc = _engine_cmd([path, "ps", "--all", "--filter", f"label={label}", "--format",
                        f"{{{{.ID}}}} {{{{{field}}}}}"])
    out = []
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        cid, _, pid = line.partition(" ")
        if pid.strip().isdigit():
            out.append((cid, int(pid)))
    return out


def _remove(path: str, ids: list[str]) -> None:
    if ids:
        _engine_cmd([path, "rm", "--force", *ids])


def sweep_dead_owners(name: str) -> list[str]:
    """Remove containers whose benchlab owner process is gone (it was killed with SIGKILL);
    return their ids. A no-op when the engine is not installed or does not answer."""
    path = shutil.which(name)
    if path is None:
        return []
    dead = [cid for cid, pid in owned_containers(name, path) if pid != os.getpid() and not pid_alive(pid)]
    _remove(path, dead)
    return dead


def remove_own_containers() -> None:
    """Remove every container this process started (run at exit; safe to call twice)."""
    with _REGISTRY.lock:
        engines = sorted(_REGISTRY.used.items())
        _REGISTRY.workers.clear()
        _REGISTRY.with_init.clear()
    for path, name in engines:
        try:
            _remove(path, [cid for cid, _ in owned_containers(name, path, os.getpid())])
        except (UserError, OSError):
            pass  # at exit: the next start's sweep removes what is left
    if engines:
        from benchlab.control.container_cgroups import remove_own_parents

        remove_own_parents()  # after the containers: a parent holding one cannot go


#: The local image benchlab builds for its built-in isolation suite and tests (no registry).
BUSYBOX_IMAGE = "localhost/benchlab-busybox:1"
BUSYBOX_APPLETS = ("sh", "true", "false", "echo", "cat", "sleep", "ls")


def ensure_busybox_image(name: str = "podman", image: str = BUSYBOX_IMAGE) -> str:
    """A minimal local image: a busybox-static rootfs packed with tar and loaded with
    ``import`` (built on first use, reused after); return its name. Static programs (the bundled
    workloads built with ``static=True``) run in it through a bind mount.

    Raises UserError when the engine or busybox-static is not installed, or the import fails.
    """
    path = engine_path(name)
    busybox = shutil.which("busybox")
    if busybox is None:
        raise UserError("busybox is not installed here; apt-get install busybox-static (the "
                        "local image's only program)")
    if image_exists(path, image):
        return image
    with tempfile.TemporaryDirectory(prefix=f"benchlab-rootfs-p{os.getpid()}-") as tmp:
        root = os.path.join(tmp, "root")
        for d in ("bin", "tmp", "proc", "dev", "sys"):
            os.makedirs(os.path.join(root, d))
        shutil.copy2(busybox, os.path.join(root, "bin", "busybox"))
        for applet in BUSYBOX_APPLETS:
            os.symlink("busybox", os.path.join(root, "bin", applet))
        archive = os.path.join(tmp, "rootfs.tar")
        with tarfile.open(archive, "w") as tar:
            tar.add(root, arcname=".")
        proc = _engine_cmd([path, "import", archive, image])
    if proc.returncode != 0:
        raise UserError(f"{name} import of a busybox rootfs failed "
                        f"({_first_error_line(proc.stderr)}); check the engine")
    return image
