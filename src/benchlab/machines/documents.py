"""Reading the JSON documents the machines layer writes (calibrations, variability profiles)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from benchlab.errors import UserError


def read_json_document(path: str | os.PathLike, fmt: str, what: str, how_to_make: str) -> dict[str, Any]:
    """The JSON object in ``path`` whose ``"format"`` is ``fmt``.

    ``what`` names the document in errors ("calibration"); ``how_to_make`` is the command
    that writes one. Raises a one-line UserError for an unreadable file, bad JSON or another
    kind of document.
    """
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as err:
        raise UserError(f"cannot read {what} {path}: {err.strerror}; create it with "
                        f"`{how_to_make}`") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path} is not valid JSON ({err.msg} at line {err.lineno}); recreate "
                        f"it with `{how_to_make}`") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise UserError(f"{path} is not a {what} (no \"format\": \"{fmt}\"); create one with "
                        f"`{how_to_make}`")
    return doc
