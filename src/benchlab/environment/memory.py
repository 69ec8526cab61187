"""Reader for memory: /proc/meminfo in KiB."""

from __future__ import annotations

from typing import Any

from benchlab.environment._read import is_unknown, read_text, unknown

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


def _memory_section() -> dict[str, Any]:
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
    }
