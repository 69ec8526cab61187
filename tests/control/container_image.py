"""The local test image of the container tests: benchlab's own busybox image
(:func:`benchlab.control.containers.ensure_busybox_image`: a busybox-static rootfs packed with
tar and loaded with ``podman import``; no registry here)."""

from __future__ import annotations

import shutil
import subprocess

from benchlab.control.containers import ensure_busybox_image


def busybox_image(engine: str = "podman") -> str | None:
    """The test image's name (imported on first use), or None when the engine or busybox-static
    is missing."""
    if shutil.which(engine) is None or shutil.which("busybox") is None:
        return None
    return ensure_busybox_image(engine)


def owner_containers(pid: int | None = None) -> list[str]:
    """Ids of benchlab's containers (of owner ``pid`` when given) podman knows."""
    label = "benchlab.owner" if pid is None else f"benchlab.owner={pid}"
    out = subprocess.run(["podman", "ps", "--all", "--quiet", "--filter", f"label={label}"],
                         capture_output=True, text=True).stdout
    return out.split()
