"""The per-user secret that keys environment-variable digests, kept OUTSIDE every store.

A session stores each environment variable's value only as HMAC-SHA-256(key, value). The key
used to sit in the store's own ``store_meta`` table, so anyone who could read a team store could
also run a dictionary against everyone's digests (``hunter2`` fell in 5 guesses). It now lives in
a file only its user can read:

- ``$BENCHLAB_ENV_KEY_FILE`` when set, else ``$XDG_CONFIG_HOME/benchlab/env-key``, else
  ``~/.config/benchlab/env-key``; 32 random bytes, mode 0600 in a 0700 directory, created on
  first use.
- Digests are comparable between sessions keyed by the same file (one person's sessions, or a
  team that deliberately shares one file); sessions keyed differently are compared by variable
  names only (the environment's ``env_vars_digest`` label carries the key's id).
- Old stores: the first writer that opens one adopts its ``store_meta`` key as the user's key when
  the user has none yet (a single user's SQLite store keeps comparing across the change), and
  removes the key from the store either way.
- When no key file can be made (no writable home), values are not stored at all, names only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from benchlab.digests import sha256_hex
from benchlab.errors import UserError

#: Bytes of a new key (256 bits: HMAC-SHA-256's block of key).
KEY_BYTES = 32


def key_path() -> Path:
    """Where this user's key file is (see the module docstring); it may not exist yet."""
    explicit = os.environ.get("BENCHLAB_ENV_KEY_FILE")
    if explicit:
        return Path(explicit)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "benchlab" / "env-key"


def key_id(key: bytes) -> str:
    """A short public name of ``key`` (12 hex digits of a SHA-256 of it): equal ids, comparable
    digests. It reveals nothing usable about the key."""
    return sha256_hex(b"benchlab env-key id\0" + bytes(key))[:12]


def _read(path: Path) -> bytes:
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{path} is not a regular file; remove it (benchlab makes a new key)")
    if st.st_mode & 0o077 and st.st_uid == os.geteuid():
        os.chmod(path, 0o600)  # a key others can read is no secret: close it again
    key = path.read_bytes()
    if len(key) < 16:
        raise UserError(f"{path} holds {len(key)} bytes, too short for a key; remove it "
                        f"(benchlab makes a new one; earlier digests then compare by name only)")
    return key


def user_env_key(adopt: bytes | None = None) -> bytes | None:
    """This user's key: read from :func:`key_path`, or created there (``adopt`` when given: an
    old store's key, else 32 random bytes). None when no key file can be read or made (then no
    values are stored). Raises UserError for a damaged key file."""
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except PermissionError:
        return None
    key = bytes(adopt) if adopt is not None and len(adopt) >= 16 else os.urandom(KEY_BYTES)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)  # another process made it first: use that one
    except OSError:
        return None
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key
