"""The fingerprint of an environment and the diff of two: one of each, used by every session
writer (fingerprint) and by compare and reports (diff)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from benchlab.environment._read import is_unknown

# Key paths (dotted) left out of the digest: they change between sessions on the same machine.
# A path excludes everything beneath it.
DIGEST_EXCLUDED: tuple[str, ...] = (
    "schema_version",
    "digest",
    "collected_at",
    "host.booted_at",
    "host.uptime_s",
    "load",
    "process",
    "git",
    "env_vars",
    "env_vars_digest",
    "memory.available_kib",
    "memory.free_kib",
    "memory.swap_free_kib",
    "cpu.affinity",
    "cpu.frequency.cpuinfo_mhz",
)

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

def flatten(env: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (dotted key path, leaf) pairs; unknown markers and lists are leaves."""
    for key, value in env.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value and not is_unknown(value):
            yield from flatten(value, path)
        else:
            yield path, value


def _excluded(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


def environment_digest(env: Mapping[str, Any]) -> str:
    """sha256 (first 16 hex digits) of the canonical JSON of the machine and software fields.

    Timestamps, uptime, load, argv, process, git, environment variables and free memory are left
    out (see ``DIGEST_EXCLUDED``), so two sessions on the same, identically configured machine
    share the digest, while a changed kernel, setting, CPU or Python version changes it.
    """
    kept = {path: value for path, value in flatten(env) if not _excluded(path, DIGEST_EXCLUDED)}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def diff_environments(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Fields that differ between two environments, as (dotted key path, value in a, value in b).

    Timestamps, load, uptime, free memory and the instantaneous MHz are ignored (see
    ``DIFF_IGNORED``). A field present on only one side has ``None`` on the other. Sorted by key
    path.
    """
    flat_a = {p: v for p, v in flatten(a) if not _excluded(p, DIFF_IGNORED)}
    flat_b = {p: v for p, v in flatten(b) if not _excluded(p, DIFF_IGNORED)}
    differences = []
    for path in sorted(set(flat_a) | set(flat_b)):
        value_a, value_b = flat_a.get(path), flat_b.get(path)
        if value_a != value_b:
            differences.append((path, value_a, value_b))
    return differences
