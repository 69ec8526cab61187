"""Container engines: what differs between them, one entry each.

benchlab drives every engine through the same commands (``run``, ``exec``, ``ps``, ``info``,
``rm``; :mod:`benchlab.control.containers`); an engine differs only in the facts listed in
:class:`EngineKind`. Adding an engine that speaks that command language is one entry in
:data:`ENGINE_KINDS` and its tests; ``--isolation NAME:IMAGE`` and ``NAME-exec:IMAGE`` then
accept it (:func:`benchlab.measure.isolation.container_kinds` reads the names from here), and
every message that lists the engines names it.
"""

from __future__ import annotations

from benchlab.records import record


@record(frozen=True)
class EngineKind:
    """What one container engine does its own way.

    ``runtime_option_is_global``: ``--runtime RT`` goes before the subcommand (podman) rather
    than among ``run``'s options (docker). ``info_format``: the ``info --format`` template
    that prints the default OCI runtime and the cgroup manager, separated by a space.
    ``owner_label_field``: the ``ps --format`` expression of a container's label ``{label}``.
    ``config_files``: the engine's own programs and configuration files (names on PATH, or
    paths; ``~`` allowed) whose change makes benchlab choose the OCI runtime again.
    ``monitor_cgroup``: the sub-cgroup, under a container's ``--cgroup-parent``, of the
    engine's monitor process, whose CPU time is not the container's (None: it has none there).
    """

    name: str
    runtime_option_is_global: bool
    info_format: str
    owner_label_field: str
    config_files: tuple[str, ...] = ()
    monitor_cgroup: str | None = None


#: Engine name (its executable) -> what it does its own way.
ENGINE_KINDS: dict[str, EngineKind] = {
    "podman": EngineKind("podman", runtime_option_is_global=True,
                         info_format="{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}}",
                         owner_label_field='index .Labels "{label}"',
                         config_files=("conmon", "/etc/containers/containers.conf",
                                       "/etc/containers/containers.conf.d",
                                       "/usr/share/containers/containers.conf",
                                       "~/.config/containers/containers.conf"),
                         monitor_cgroup="conmon"),
    # docker's ps gives .Labels as text and has .Label NAME; podman's .Labels is a map
    "docker": EngineKind("docker", runtime_option_is_global=False,
                         info_format="{{.DefaultRuntime}} {{.CgroupDriver}}",
                         owner_label_field='.Label "{label}"',
                         config_files=("dockerd", "containerd", "/etc/docker/daemon.json")),
}
