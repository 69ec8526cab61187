"""Isolation levels: ``--isolation bare | cgroup | bwrap | firejail | isolate | podman:IMAGE |
podman-exec:IMAGE | docker:IMAGE | docker-exec:IMAGE | wrap:TEMPLATE``.

- ``bare`` runs the program directly; ``cgroup`` in a fresh benchlab cgroup per run (limits from
  ``--cpu-quota`` etc., or none, always with cgroup CPU and memory accounting).
- **Sandboxes** (the grading platform's isolate-like level), one per run, each a module of
  :mod:`benchlab.measure.sandboxes` (its registry): ``bwrap`` (bubblewrap: read-only root, fresh
  /dev and /proc, private /tmp, /var/tmp and /dev/shm, new PID (the program is its init), IPC,
  UTS and network namespaces, killed with its parent); ``firejail`` (no profile, no network,
  all capabilities dropped, seccomp, no new privileges, private /tmp, /var/tmp and /dev/shm);
  ``isolate`` (IOI's sandbox, box = the worker's number; its meta file is read as the
  isolator's own view of the run).
- **Containers**, two kinds per engine of
  :data:`benchlab.control.container_engines.ENGINE_KINDS`: ``podman:IMAGE`` / ``docker:IMAGE``
  run every run in a fresh container (``run --rm``, the platform's model); ``podman-exec:IMAGE`` / ``docker-exec:IMAGE`` ``exec``
  into one long-lived container per worker. ``,runtime=NAME`` after the image forces the OCI
  runtime (otherwise chosen by :func:`benchlab.control.containers.prepare_engine`). The program's
  directory is bind-mounted read-only at the same path, so a static binary (the bundled
  workloads in a container study) runs inside any image; affinity becomes ``--cpuset-cpus``.
- ``wrap:TEMPLATE`` hands the program to any other isolator: ``{cmd}`` stands for the program's
  argv and ``{meta}`` for a meta-file path, e.g. ``wrap:isolate --meta={meta} --run -- {cmd}``.

:meth:`Isolation.check` validates a level on this machine before a session starts (one-line
UserError: a tool that is not installed, an image that does not exist, a runtime that refuses)
and measures its start-up cost: the median wall time of an empty ``true`` run through it,
stored with the setup (``startup``), the offset the level adds to every run's wall time.

The isolate meta file (``key:value`` lines; keys of isolate(1): time, time-wall, max-rss,
csw-voluntary, csw-forced, cg-mem, exitcode, exitsig, killed, cg-oom-killed, status, message)
is parsed by :func:`parse_isolate_meta` into measurements of source ``isolate``.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import field
from typing import Any

from benchlab.errors import UserError
from benchlab.records import record

# The registries of sandboxes and container engines are imported by the functions that read
# them: a bare run (the usual one) parses its level without either.


def container_kinds() -> tuple[str, ...]:
    """The container ``--isolation`` kinds: each registered engine
    (:data:`benchlab.control.container_engines.ENGINE_KINDS`), fresh and ``-exec``."""
    from benchlab.control.container_engines import ENGINE_KINDS

    return tuple(k for engine in ENGINE_KINDS for k in (engine, f"{engine}-exec"))


def levels() -> tuple[str, ...]:
    """Every spelling ``--isolation`` accepts (IMAGE and TEMPLATE stand for the user's text):
    bare, cgroup, the registered sandboxes and container engines, wrap."""
    from benchlab.measure.sandboxes import SANDBOXES

    return ("bare", "cgroup", *SANDBOXES, *(f"{k}:IMAGE" for k in container_kinds()),
            "wrap:TEMPLATE")


#: The pids limit of ``--isolation cgroup`` when ``--pids-max`` is not given (where the pids
#: controller exists): processes and threads a run may hold at once.
CGROUP_PIDS_MAX = 4096
#: Runs of ``true`` whose median is a level's start-up cost.
STARTUP_RUNS = 5

#: isolate meta keys stored, with their unit and the factor to the store's unit.
ISOLATE_FIELDS: dict[str, tuple[str, float]] = {
    "time": ("ns", 1e9),
    "time-wall": ("ns", 1e9),
    "max-rss": ("KiB", 1.0),
    "cg-mem": ("KiB", 1.0),
    "csw-voluntary": ("count", 1.0),
    "csw-forced": ("count", 1.0),
    "exitcode": ("code", 1.0),
    "exitsig": ("signal", 1.0),
    "killed": ("flag", 1.0),
    "cg-oom-killed": ("flag", 1.0),
}

_STARTUP_CACHE: dict[str, dict[str, Any]] = {}


@record  # made once a session: no methods compiled at import (benchlab.records)
class Isolation:
    """A parsed ``--isolation`` value; :meth:`check` fills the container runtime and the
    measured start-up cost."""

    mode: str  # bare | cgroup | wrap | sandbox | container
    template: str | None = None
    tool: str | None = None  # bwrap, firejail, isolate, podman, docker
    image: str | None = None
    per_run: bool = True  # container: a fresh container per run (else exec into one per worker)
    runtime: str | None = None  # container: the OCI runtime asked for, then the one in use
    startup: dict[str, Any] | None = None
    runtime_forced: bool = False  # container: the user named the runtime (no fallback)
    versions: dict[str, str | None] | None = None  # filled by check(): the tools that ran it
    #: container: the container each worker's last run used (to stop a killed run's program)
    last_container: dict[int, str] = field(default_factory=dict, repr=False, compare=False)
    #: container: each worker's container CPU counter (ns) when its last run started
    cpu_before: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The ``--isolation`` spelling of this level."""
        if self.mode in ("bare", "cgroup"):
            return self.mode
        if self.mode == "wrap":
            return f"wrap:{self.template}"
        if self.mode == "sandbox":
            return str(self.tool)
        kind = self.tool if self.per_run else f"{self.tool}-exec"
        return f"{kind}:{self.image}"

    def to_dict(self) -> dict:
        """Plain-data form for the stored setup."""
        out: dict[str, Any] = {"mode": self.mode, "template": self.template}
        if self.mode in ("sandbox", "container"):
            out.update(tool=self.tool, level=self.text, startup=self.startup,
                       versions=self.versions)
        if self.mode == "container":
            out.update(image=self.image, runtime=self.runtime,
                       model="run" if self.per_run else "exec")
        return out

    @property
    def wants_meta(self) -> bool:
        """True when the isolator writes a meta file (a sandbox that says so, or a template
        with ``{meta}``)."""
        if self.mode == "sandbox":
            from benchlab.measure.sandboxes import sandbox

            return sandbox(str(self.tool)).writes_meta
        return bool(self.template and "{meta}" in self.template)

    def wrap(self, argv: list[str], meta_path: str | None = None, *, worker: int = 0,
             cpus: tuple[int, ...] | list[int] | None = None,
             env: dict[str, str] | None = None, keep: tuple[str, ...] = ()) -> list[str]:
        """The argv that runs ``argv`` under this level (unchanged for bare and cgroup).

        ``worker`` picks isolate's box and the exec container; ``cpus`` becomes a container's
        ``--cpuset-cpus``; ``env`` is passed into containers (the host's is not). ``keep``:
        directories the run needs at their own paths, writable, inside a sandbox's private
        /tmp (the run's working directory, the session's scratch directory): bound into it
        (:func:`benchlab.measure.sandboxes.kept_dirs`), and nothing else of the host's /tmp.
        """
        if self.mode in ("bare", "cgroup"):
            return list(argv)
        if self.mode == "wrap":
            return _fill_template(str(self.template), argv, meta_path)
        if self.mode == "sandbox":
            from benchlab.measure.sandboxes import sandbox

            return sandbox(str(self.tool)).argv(list(argv), worker=worker, meta_path=meta_path,
                                                keep=keep)
        return self._container_argv(argv, worker=worker, cpus=tuple(cpus) if cpus else None,
                                    env=env)

    def _container_argv(self, argv: list[str], *, worker: int, cpus: tuple[int, ...] | None,
                        env: dict[str, str] | None) -> list[str]:
        from benchlab.control import containers
        from benchlab.measure.build import cache_dir

        engine = containers.prepare_engine(str(self.tool), str(self.image), self._forced_runtime)
        containers.note_engine_used(engine)
        binds = containers.bind_dirs(argv, (str(cache_dir()),))
        # The host's environment stays outside; benchlab's own variables go in.
        env = {k: v for k, v in (env or {}).items() if k.startswith("BENCHLAB_")}
        if self.per_run:
            name = containers.run_name()
            out = containers.run_argv(engine, str(self.image), argv, cpus=cpus, env=env,
                                      binds=binds, name=name, worker=worker)
        else:
            name = containers.worker_container(engine, str(self.image), worker=worker, cpus=cpus,
                                               binds=binds)
            out = containers.exec_argv(engine, name, argv, env=env)
        self.last_container[worker] = name
        if engine.cgroup_manager == "cgroupfs":
            from benchlab.control.container_cgroups import cpu_ns

            self.cpu_before[worker] = cpu_ns(worker, self._engine_monitor) or 0  # no parent yet: nothing charged
        return out

    def after_run(self, worker: int, status: str) -> list[dict]:
        """Called after each run; returns measurements of the run.

        In a container: the engine's own view of the run's CPU time (source ``container``,
        ``cpu_ns``: see :mod:`benchlab.control.container_cgroups`; the harness's rusage is the
        engine client's), and a run the harness killed (``timeout``, ``signaled``) is stopped
        inside the container (:func:`benchlab.control.containers.end_killed_run`). Nothing for
        other levels: a sandbox dies with its process group.
        """
        if self.mode != "container" or worker not in self.last_container:
            return []
        rows = []
        if worker in self.cpu_before:
            from benchlab.control.container_cgroups import cpu_ns

            after = cpu_ns(worker, self._engine_monitor)
            if after is not None and status == "ok":
                rows.append({"source": "container", "name": "cpu_ns", "unit": "ns",
                             "value": float(after - self.cpu_before.pop(worker)),
                             "status": "ok", "note": "the container's cgroup CPU time"})
        if status in ("timeout", "signaled"):
            from benchlab.control import containers

            engine = containers.prepare_engine(str(self.tool), str(self.image),
                                               self._forced_runtime)
            containers.end_killed_run(engine, self.last_container[worker],
                                      exec_mode=not self.per_run)
        return rows

    @property
    def _engine_monitor(self) -> str | None:
        """The container engine's monitor sub-cgroup (not the container's CPU time)."""
        from benchlab.control.container_engines import ENGINE_KINDS

        return ENGINE_KINDS[str(self.tool)].monitor_cgroup

    @property
    def _forced_runtime(self) -> str | None:
        return self.runtime if self.mode == "container" and self.runtime_forced else None

    def check(self) -> "Isolation":
        """Validate this level here and measure its start-up cost (cached per process).

        Raises UserError (one line) for a sandbox or engine that is not installed, a docker
        without a daemon, an image that does not exist, a runtime that refuses, or a sandbox
        that cannot run ``true``. Returns self.
        """
        if self.mode == "wrap":
            from benchlab.measure.isolation_names import check_wrapper
            check_wrapper(str(self.template))
        if self.mode in ("bare", "cgroup", "wrap"):
            return self
        if self.mode == "sandbox":
            from benchlab.measure.sandboxes import sandbox

            chosen = sandbox(str(self.tool))
            if shutil.which(chosen.name) is None:
                raise UserError(chosen.missing)
            chosen.prepare()
        else:
            from benchlab.control import containers

            engine = containers.prepare_engine(str(self.tool), str(self.image),
                                               self._forced_runtime)
            self.runtime = engine.runtime
        from benchlab.control.containers import tool_version

        tools = [str(self.tool)] + ([str(self.runtime)] if self.mode == "container" else [])
        self.versions = {t: tool_version(t) for t in tools}
        cached = _STARTUP_CACHE.get(self.text + str(self.runtime))
        self.startup = cached or self._measure_startup()
        _STARTUP_CACHE[self.text + str(self.runtime)] = self.startup
        return self

    def startup_measurements(self) -> list[dict]:
        """The level's start-up cost as measurements of a run (source ``isolation``, ns), so
        each run carries the offset its isolation adds; none for bare, cgroup and wrap."""
        if not self.startup:
            return []
        return [{"source": "isolation", "name": f"startup_{k.removesuffix('_ns')}",
                 "value": float(self.startup[k]), "unit": "ns", "status": "ok",
                 "note": self.text} for k in ("wall_ns", "cpu_ns")]

    def _measure_startup(self, runs: int = STARTUP_RUNS) -> dict[str, Any]:
        """Median cost (ns) of an empty ``true`` through this level, from the exec helper."""
        from benchlab.measure.spawn import SpawnRequest, spawn_measured

        walls, cpus = [], []
        for _ in range(runs):
            m = spawn_measured(SpawnRequest(argv=self.wrap(["true"], "/dev/null")))
            if m.status != "ok":
                raise UserError(f"--isolation {self.text} cannot run an empty program here "
                                f"({m.error or m.status}, exit code {m.exit_code}); check "
                                f"that {self.tool} works: {shlex.join(self.wrap(['true']))}")
            walls.append(m.wall_ns)
            cpus.append(m.user_ns + m.sys_ns)
        import statistics  # an isolator's calibration only, not every run's path

        return {"wall_ns": int(statistics.median(walls)), "cpu_ns": int(statistics.median(cpus)),
                "runs": runs, "command": shlex.join(self.wrap(["true"], "/dev/null"))}


def _fill_template(template: str, argv: list[str], meta_path: str | None) -> list[str]:
    out: list[str] = []
    for w in shlex.split(template):
        if w == "{cmd}":
            out.extend(argv)
        elif "{meta}" in w:
            out.append(w.replace("{meta}", meta_path or "/dev/null"))
        else:
            out.append(w)
    return out


def _parse_container(kind: str, rest: str) -> Isolation:
    image, *options = rest.split(",")
    image = image.strip()
    if not image or any(c.isspace() for c in image):
        raise UserError(f"--isolation {kind}:IMAGE needs an image name without spaces "
                        f"(got {rest!r}), e.g. {kind}:localhost/benchlab-busybox")
    from benchlab.measure.isolation_names import not_an_option
    not_an_option(kind, rest, image, "an image")
    runtime = None
    for opt in options:
        key, _, value = opt.partition("=")
        if key.strip() != "runtime" or not value.strip():
            raise UserError(f"--isolation {kind}:{rest}: option {opt!r} is unknown; the one "
                            "option is ,runtime=NAME (e.g. runc)")
        runtime = value.strip()
        not_an_option(kind, rest, runtime, "a runtime")
    return Isolation("container", tool=kind.removesuffix("-exec"), image=image,
                     per_run=not kind.endswith("-exec"), runtime=runtime,
                     runtime_forced=runtime is not None)


def parse_isolation(text: str | None) -> Isolation:
    """Parse an ``--isolation`` value (see the module docstring); UserError when not understood.

    Nothing is checked on the machine here: :meth:`Isolation.check` does that.
    """
    if text is None or text == "bare":
        return Isolation("bare")
    if text == "cgroup":
        return Isolation("cgroup")
    from benchlab.measure.sandboxes import SANDBOXES

    if text in SANDBOXES:
        return Isolation("sandbox", tool=text)
    kind, sep, rest = text.partition(":")
    if sep and kind in container_kinds():
        return _parse_container(kind, rest)
    if text.startswith("wrap:"):
        template = text[len("wrap:"):].strip()
        try:
            words = shlex.split(template)
        except ValueError as exc:
            raise UserError(f"--isolation template cannot be parsed ({exc}); fix its quoting") from None
        if "{cmd}" not in words:
            raise UserError("--isolation wrap:TEMPLATE must contain {cmd} as a word where the "
                            "program goes, e.g. wrap:systemd-run --scope -- {cmd}")
        return Isolation("wrap", template)
    if text in container_kinds():
        raise UserError(f"--isolation {text} needs an image: {text}:IMAGE (a local image; "
                        "benchlab never pulls)")
    raise UserError(f"--isolation {text!r} is not understood; use one of {', '.join(levels())}")


def parse_isolate_meta(text: str) -> list[dict]:
    """Measurements (source ``isolate``) from an isolate meta file's ``key:value`` lines.

    Numeric fields listed in :data:`ISOLATE_FIELDS` are converted to the store's units (seconds
    to ns, KiB kept); ``status`` and ``message`` are kept as notes of a ``status`` row.
    """
    rows: list[dict] = []
    notes: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key in ISOLATE_FIELDS:
            unit, factor = ISOLATE_FIELDS[key]
            try:
                rows.append({"source": "isolate", "name": key, "value": float(value) * factor,
                             "unit": unit, "status": "ok"})
            except ValueError:
                rows.append({"source": "isolate", "name": key, "value": None, "unit": unit,
                             "status": "unknown", "note": f"unparsed {value!r}"})
        elif key in ("status", "message"):
            notes[key] = value
    if notes:
        rows.append({"source": "isolate", "name": "status", "value": None, "unit": None,
                     "status": "ok", "note": "; ".join(f"{k}={v}" for k, v in notes.items())})
    return rows
