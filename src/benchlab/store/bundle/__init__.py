"""Bundles: one deterministic ``.benchlab.tar.gz`` that carries sessions to another machine.

- :mod:`.archive`: the archive format (manifest with every member's SHA-256, deterministic
  bytes), :func:`write_bundle` and :func:`read_bundle` (verification with one-line errors).
- :mod:`.data`: the data member (sessions as benchlab's JSON export), back into a scratch store
  for re-analysis, or imported into a store with provenance (import format ``bundle``).

The members that need higher layers (workload sources, executables' digests, the machine
profile, the analysis and the report) are gathered by :mod:`benchlab.report.reproduce`; the
layout is documented in ``docs/bundle.md``. Importing this package registers the import format.
"""

from benchlab.store.bundle.archive import (
    BUNDLE_FORMAT,
    BUNDLE_VERSION,
    MANIFEST,
    MAX_JSON_DEPTH,
    MAX_MEMBERS,
    MAX_TOTAL_BYTES,
    Bundle,
    bundle_bytes,
    canonical_bytes,
    known_member,
    loads_bounded,
    looks_like_bundle,
    read_bundle,
    sha256_hex,
    write_bundle,
)
from benchlab.store.bundle.data import (
    DATA_MEMBER,
    import_bundle,
    load_into_store,
    session_documents,
    sessions_data,
)
from benchlab.store.formats import register_import_format

register_import_format("bundle", import_bundle, detect=looks_like_bundle)

__all__ = ["BUNDLE_FORMAT", "BUNDLE_VERSION", "MANIFEST", "MAX_JSON_DEPTH", "MAX_MEMBERS",
           "MAX_TOTAL_BYTES", "Bundle", "bundle_bytes", "known_member", "loads_bounded",
           "canonical_bytes", "looks_like_bundle", "read_bundle", "sha256_hex", "write_bundle",
           "DATA_MEMBER", "import_bundle", "load_into_store", "session_documents",
           "sessions_data"]
