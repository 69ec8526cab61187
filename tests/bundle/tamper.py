"""Rewriting a real bundle as a stranger would: members changed, the manifest's digests
recomputed to match (so the archive itself verifies), the manifest first as benchlab writes it."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Callable

from tests.bundle.test_archive import members_of


def resigned(bundle: Path, out: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    """``bundle`` with ``change`` applied to its members (name -> bytes, without the manifest)
    and every digest of the manifest recomputed; written to ``out``."""
    members = members_of(bundle)
    manifest = json.loads(members.pop("manifest.json"))
    change(members)
    manifest["members"] = [{"name": n, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                           for n, b in sorted(members.items())]
    with tarfile.open(out, "w:gz") as tar:
        for name, blob in [("manifest.json", json.dumps(manifest).encode()),
                           *sorted(members.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return out


def with_protocol(bundle: Path, out: Path, edit: Callable[[dict], None]) -> Path:
    """``bundle`` whose first session's protocol went through ``edit`` (and whose provenance
    names no program, so nothing is rebuilt), re-signed."""
    def change(members: dict[str, bytes]) -> None:
        data = json.loads(members["data/sessions.json"])
        edit(data["sessions"][0]["protocol"])
        members["data/sessions.json"] = json.dumps(data).encode()
        members["provenance/executables.json"] = b"[]"

    return resigned(bundle, out, change)
