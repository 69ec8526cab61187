"""Reader for virtual machine and container detection (systemd-detect-virt, DMI, markers)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from benchlab.environment._read import (
    SUBPROCESS_TIMEOUT_S,
    Probe,
    is_unknown,
    read_text,
    unknown,
    which,
)
from benchlab.environment.cpu import cpuinfo_first_block

_CONTAINER_CGROUP_PATTERNS = ("docker", "kubepods", "containerd", "lxc", "libpod", "podman")


def _vm_from_evidence(vm: Any, hypervisor_flag: Any, dmi: dict[str, Any]) -> Any:
    """What the cpuinfo flag and DMI say about a virtual machine when systemd-detect-virt
    could not (``vm``: its unknown answer, kept when they say nothing either)."""
    if hypervisor_flag is True:
        return unknown("systemd-detect-virt unavailable; cpuinfo 'hypervisor' flag says this is "
                       "a virtual machine of unknown type")
    if hypervisor_flag is False and is_unknown(dmi["sys_vendor"]):
        return unknown("systemd-detect-virt unavailable; no hypervisor flag and no DMI data")
    if hypervisor_flag is False:
        return "none"
    return vm


def virtualization_section(detect_vm: Probe | None, detect_container: Probe | None,
                            deadline: float, hypervisor_flag: Any) -> dict[str, Any]:
    evidence: list[str] = []

    def detect(probe: Probe | None) -> Any:
        if probe is None:
            return unknown("systemd-detect-virt is not installed")
        result = probe.result(deadline)
        if isinstance(result, str):
            return unknown(result)
        code, out, err = result
        value = out.strip()
        # Exit status 1 with "none" means: checked, nothing found.
        if value:
            evidence.append(f"systemd-detect-virt {probe.argv[1]}: {value}")
            return value
        return unknown(f"systemd-detect-virt {probe.argv[1]} failed: {err.strip() or code}")

    vm = detect(detect_vm)
    container = detect(detect_container)

    dmi = {}
    for name in ("sys_vendor", "product_name"):
        dmi[name] = read_text(Path("/sys/class/dmi/id") / name)
        if not is_unknown(dmi[name]):
            evidence.append(f"dmi {name}: {dmi[name]}")
    if hypervisor_flag is True:
        evidence.append("cpuinfo flag: hypervisor")
    markers = [m for m in ("/.dockerenv", "/run/.containerenv") if os.path.exists(m)]
    evidence.extend(f"file: {m}" for m in markers)
    pid1_cgroup = read_text("/proc/1/cgroup")
    if not is_unknown(pid1_cgroup):
        hits = sorted({p for p in _CONTAINER_CGROUP_PATTERNS if p in pid1_cgroup})
        evidence.extend(f"/proc/1/cgroup mentions {p}" for p in hits)
    else:
        hits = []

    # Without systemd-detect-virt, fall back to what the evidence shows, saying what it is.
    if is_unknown(vm):
        vm = _vm_from_evidence(vm, hypervisor_flag, dmi)
    if is_unknown(container) and (markers or hits):
        container = unknown("systemd-detect-virt unavailable; container markers found: "
                            + ", ".join(markers + hits))
    return {
        "vm": vm,
        "container": container,
        "hypervisor_flag": hypervisor_flag,
        "dmi": dmi,
        "evidence": evidence,
    }


def virtualization_state() -> dict[str, Any]:
    """Virtual machine and container detection alone (the ``virtualization`` section).

    ``vm`` and ``container`` are systemd-detect-virt's answers (``none`` when it found nothing);
    ``evidence`` lists every clue seen (DMI, cpuinfo hypervisor flag, /.dockerenv, /proc/1/cgroup).
    """
    have_detect = which("systemd-detect-virt") is not None
    detect_vm = Probe(["systemd-detect-virt", "--vm"], per_boot=True) if have_detect else None
    detect_container = (Probe(["systemd-detect-virt", "--container"], per_boot=True)
                        if have_detect else None)
    deadline = time.monotonic() + SUBPROCESS_TIMEOUT_S
    info = cpuinfo_first_block()
    if "_error" in info:
        hypervisor_flag: Any = info["_error"]
    elif "flags" in info:
        hypervisor_flag = "hypervisor" in info["flags"].split()
    else:
        hypervisor_flag = unknown("/proc/cpuinfo has no flags field on this architecture")
    return virtualization_section(detect_vm, detect_container, deadline, hypervisor_flag)
