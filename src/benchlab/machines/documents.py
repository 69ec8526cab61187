"""Reading the JSON documents the machines layer writes (calibrations, variability profiles)."""

from __future__ import annotations

import os
from typing import Any

from benchlab.errors import UserError


def read_json_document(path: str | os.PathLike, fmt: str, what: str, how_to_make: str) -> dict[str, Any]:
    """The JSON object in ``path`` whose ``"format"`` is ``fmt``.

    ``what`` names the document in errors ("calibration"); ``how_to_make`` is the command
    that writes one. Raises a one-line UserError for an unreadable file, bad JSON or another
    kind of document.
    """
    from benchlab.store.formats.readers import load_json

    try:
        # the store's reader: binary, UTF-16, gzip, truncated or too deeply nested files and
        # NaN/Infinity become one line instead of a traceback
        doc = load_json(path, what)
    except UserError as err:
        raise UserError(f"{err}; or create a {what} with `{how_to_make}`") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise UserError(f"{path} is not a {what} (no \"format\": \"{fmt}\"); create one with "
                        f"`{how_to_make}`")
    return doc
