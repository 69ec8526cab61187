"""Export formats: one interface and one registry.

An exporter turns the sessions gathered from a store (:class:`~benchlab.store.formats.gather.
SessionData`, in the order asked for) into text: ``export(sessions, options) -> str``, with
:class:`ExportOptions` carrying hyperfine's table options (formats that print no table ignore
them). :data:`EXPORTERS` names each format's function as ``"module:function"``; a format's
module is imported only when that format is written, so listing the formats (``--help``,
``run --export-*``) imports none of them.

Adding an export format is one new module in ``benchlab/store/formats/`` with its ``export``
function, one line in :data:`EXPORTERS`, and its tests (``tests/store/test_exporters.py``
checks every registered format against the interface on a real store).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from benchlab.errors import UserError
from benchlab.records import record

if TYPE_CHECKING:
    from benchlab.store.formats.gather import SessionData


@record(frozen=True)
class ExportOptions:
    """hyperfine's table options: ``time_unit`` (second, millisecond, microsecond; None: chosen
    per table from the fastest mean), ``sort`` (auto, command, mean-time) and ``reference``
    (the benchmark the Relative column divides by; None: the fastest)."""

    time_unit: str | None = None
    sort: str = "auto"
    reference: str | None = None


class Exporter(Protocol):
    """What every export format provides."""

    def __call__(self, sessions: Sequence[SessionData], options: ExportOptions) -> str:
        """The sessions as this format's text."""


#: Export format name -> its exporter, ``"module:function"`` (imported when used).
EXPORTERS: dict[str, str] = {
    "csv": "benchlab.store.formats.csv_long:export",
    "json": "benchlab.store.formats.json_doc:export",
    "hyperfine": "benchlab.store.formats.hyperfine:export",
    "markdown": "benchlab.store.formats.markdown:export",
    "hyperfine-csv": "benchlab.store.formats.hyperfine:export_summary_csv",
    "asciidoc": "benchlab.store.formats.asciidoc:export",
    "orgmode": "benchlab.store.formats.orgmode:export",
}


def exporter(name: str) -> Exporter:
    """The exporter of format ``name``; UserError naming the formats when there is none."""
    target = EXPORTERS.get(name)
    if target is None:
        raise UserError(f"unknown export format {name!r}; choose one of "
                        f"{', '.join(EXPORTERS)}")
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)
