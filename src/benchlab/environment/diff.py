"""The diff of two environments: one, used by ``compare`` and the reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchlab.environment.fingerprint import excluded, flatten

# Key paths that diff_environments ignores: timestamps, load and values that drift by the second.
# Environment variables stay in the diff: a changed PATH or LD_* explains a changed result.
DIFF_IGNORED: tuple[str, ...] = (
    "digest",
    "process.pid",
    "collected_at",
    "host.booted_at",
    "host.uptime_s",
    "load",
    "memory.available_kib",
    "memory.free_kib",
    "memory.swap_free_kib",
    "cpu.frequency.cpuinfo_mhz",
)


def diff_environments(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Fields that differ between two environments, as (dotted key path, value in a, value in b).

    Timestamps, load, uptime, free memory and the instantaneous MHz are ignored (see
    ``DIFF_IGNORED``). A field present on only one side has ``None`` on the other. Sorted by key
    path.

    Environment variable values are compared only when both sides stored them the same way
    (``env_vars_digest``: keyed by the same kind of secret, or both unstored); otherwise only
    which variables are set is compared (shown as ``"set"``), since digests made differently
    differ whatever the values.
    """
    flat_a = {p: v for p, v in flatten(a) if not excluded(p, DIFF_IGNORED)}
    flat_b = {p: v for p, v in flatten(b) if not excluded(p, DIFF_IGNORED)}
    if a.get("env_vars_digest") != b.get("env_vars_digest"):
        for flat in (flat_a, flat_b):
            flat.pop("env_vars_digest", None)
            for path in [p for p in flat if p.startswith("env_vars.")]:
                flat[path] = "set"
    differences = []
    for path in sorted(set(flat_a) | set(flat_b)):
        value_a, value_b = flat_a.get(path), flat_b.get(path)
        if value_a != value_b:
            differences.append((path, value_a, value_b))
    return differences
