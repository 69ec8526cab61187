"""Where cgroups are mounted: v1, v2 or hybrid, from /proc/self/mountinfo.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Literal

from benchlab.environment import is_unknown, read_text
from benchlab.errors import NotAvailable
from benchlab.records import record

# ---------------------------------------------------------------------------------------------
# Layout detection


@record(frozen=True)
class CgroupMount:
    """One mounted cgroup hierarchy.

    Attributes:
        path: mount point.
        version: "v1" or "v2".
        controllers: v1: controllers attached to this hierarchy (from mount options);
            v2: controllers available at its root (``cgroup.controllers``).
        read_only: mounted read-only.
    """

    path: Path
    version: Literal["v1", "v2"]
    controllers: frozenset[str]
    read_only: bool = False


@record(frozen=True)
class CgroupLayout:
    """Where each cgroup controller is mounted.

    Attributes:
        version: "v1", "v2", "hybrid" (v1 controllers and a cgroup2 mount) or "none".
        v1: controller -> v1 hierarchy holding it. Named hierarchies (``name=systemd``)
            are not controllers and are left out.
        unified: the cgroup2 mount, if any.
    """

    version: Literal["v1", "v2", "hybrid", "none"]
    v1: Mapping[str, CgroupMount] = field(default_factory=dict)
    unified: CgroupMount | None = None

    @classmethod
    def from_mountinfo(cls, text: str) -> "CgroupLayout":
        """Build a layout from the text of ``/proc/self/mountinfo`` (or a fake copy of it).

        For the cgroup2 mount, available controllers are read from its ``cgroup.controllers``
        file (empty when unreadable).
        """
        v1: dict[str, CgroupMount] = {}
        unified: CgroupMount | None = None
        for line in text.splitlines():
            left, sep, right = line.partition(" - ")
            if not sep:
                continue
            fields = left.split()
            rest = right.split()
            if len(fields) < 6 or len(rest) < 3:
                continue
            fstype, super_options = rest[0], rest[2].split(",")
            mount_point = Path(_unescape_mount(fields[4]))
            read_only = "ro" in fields[5].split(",") or "ro" in super_options
            if fstype == "cgroup":
                controllers = frozenset(
                    opt for opt in super_options
                    if opt not in ("rw", "ro") and "=" not in opt and opt not in _V1_NON_CONTROLLER_OPTIONS
                )
                if not controllers:
                    continue
                mount = CgroupMount(mount_point, "v1", controllers, read_only)
                for controller in controllers:
                    v1.setdefault(controller, mount)
            elif fstype == "cgroup2" and unified is None:
                unified = CgroupMount(mount_point, "v2", _read_controllers(mount_point), read_only)
        if v1 and unified is not None:
            version = "hybrid"
        elif v1:
            version = "v1"
        elif unified is not None:
            version = "v2"
        else:
            version = "none"
        return cls(version=version, v1=v1, unified=unified)

    @classmethod
    def v2_at(cls, root: str | os.PathLike, *, read_only: bool = False) -> "CgroupLayout":
        """A pure cgroup v2 layout mounted at ``root`` (real or a fake tree)."""
        root = Path(root)
        return cls(version="v2", unified=CgroupMount(root, "v2", _read_controllers(root), read_only))

    @classmethod
    def v1_at(cls, root: str | os.PathLike, controllers: Iterable[str]) -> "CgroupLayout":
        """A pure v1 layout with each controller mounted at ``root/<controller>``."""
        root = Path(root)
        v1 = {ctrl: CgroupMount(root / ctrl, "v1", frozenset({ctrl})) for ctrl in controllers}
        return cls(version="v1", v1=v1)

    def mount_for(self, controller: str) -> CgroupMount | None:
        """Hierarchy to use for ``controller``: its v1 hierarchy, else cgroup2 if available there.

        ``cpuacct`` (v1 only) maps to cgroup2 when there is no v1 cpuacct, because v2 keeps CPU
        time in every cgroup's ``cpu.stat`` without any controller.
        """
        if controller in self.v1:
            return self.v1[controller]
        if self.unified is not None:
            if controller == "cpuacct" or controller in self.unified.controllers:
                return self.unified
        return None

    def mounts(self) -> list[CgroupMount]:
        """Every distinct hierarchy (v1 hierarchies, then cgroup2)."""
        seen: dict[Path, CgroupMount] = {}
        for mount in self.v1.values():
            seen.setdefault(mount.path, mount)
        if self.unified is not None:
            seen.setdefault(self.unified.path, self.unified)
        return list(seen.values())


_V1_NON_CONTROLLER_OPTIONS = frozenset(
    {"relatime", "noatime", "nosuid", "nodev", "noexec", "clone_children", "noprefix", "xattr",
     "cpuset_v2_mode", "favordynmods"}
)


def _unescape_mount(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _read_controllers(root: Path) -> frozenset[str]:
    text = read_text(root / "cgroup.controllers")  # once a session start, the probe's too
    return frozenset() if is_unknown(text) else frozenset(text.split())


#: The mount table parsed last and its layout: the same text (one object, as
#: :func:`benchlab.environment.reading_once` hands it out again) is not parsed twice.
_PARSED: list = [None, None]


def detect_layout(mountinfo: str | os.PathLike = "/proc/self/mountinfo") -> CgroupLayout:
    """Detect the cgroup layout of this process's mount namespace (v1, v2, hybrid or none).
    Within :func:`benchlab.environment.reading_once` (a session's start: the sweep, then the
    helper's tracking leaf), the mount table is read and parsed once."""
    text = read_text(mountinfo)
    if text is _PARSED[0]:
        return _PARSED[1]
    if is_unknown(text):
        try:
            Path(mountinfo).read_text()  # again, for the error's own words
        except OSError as err:
            raise NotAvailable(f"cannot read {mountinfo}: {err.strerror}; is /proc "
                               "mounted?") from None
        raise NotAvailable(f"cannot read {mountinfo}: {text['unknown']}; is /proc mounted?")
    layout = CgroupLayout.from_mountinfo(text)
    _PARSED[:] = [text, layout]
    return layout
