"""The fingerprint of an environment: one digest, used by every session writer.

:func:`environment_digest` hashes only the fields that describe the machine and its software (not
timestamps, load, argv, git, environment variables or free memory), so sessions taken on the same,
identically configured machine share it. :func:`flatten` is the dotted-path view that the digest
and :mod:`benchlab.environment.diff` share.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from benchlab.digests import sha256_hex
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


def flatten(env: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (dotted key path, leaf) pairs; unknown markers and lists are leaves."""
    for key, value in env.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value and not is_unknown(value):
            yield from flatten(value, path)
        else:
            yield path, value


def excluded(path: str, prefixes: Sequence[str]) -> bool:
    """Whether dotted ``path`` is one of ``prefixes`` or lies beneath one."""
    return any(path == p or path.startswith(p + ".") for p in prefixes)


_DIGEST_EXCLUDED_SET = frozenset(DIGEST_EXCLUDED)


def _excluded_from_digest(path: str) -> bool:
    """:func:`excluded` with ``DIGEST_EXCLUDED``, by set lookups of the path's dotted prefixes
    (every session computes the digest over ~150 paths)."""
    if path in _DIGEST_EXCLUDED_SET:
        return True
    dot = path.find(".")
    while dot != -1:
        if path[:dot] in _DIGEST_EXCLUDED_SET:
            return True
        dot = path.find(".", dot + 1)
    return False


def environment_digest(env: Mapping[str, Any]) -> str:
    """sha256 (first 16 hex digits) of the canonical JSON of the machine and software fields.

    Timestamps, uptime, load, argv, process, git, environment variables and free memory are left
    out (see ``DIGEST_EXCLUDED``), so two sessions on the same, identically configured machine
    share the digest, while a changed kernel, setting, CPU or Python version changes it.
    """
    kept = {path: value for path, value in flatten(env) if not _excluded_from_digest(path)}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return sha256_hex(canonical.encode())[:16]
