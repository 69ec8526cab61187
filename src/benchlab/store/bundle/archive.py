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
import re
import stat
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from benchlab.errors import UserError

BUNDLE_FORMAT = "benchlab-bundle"
#: Bumped when a reader of the previous version could misread a bundle of the new one.
BUNDLE_VERSION = 1
MANIFEST = "manifest.json"
#: Members written by ``benchlab.report.reproduce.make`` and read by the re-measurement.
EXECUTABLES_MEMBER = "provenance/executables.json"
SOFTWARE_MEMBER = "provenance/software.json"
LOCK_MEMBER = "provenance/uv.lock"
PROFILE_MEMBER = "machine/profile.json"
#: Limits of what :func:`read_bundle` reads (stated in docs/bundle.md): a bundle holds data,
#: sources and reports, so more than this was not written by benchlab bundle. The members are
#: held in memory, so these bound the reader's memory too. Members (the manifest included):
MAX_MEMBERS = 10_000
#: Bytes of all members together, uncompressed (and of the file itself): 512 MiB.
MAX_TOTAL_BYTES = 512 << 20
#: Bytes of ``manifest.json`` (10,000 entries take about 1.5 MB): 4 MiB.
MAX_MANIFEST_BYTES = 4 << 20
#: Nesting of any JSON member (a session document nests about 10 deep).
MAX_JSON_DEPTH = 100
#: The members a bundle may hold (docs/bundle.md); anything else is refused by name.
KNOWN_MEMBER = re.compile(r"manifest\.json|data/sessions\.json|protocols/[A-Za-z0-9._-]{1,128}"
                          r"\.json|provenance/(executables\.json|software\.json|uv\.lock)"
                          r"|sources/[A-Za-z0-9_]{1,64}\.c|machine/profile\.json"
                          r"|analysis/analysis\.json|report/report\.(md|html)")


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 hex characters."""
    return hashlib.sha256(data).hexdigest()


def canonical_bytes(document: Any) -> bytes:
    """``document`` as canonical JSON bytes (sorted keys, one-space indent, UTF-8, final newline):
    the same document gives the same bytes with any Python 3."""
    return (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False,
                       allow_nan=False) + "\n").encode("utf-8")


def known_member(name: str) -> bool:
    """Whether ``name`` is a member a benchlab bundle holds (docs/bundle.md's table)."""
    return KNOWN_MEMBER.fullmatch(name) is not None


def json_depth(document: Any) -> int:
    """How deep ``document`` nests (a scalar: 0, ``[]``: 1), walked without recursion."""
    deepest = 0
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node
                     if isinstance(child, (dict, list)))
    return deepest


