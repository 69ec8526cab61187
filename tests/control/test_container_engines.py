"""Container engines are one registry of what differs between them
(:mod:`benchlab.control.container_engines`): the isolation levels are the registry's names, and
each fact of an installed engine is checked against the engine itself (podman here; docker
when it is installed with its daemon)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchlab.control import containers
from benchlab.control.container_engines import ENGINE_KINDS
from benchlab.errors import UserError
from benchlab.measure.isolation import container_kinds, parse_isolation


def test_the_isolation_levels_are_the_registered_engines():
    assert container_kinds() == tuple(k for e in ENGINE_KINDS for k in (e, f"{e}-exec"))


def test_an_unknown_engine_is_one_line_naming_the_registered_ones():
    with pytest.raises(UserError, match="container engine 'lxc' is unknown; use podman or docker"):
        containers.engine_path("lxc")


def test_runtime_option_goes_where_each_engine_takes_it():
    podman = containers.Engine("podman", "/usr/bin/podman", "runc", runtime_forced=True)
    docker = containers.Engine("docker", "/usr/bin/docker", "runc", runtime_forced=True)
    assert podman.base() == ["/usr/bin/podman", "--runtime", "runc"] and podman.run_flags() == []
    assert docker.base() == ["/usr/bin/docker"] and docker.run_flags() == ["--runtime", "runc"]
    unforced = containers.Engine("podman", "/usr/bin/podman", "crun", runtime_forced=False)
    assert unforced.base() == ["/usr/bin/podman"] and unforced.run_flags() == []


@pytest.mark.parametrize("name", sorted(ENGINE_KINDS))
def test_each_installed_engine_answers_its_registered_templates(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed here")
    kind = ENGINE_KINDS[name]
    info = subprocess.run([path, "info", "--format", kind.info_format], capture_output=True,
                          text=True, timeout=120)
    if info.returncode != 0:
        pytest.skip(f"{name} does not answer here: {info.stderr.strip()[:120]}")
    runtime, manager = info.stdout.split()
    assert runtime and manager in ("cgroupfs", "systemd")
    field = kind.owner_label_field.format(label=containers.OWNER_LABEL)
    ps = subprocess.run([path, "ps", "--all", "--filter", "label=benchlab.none",
                         "--format", f"{{{{.ID}}}} {{{{{field}}}}}"], capture_output=True,
                        text=True, timeout=120)
    assert ps.returncode == 0, ps.stderr
    assert parse_isolation(f"{name}:busybox").text == f"{name}:busybox"
