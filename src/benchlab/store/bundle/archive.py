"""The bundle archive: a deterministic ``.tar.gz`` whose manifest names every member's SHA-256.

Determinism (the same members give the same bytes, on any machine): members are written in
sorted order, each with mtime 0, uid/gid 0, empty owner names, mode 0644, as a plain POSIX
(ustar) tar; gzip gets mtime 0 and no file name. ``manifest.json`` is written first and lists
every other member with its size (bytes) and SHA-256, so one look at it says what is inside and
any change to a member is caught by :func:`read_bundle`, which names the member.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from benchlab.errors import UserError

BUNDLE_FORMAT = "benchlab-bundle"
#: Bumped when a reader of the previous version could misread a bundle of the new one.
BUNDLE_VERSION = 1
MANIFEST = "manifest.json"
#: A bundle holds data, sources and reports; a member this big is not one benchlab wrote.
MAX_MEMBER_BYTES = 1 << 31


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 hex characters."""
    return hashlib.sha256(data).hexdigest()


def canonical_bytes(document: Any) -> bytes:
    """``document`` as canonical JSON bytes (sorted keys, one-space indent, UTF-8, final newline):
    the same document gives the same bytes with any Python 3."""
    return (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False,
                       allow_nan=False) + "\n").encode("utf-8")


def _member_name_ok(name: str) -> bool:
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def bundle_bytes(members: Mapping[str, bytes], extra: Mapping[str, Any] | None = None) -> bytes:
    """The archive bytes of ``members`` (name -> content) with their manifest.

    ``extra`` goes into the manifest beside ``format``, ``format_version`` and ``members``
    (e.g. the bundled session uids). The same arguments always give the same bytes.
    """
    for name in members:
        if name == MANIFEST or not _member_name_ok(name):
            raise ValueError(f"bad bundle member name {name!r}")
    manifest = {**(extra or {}), "format": BUNDLE_FORMAT, "format_version": BUNDLE_VERSION,
                "members": [{"name": n, "size": len(members[n]), "sha256": sha256_hex(members[n])}
                            for n in sorted(members)]}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in [(MANIFEST, canonical_bytes(manifest))] + sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    # filename="" and mtime=0: gzip would otherwise store the output's name and the time
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def write_bundle(path: str | os.PathLike, members: Mapping[str, bytes],
                 extra: Mapping[str, Any] | None = None) -> int:
    """Write the bundle atomically to ``path`` (a reader never sees half a file); returns its
    size in bytes. UserError when ``path`` cannot be written."""
    data = bundle_bytes(members, extra)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}; choose a writable "
                        f"path with -o FILE") from None
    return len(data)