def loads_bounded(data: bytes, what: str) -> Any:
    """JSON ``data`` parsed; UserError naming ``what`` when it is not UTF-8 JSON or nests
    deeper than :data:`MAX_JSON_DEPTH` (Python's parser would raise RecursionError)."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UserError(f"{what} is not valid JSON; the file was altered: ask for the "
                        f"original") from None
    except RecursionError:
        document = None
        depth = MAX_JSON_DEPTH + 1
    else:
        depth = json_depth(document)
    if depth > MAX_JSON_DEPTH:
        raise UserError(f"{what} nests more than {MAX_JSON_DEPTH} levels deep, which no "
                        f"benchlab bundle does; the file was altered: ask for the original")
    return document


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
        return loads_bounded(self.members[name], f"{self.path}: member {name}")

    def text(self, name: str) -> str:
        """Member ``name`` as UTF-8 text (UserError when absent)."""
        if name not in self.members:
            raise UserError(f"{self.path} has no member {name}; make the bundle again with "
                            f"benchlab bundle")
        return self.members[name].decode("utf-8", errors="replace")


def _refuse_limit(path: str | os.PathLike, what: str) -> UserError:
    return UserError(f"{path}: {what}; benchlab reads bundles of at most {MAX_MEMBERS:,} "
                     f"members, {MAX_TOTAL_BYTES >> 20} MiB in all (uncompressed): this one was "
                     f"not made by benchlab bundle, or was altered")


def _open_regular(path: str | os.PathLike):
    """The bundle file opened for reading; UserError for a directory, a FIFO, a device, a
    missing file, or a file larger than a bundle can be (nothing is read from those)."""
    try:
        fh = open(path, "rb")
    except IsADirectoryError:
        raise UserError(f"{path} is a directory; give a .benchlab.tar.gz file") from None
    except OSError as exc:
        raise UserError(f"cannot read bundle {path}: {exc.strerror or exc}; check the "
                        f"path") from None
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode):
        fh.close()
        raise UserError(f"{path} is not a regular file (a device, FIFO or socket); give a "
                        f".benchlab.tar.gz file")
    if st.st_size > MAX_TOTAL_BYTES:
        fh.close()
        raise _refuse_limit(path, f"the file is {st.st_size:,} bytes")
    return fh


def _read_members(path: str | os.PathLike, fh) -> dict[str, bytes]:
    """Every member, streamed: each header is checked (name, kind, size against what is left
    of :data:`MAX_TOTAL_BYTES`) before a byte of the member is decompressed."""
    members: dict[str, bytes] = {}
    total = 0
    # gzip's own buffered reader under an uncompressed tar stream: tarfile's "r|gz" decompresses
    # in 512-byte reads, 5 s for 10,000 member headers here against 0.3 s
    with gzip.GzipFile(fileobj=fh, mode="rb") as unzipped, \
            tarfile.open(fileobj=unzipped, mode="r|") as tar:
        for info in tar:
            if not members and info.name != MANIFEST:
                raise UserError(f"{path} has no {MANIFEST} first (every benchlab bundle starts "
                                f"with it); it is not a benchlab bundle: give a file made by "
                                f"benchlab bundle")
            if not info.isfile() or not _member_name_ok(info.name):
                raise UserError(f"{path} holds {info.name!r}, which a benchlab bundle never "
                                f"holds; the file was altered: ask for the original")
            if not known_member(info.name):
                raise UserError(f"{path} holds {info.name!r}, which is not a member of a "
                                f"benchlab bundle (docs/bundle.md lists them); the file was "
                                f"altered: ask for the original")
            if info.name in members:
                raise UserError(f"{path} holds {info.name} twice; the file was altered: "
                                f"ask for the original")
            if len(members) >= MAX_MEMBERS:
                raise _refuse_limit(path, f"more than {MAX_MEMBERS:,} members")
            limit = MAX_MANIFEST_BYTES if info.name == MANIFEST else MAX_TOTAL_BYTES - total
            if info.size > limit:
                raise _refuse_limit(path, f"member {info.name} is {info.size:,} bytes")
            fh_member = tar.extractfile(info)
            data = fh_member.read(info.size) if fh_member is not None else b""
            total += len(data)
            members[info.name] = data
    return members


def read_bundle(path: str | os.PathLike) -> Bundle:
    """Read ``path`` and verify it against its manifest, in bounded memory and time.

    Raises a one-line UserError when the file is missing, not a regular file or not a bundle;
    when it holds a member a bundle never holds (a link, a device, an unknown name), more than
    :data:`MAX_MEMBERS` members, or more than :data:`MAX_TOTAL_BYTES` bytes uncompressed (each
    checked from the member's header, before it is decompressed); when its format version is
    newer than this benchlab reads; when a listed member is missing, a member's SHA-256 differs
    from the manifest (the error names the member), or it holds a member the manifest does not
    list; when a JSON member nests deeper than :data:`MAX_JSON_DEPTH`.
    """
    fh = _open_regular(path)
    try:
        digest = hashlib.sha256()
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
        fh.seek(0)
        members = _read_members(path, fh)
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile, ValueError,
            zlib.error) as exc:
        raise UserError(f"{path} is not a benchlab bundle (not a readable .tar.gz: "
                        f"{' '.join(str(exc).split())[:80]}); give a file made by benchlab "
                        f"bundle") from None
    finally:
        fh.close()
    if MANIFEST not in members:
        raise UserError(f"{path} has no {MANIFEST}; it is not a benchlab bundle: give a file "
                        f"made by benchlab bundle")
    manifest = loads_bounded(members.pop(MANIFEST), f"{path}: {MANIFEST}")
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
    if not isinstance(listed, list) or len(listed) > MAX_MEMBERS or not all(
            isinstance(m, dict) and isinstance(m.get("name"), str)
            and isinstance(m.get("sha256"), str) for m in listed):
        raise UserError(f"{path}: {MANIFEST} has no valid member list (at most "
                        f"{MAX_MEMBERS:,} entries of name and sha256); the file was altered: "
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
    return Bundle(str(path), manifest, members, digest.hexdigest())


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
