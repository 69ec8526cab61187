"""The verdict at the end of a text export (markdown, asciidoc, orgmode): the lines ``show``
prints for each exported session, beside hyperfine's table."""

from __future__ import annotations

from typing import Any

from benchlab.report.speed_verdict import session_verdict_lines

#: How each text export format sets the verdict's lines apart from its table: (opening,
#: closing) of a block whose lines are shown as they are (no markup read inside).
_VERDICT_BLOCKS = {"markdown": ("", ""), "asciidoc": ("....", "...."),
                   "orgmode": ("#+begin_example", "#+end_example")}


def export_verdict_text(store: Any, keys: list, fmt: str) -> str:
    """The verdict of each session named by ``keys`` (none: the newest) for the end of a
    ``markdown``, ``asciidoc`` or ``orgmode`` export: the lines ``show`` prints, in a block
    shown verbatim (Markdown: indented as code), so the export reads the verdict's own
    ratio, interval, level and p beside hyperfine's table (whose Relative column is hyperfine's
    ratio of means). '' for other formats and for sessions with nothing to compare."""
    if fmt not in _VERDICT_BLOCKS:
        return ""
    opening, closing = _VERDICT_BLOCKS[fmt]
    out: list[str] = []
    seen: set[int] = set()
    for key in keys or [store.newest_uid()]:
        session = store.get_session(key)
        if session["id"] in seen:
            continue
        seen.add(session["id"])
        lines = _shown_lines(store, session)
        if not lines:
            continue
        indent = "    " if fmt == "markdown" else ""
        out += ["", f"Verdict of session {session['uid']} (as benchlab show prints it):", ""]
        out += [opening] if opening else []
        out += [indent + line for line in lines]
        out += [closing] if closing else []
    return "\n".join(out) + "\n" if out else ""


def _shown_lines(store: Any, session: dict) -> list[str]:
    """The verdict lines ``show`` prints for ``session``: an ``ab`` session's gate (its
    paired decisions as the job printed them), else :func:`session_verdict_lines`."""
    from benchlab.report import ab_session

    gate = ab_session.gate_report_of(session)
    if gate is not None:
        return ab_session.gate_lines(gate)
    return session_verdict_lines(store, session["id"])
