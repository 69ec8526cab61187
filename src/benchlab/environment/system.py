"""Readers for the operating system and host: distribution, kernel release, boot time and uptime."""

from __future__ import annotations

import os
import platform
from typing import Any

from benchlab.environment._read import is_unknown, iso_from_epoch, read_text, unknown


def _os_release() -> dict[str, Any]:
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(candidate)
        if not is_unknown(text):
            break
    else:
        reason = "neither /etc/os-release nor /usr/lib/os-release exists"
        return {key: unknown(reason) for key in ("id", "version_id", "pretty_name", "codename")}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split("=", 1)
        fields[key.strip()] = value.strip().strip("\"'")

    def pick(key: str) -> Any:
        return fields[key] if key in fields else unknown(f"{key} not set in {candidate}")

    return {
        "id": pick("ID"), "version_id": pick("VERSION_ID"),
        "pretty_name": pick("PRETTY_NAME"), "codename": pick("VERSION_CODENAME"),
    }


def os_section() -> dict[str, Any]:
    uname = platform.uname()
    return {
        "system": uname.system,
        "distribution": _os_release() if uname.system == "Linux" else unknown(
            f"/etc/os-release is Linux-specific; this is {uname.system}"),
        "kernel": {"release": uname.release, "version": uname.version, "machine": uname.machine},
    }


def host_section() -> dict[str, Any]:
    booted_at: Any = unknown("no btime line in /proc/stat")
    uptime: Any = unknown("/proc/uptime not readable")
    stat = read_text("/proc/stat")
    if is_unknown(stat):
        booted_at = stat
    else:
        for line in stat.splitlines():
            if line.startswith("btime "):
                booted_at = iso_from_epoch(int(line.split()[1]))
                break
    up = read_text("/proc/uptime")
    if not is_unknown(up):
        uptime = float(up.split()[0])
    return {"hostname": os.uname().nodename, "booted_at": booted_at, "uptime_s": uptime}
