"""SHA-256 and HMAC-SHA256 of small inputs without loading OpenSSL.

``import hashlib`` (or ``hmac``) loads OpenSSL's libcrypto and initialises it: ~12 M instructions,
~3 % of a whole ``benchlab run -q -N -r 1`` (start-up). The digests on run's path hash
a few hundred bytes each (an environment's canonical JSON, one environment variable's value),
which CPython's own SHA-256 (``_sha256``; ``_sha2`` since Python 3.12) computes alike: the same
digests, bit for bit (``tests/test_startup.py`` checks them against ``hashlib`` and ``hmac``).
Large inputs (files, archives) keep using ``hashlib``, whose OpenSSL code is faster per byte.
"""

from __future__ import annotations

try:
    from _sha256 import sha256
except ImportError:  # Python 3.12+: one module for SHA-224/256
    try:
        from _sha2 import sha256
    except ImportError:  # a Python built without its own SHA-256
        from hashlib import sha256

__all__ = ["sha256", "sha256_hex", "HmacSha256"]

_BLOCK_BYTES = 64  # SHA-256's block size, the HMAC key's padded length (RFC 2104)


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 hex digits (as ``hashlib.sha256(data).hexdigest()``)."""
    return sha256(data).hexdigest()


class HmacSha256:
    """HMAC-SHA256 (RFC 2104) under one key, for many messages: the key's inner and outer
    blocks are hashed once, each message then costs two short SHA-256 computations.

    ``HmacSha256(key).hexdigest(message)`` equals
    ``hmac.new(key, message, hashlib.sha256).hexdigest()``.
    """

    def __init__(self, key: bytes) -> None:
        key = bytes(key)
        if len(key) > _BLOCK_BYTES:
            key = sha256(key).digest()
        key = key.ljust(_BLOCK_BYTES, b"\0")
        self._inner = sha256(bytes(b ^ 0x36 for b in key))
        self._outer = sha256(bytes(b ^ 0x5C for b in key))

    def hexdigest(self, message: bytes) -> str:
        """The HMAC of ``message`` as 64 hex digits."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest()
