"""Readers for the process and system state: environment variables (keyed digests) and load."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from benchlab.digests import HmacSha256, sha256_hex
from benchlab.environment._read import is_unknown, read_text, unknown

# How a stored value digest is made; kept beside the values so a reader knows what it compares.
ENV_DIGEST_KEYED = "hmac-sha256/128, keyed by the user's key file"
ENV_DIGEST_NONE = "values not stored (no store key given)"


def env_digest_label(key: bytes) -> str:
    """The ``env_vars_digest`` label of values keyed by ``key``: :data:`ENV_DIGEST_KEYED` and
    the key's public id, so a diff compares values only between sessions keyed alike."""
    key_id = sha256_hex(b"benchlab env-key id\0" + bytes(key))[:12]
    return f"{ENV_DIGEST_KEYED} {key_id}"


def env_var_digests(environ: Mapping[str, str] | None = None,
                    key: bytes | None = None) -> dict[str, str | None]:
    """Environment variable NAMES mapped to a keyed digest of their value, or to ``None``.

    With ``key`` (the user's random secret, :meth:`benchlab.store.Store.env_key`, kept in a
    0600 file outside every store), each value is
    stored as HMAC-SHA256(key, value), first 32 hex digits (128 bits). Without the key, a
    dictionary attack with the public algorithm cannot invert it (an unsalted hash of
    ``hunter2`` can be found in a few guesses), yet two sessions in one store still show *whether*
    a variable changed. Without ``key`` no value is stored at all: names map to ``None``.
    """
    environ = os.environ if environ is None else environ
    if key is None:
        return {name: None for name in sorted(environ)}
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise ValueError("env key must be at least 16 random bytes (Store.env_key())")
    keyed = HmacSha256(key)
    return {name: "hmac:" + keyed.hexdigest(value.encode("utf-8", "surrogateescape"))[:32]
            for name, value in sorted(environ.items())}


def load_average() -> tuple[float, float, float]:
    """System load average over 1, 5 and 15 minutes (runnable + uninterruptible tasks)."""
    return os.getloadavg()


def load_section() -> dict[str, Any]:
    try:
        one, five, fifteen = load_average()
    except OSError as exc:
        reason = f"load average unavailable: {exc}"
        return {"1min": unknown(reason), "5min": unknown(reason), "15min": unknown(reason),
                "runnable": unknown(reason), "tasks": unknown(reason)}
    text = read_text("/proc/loadavg")
    runnable: Any
    tasks: Any
    if is_unknown(text):
        runnable = tasks = text
    else:
        running, _, total = text.split()[3].partition("/")
        # The count includes this collecting process itself.
        runnable, tasks = int(running), int(total)
    return {"1min": one, "5min": five, "15min": fifteen, "runnable": runnable, "tasks": tasks}
