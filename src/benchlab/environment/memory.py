"""Reader for memory: /proc/meminfo in KiB."""

from __future__ import annotations

from typing import Any

from benchlab.environment._read import is_unknown, read_text, unknown

THP_DIR = "/sys/kernel/mm/transparent_hugepage"

def meminfo() -> dict[str, int] | dict[str, str]:
    """/proc/meminfo as {field: KiB}, or an unknown marker."""
    text = read_text("/proc/meminfo")
    if is_unknown(text):
        return text
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def thp_details() -> dict[str, Any]:
    """Transparent huge pages beyond ``enabled``/``defrag`` (recorded in the kernel section):
    the huge page size the kernel maps (KiB, ``hpage_pmd_size``) and whether khugepaged
    collapses pages in the background (``khugepaged/defrag``: 1 or 0). Unknown markers when
    THP is not built in."""
    size = read_text(f"{THP_DIR}/hpage_pmd_size")
    collapse = read_text(f"{THP_DIR}/khugepaged/defrag")
    return {"pmd_size_kib": size if is_unknown(size) or not size.strip().isdigit()
            else int(size) // 1024,
            "khugepaged_defrag": collapse if is_unknown(collapse) or not collapse.strip().isdigit()
            else int(collapse)}


def memory_section() -> dict[str, Any]:
    info = meminfo()

    def field(name: str) -> Any:
        if is_unknown(info):
            return info
        return info[name] if name in info else unknown(f"/proc/meminfo has no {name}")

    return {
        "total_kib": field("MemTotal"),
        "available_kib": field("MemAvailable"),
        "free_kib": field("MemFree"),
        "swap_total_kib": field("SwapTotal"),
        "swap_free_kib": field("SwapFree"),
        "hugepage_size_kib": field("Hugepagesize"),
        "transparent_hugepages": thp_details(),
    }
