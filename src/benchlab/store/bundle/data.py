"""The bundle's data member (``data/sessions.json``) and getting it back into a store.

The data document is benchlab's JSON export (``docs/json-schema.md``) without the time of
export, so the same sessions always give the same bytes:
``{"format": "benchlab-bundle-data", "format_version": 1, "sessions": [SESSION, ...]}``, each
SESSION exactly as :func:`benchlab.store.formats.json_doc.session_document` writes it (runs with
their samples, measurements and looks' records, environment, protocol, command line).

Two ways back in:

- :func:`load_into_store` (the analysis of ``benchlab reproduce``): into a scratch store, keeping
  each session's uid, name, kind, status and times, so a report rendered from it is the report
  rendered when bundling.
- :func:`import_bundle` (``benchlab import --format bundle``): into the user's store as new
  ``import`` sessions whose metadata says where they came from (``imported_from`` and
  ``bundle``: the file, its SHA-256, the original uid), registered as import format ``bundle``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from benchlab.errors import UserError
from benchlab.store.bundle.archive import Bundle, canonical_bytes, read_bundle
from benchlab.store.db import SessionRef, Store

DATA_MEMBER = "data/sessions.json"
DATA_FORMAT = "benchlab-bundle-data"
DATA_VERSION = 1


def sessions_data(store: Store, keys: Sequence[str]) -> tuple[bytes, list[dict[str, Any]]]:
    """The data member of the sessions ``keys`` (uids, ids or names; each once, in order) and
    their documents. UserError naming a session that does not exist (e.g. deleted since)."""
    from benchlab.store.formats.gather import resolve_sessions
    from benchlab.store.formats.json_doc import session_document

    if not keys:
        raise UserError("name at least one session to bundle (uid, id or name); list them with "
                        "benchlab list")
    for key in keys:
        if store.find_session(key) is None:
            raise UserError(f"no session {key!r} in {store.path} (deleted, or another store?); "
                            f"list them with benchlab list, or pass --db PATH")
    docs = [session_document(s) for s in resolve_sessions(store, list(keys))]
    document = {"format": DATA_FORMAT, "format_version": DATA_VERSION, "sessions": docs}
    return canonical_bytes(document), docs


def session_documents(bundle: Bundle) -> list[dict[str, Any]]:
    """The session documents of a verified bundle; UserError when the data member is damaged."""
    doc = bundle.json(DATA_MEMBER)
    if not isinstance(doc, dict) or doc.get("format") != DATA_FORMAT:
        raise UserError(f"{bundle.path}: {DATA_MEMBER} is not benchlab bundle data; make the "
                        f"bundle again with benchlab bundle")
    version = doc.get("format_version")
    if not isinstance(version, int) or version > DATA_VERSION:
        raise UserError(f"{bundle.path}: {DATA_MEMBER} is data format version {version!r}, "
                        f"newer than this benchlab reads ({DATA_VERSION}); upgrade benchlab")
    sessions = doc.get("sessions")
    if not isinstance(sessions, list) or not sessions or \
            not all(isinstance(s, dict) for s in sessions):
        raise UserError(f"{bundle.path}: {DATA_MEMBER} holds no sessions; make the bundle "
                        f"again with benchlab bundle")
    from benchlab.store.bundle.plan_shape import plan_problem

    for s in sessions:  # one rule for import and reproduce: a damaged plan is refused by both
        if s.get("kind") == "run" and s.get("protocol") is not None:
            what = plan_problem(s["protocol"])
            if what is not None:
                raise UserError(f"{bundle.path}: the plan of session {s.get('uid')} is damaged "
                                f"({what}); make the bundle again with benchlab bundle")
    return sessions


def _parsed(bundle: Bundle, *, name: str | None = None,
            command_line: list[str] | None = None, provenance: bool = True) -> list:
    from benchlab.store.formats.json_doc import session_from_document

    out = []
    for i, s in enumerate(session_documents(bundle)):
        try:
            imp = session_from_document(s, source=str(Path(bundle.path).resolve()), name=name,
                                        command_line=command_line)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise UserError(f"{bundle.path}: session {i} of {DATA_MEMBER} is damaged ({what}); "
                            f"make the bundle again with benchlab bundle") from None
        if provenance:
            imp.metadata["bundle"] = {"file": str(Path(bundle.path).resolve()),
                                      "sha256": bundle.sha256, "original_uid": s.get("uid"),
                                      "benchlab_version": bundle.manifest.get("benchlab_version")}
        else:  # the scratch copy must look exactly like the original
            imp.metadata = s.get("metadata")
            imp.command_line = s.get("command_line")
        out.append(imp)
    return out


def load_into_store(store: Store, bundle: Bundle) -> list[SessionRef]:
    """Write the bundle's sessions into ``store`` (a scratch store) keeping each session's uid,
    name, kind, status, times, source and metadata. UserError if a uid is taken there."""
    from benchlab.store.formats.common import write_imports

    docs = session_documents(bundle)
    for s in docs:
        if store.conn.execute("SELECT 1 FROM sessions WHERE uid = ?",
                              (s.get("uid"),)).fetchone() is not None:
            raise UserError(f"session {s.get('uid')} is already in {store.path}; use an "
                            f"empty scratch store")
    imports = _parsed(bundle, provenance=False)
    refs = write_imports(store, imports, allow_duplicate=True)
    with store.transaction():
        for ref, s in zip(refs, docs):
            store.conn.execute(
                "UPDATE sessions SET uid = ?, name = ?, kind = ?, status = ?, created_utc = ?,"
                " finished_utc = ?, source = ?, input_digest = NULL WHERE id = ?",
                (s.get("uid"), s.get("name"), s.get("kind"), s.get("status"),
                 s.get("created_utc"), s.get("finished_utc"), s.get("source"), ref.id))
    return [SessionRef(ref.id, s.get("uid")) for ref, s in zip(refs, docs)]


def import_bundle(store: Store, path: str | os.PathLike, *, name: str | None = None,
                  unit: str | None = None, metrics: Sequence[Any] = (),
                  command_line: list[str] | None = None) -> list[SessionRef]:
    """Import a bundle's sessions as new sessions of ``store`` (all or nothing), each with its
    provenance in ``metadata`` (``imported_from``, ``bundle``). The same bundle twice is refused
    (its SHA-256 is the import's digest)."""
    from benchlab.store.formats.common import find_duplicate, write_imports

    if metrics or unit is not None:
        raise UserError("--metric and --unit do not apply to --format bundle; a bundle carries "
                        "its own metrics and units")
    bundle = read_bundle(path)
    if name and len(session_documents(bundle)) > 1:
        raise UserError(f"--name names one session but {path} holds several; drop --name")
    digest = "bundle:" + bundle.sha256
    dup = find_duplicate(store, digest)
    if dup is not None:
        raise UserError(f"{path} was already imported as session {dup['uid']} "
                        f"({dup['name'] or 'unnamed'}); nothing imported")
    return write_imports(store, _parsed(bundle, name=name, command_line=command_line),
                         input_digest=digest)
