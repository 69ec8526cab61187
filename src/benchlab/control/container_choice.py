"""The OCI runtime chosen for a container engine, remembered for this boot.

Choosing asks the engine's ``info`` (~0.5-1 s: podman asks dpkg for its components' versions)
and may try a default runtime that refuses here (``crun`` on hybrid cgroup v1) before ``runc``:
every benchlab process that used a container paid both. The choice is kept in the user's cache
(``probes/engine-*.json``) under a name that changes with the boot, the engine, its runtimes
and its configuration files, and :func:`benchlab.control.containers.prepare_engine` uses it
only after an empty run with it works (else it chooses again).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from benchlab.digests import sha256_hex
from benchlab.paths import user_cache_dir

#: What every engine's choice depends on besides the boot and the engine's own files: the OCI
#: runtimes it may choose.
_RUNTIME_FILES = ("crun", "runc")


def _choice_file(path: str, runtime: str | None, files: tuple[str, ...]) -> Path | None:
    """The cache file of the runtime choice of the engine at ``path`` in this boot, named by a
    digest of the boot id and the size and modification time (ns) of the engine, the runtimes
    and the engine's own ``files`` (its ``EngineKind.config_files``); None when the boot id
    cannot be read."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            parts = [fh.read().strip(), path, str(runtime), os.environ.get("CONTAINERS_CONF", "")]
    except OSError:
        return None
    for item in (path, *_RUNTIME_FILES, *files):
        where = shutil.which(item) if "/" not in item else os.path.expanduser(item)
        try:
            st = os.stat(where) if where else None
        except OSError:
            st = None
        parts.append(f"{item}:{st.st_size}:{st.st_mtime_ns}" if st else f"{item}:-")
    digest = sha256_hex("\0".join(parts).encode())[:24]
    return user_cache_dir() / "probes" / f"engine-{digest}.json"


def remembered_choice(path: str, runtime: str | None,
                      files: tuple[str, ...] = ()) -> tuple[str, bool, str] | None:
    """(runtime, forced, cgroup manager) chosen for the engine at ``path`` earlier in this boot
    with nothing of it changed since, else None: ``info`` (~0.5-1 s: podman asks dpkg for its
    components' versions) and a default runtime that refuses are not asked again."""
    file = _choice_file(path, runtime, files)
    try:
        rt, forced, manager = json.loads(file.read_text()) if file else (None, None, None)
    except (OSError, ValueError, TypeError):
        return None
    if not (isinstance(rt, str) and isinstance(forced, bool) and isinstance(manager, str)):
        return None
    return rt, forced, manager


def remember_choice(path: str, runtime: str | None, choice: tuple[str, bool, str],
                    files: tuple[str, ...] = ()) -> None:
    """Remember ``choice`` (runtime, forced, cgroup manager) for the engine at ``path``
    (``runtime``: the one asked for, or None) for this boot; nothing when the cache cannot be
    written."""
    file = _choice_file(path, runtime, files)
    if file is None:
        return
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f".{file.name}.{os.getpid()}")
        tmp.write_text(json.dumps(list(choice)))
        os.replace(tmp, file)  # readers see no answer or a whole one
    except OSError:
        pass  # an unwritable cache only costs the engine's info next time