@dataclass
class Bundle:
    """A read and verified bundle: its manifest and every member's bytes."""

    path: str
    manifest: dict[str, Any]
    members: dict[str, bytes]
    sha256: str
    """SHA-256 of the whole archive file."""

    def json(self, name: str) -> Any:
        """Member ``name`` parsed as JSON; UserError naming it when absent or not JSON."""
        if name not in self.members:
            raise UserError(f"{self.path} has no member {name}; it is not a complete benchlab "
                            f"bundle: make it again with benchlab bundle")
        try:
            return json.loads(self.members[name].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise UserError(f"{self.path}: member {name} is not valid JSON; make the bundle "
                            f"again with benchlab bundle") from None

    def text(self, name: str) -> str:
        """Member ``name`` as UTF-8 text (UserError when absent)."""
        if name not in self.members:
            raise UserError(f"{self.path} has no member {name}; make the bundle again with "
                            f"benchlab bundle")
        return self.members[name].decode("utf-8", errors="replace")


def read_bundle(path: str | os.PathLike) -> Bundle:
    """Read ``path`` and verify it against its manifest.

    Raises a one-line UserError when the file is missing or not a bundle, when its format
    version is newer than this benchlab reads, when a listed member is missing, when a member's
    SHA-256 differs from the manifest (the error names the member), or when it holds a member
    the manifest does not list.
    """
    p = Path(path)
    try:
        blob = p.read_bytes()
    except IsADirectoryError:
        raise UserError(f"{path} is a directory; give a .benchlab.tar.gz file") from None
    except OSError as exc:
        raise UserError(f"cannot read bundle {path}: {exc.strerror or exc}; check the "
                        f"path") from None
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            for info in tar:
                if not info.isfile() or not _member_name_ok(info.name):
                    raise UserError(f"{path} holds {info.name!r}, which a benchlab bundle never "
                                    f"holds; the file was altered: ask for the original")
                if info.size > MAX_MEMBER_BYTES:
                    raise UserError(f"{path}: member {info.name} is {info.size} bytes, more than "
                                    f"a bundle holds; the file was altered")
                if info.name in members:
                    raise UserError(f"{path} holds {info.name} twice; the file was altered: "
                                    f"ask for the original")
                fh = tar.extractfile(info)
                members[info.name] = fh.read() if fh is not None else b""
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile, ValueError) as exc:
        raise UserError(f"{path} is not a benchlab bundle (not a readable .tar.gz: "
                        f"{' '.join(str(exc).split())[:80]}); give a file made by benchlab "
                        f"bundle") from None
    if MANIFEST not in members:
        raise UserError(f"{path} has no {MANIFEST}; it is not a benchlab bundle: give a file "
                        f"made by benchlab bundle")
    try:
        manifest = json.loads(members.pop(MANIFEST).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UserError(f"{path}: {MANIFEST} is not valid JSON; the file was altered: ask for "
                        f"the original") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise UserError(f"{path} is not a benchlab bundle ({MANIFEST} has no \"format\": "
                        f"\"{BUNDLE_FORMAT}\"); give a file made by benchlab bundle")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"{path}: {MANIFEST} has format_version {version!r}, not a positive "
                        f"integer; the file was altered: ask for the original")
    if version > BUNDLE_VERSION:
        raise UserError(f"{path} is bundle format version {version}, newer than this benchlab "
                        f"reads ({BUNDLE_VERSION}); upgrade benchlab to read it")
    listed = manifest.get("members")
    if not isinstance(listed, list) or not all(
            isinstance(m, dict) and isinstance(m.get("name"), str)
            and isinstance(m.get("sha256"), str) for m in listed):
        raise UserError(f"{path}: {MANIFEST} has no valid member list; the file was altered: "
                        f"ask for the original")
    names = set()
    for entry in listed:
        name = entry["name"]
        names.add(name)
        if name not in members:
            raise UserError(f"{path} is missing member {name} (listed in its manifest); the "
                            f"bundle is incomplete: ask for the original or bundle again")
        if sha256_hex(members[name]) != entry["sha256"]:
            raise UserError(f"{path}: member {name} was altered (its SHA-256 differs from the "
                            f"manifest); ask for the original bundle")
    unlisted = sorted(set(members) - names)
    if unlisted:
        raise UserError(f"{path} holds {unlisted[0]}, which its manifest does not list; the "
                        f"file was altered: ask for the original")
    return Bundle(str(path), manifest, members, sha256_hex(blob))


def looks_like_bundle(path: str | os.PathLike) -> bool:
    """True when ``path`` is a gzip file whose tar starts with ``manifest.json`` (as every
    bundle does): the first 512 bytes of the tar are decompressed, nothing else is read. Never
    raises (for ``import --format auto``: a file of another format answers False)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return False
            fh.seek(0)
            with gzip.GzipFile(fileobj=fh) as gz:
                header = gz.read(512)
    except Exception:  # noqa: BLE001 - corrupt gzip raises zlib.error, truncated EOFError...:
        return False     # not a bundle; the reader of the detected format says what is wrong
    name = header[:100].split(b"\0", 1)[0]
    return len(header) == 512 and name == MANIFEST.encode() and header[257:262] == b"ustar"
