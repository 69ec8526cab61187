"""The local test image of the container tests: a busybox-static rootfs packed with tar and
loaded with ``podman import`` (no registry here). Built once per machine, reused after."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

IMAGE = "localhost/benchlab-test-busybox:1"
APPLETS = ("sh", "true", "false", "echo", "cat", "sleep", "ls")


def busybox_image(engine: str = "podman") -> str | None:
    """The test image's name (imported on first use), or None when the engine or busybox-static
    is missing."""
    path, busybox = shutil.which(engine), shutil.which("busybox")
    if path is None or busybox is None:
        return None
    if subprocess.run([path, "image", "exists", IMAGE]).returncode == 0:
        return IMAGE
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        for d in ("bin", "tmp", "proc", "dev", "sys"):
            (root / d).mkdir(parents=True)
        shutil.copy2(busybox, root / "bin" / "busybox")
        for applet in APPLETS:
            os.symlink("busybox", root / "bin" / applet)
        archive = Path(tmp) / "rootfs.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(root, arcname=".")
        subprocess.run([path, "import", str(archive), IMAGE], check=True, capture_output=True)
    return IMAGE


def owner_containers(pid: int | None = None) -> list[str]:
    """Ids of benchlab's containers (of owner ``pid`` when given) podman knows."""
    label = "benchlab.owner" if pid is None else f"benchlab.owner={pid}"
    out = subprocess.run(["podman", "ps", "--all", "--quiet", "--filter", f"label={label}"],
                         capture_output=True, text=True).stdout
    return out.split()
