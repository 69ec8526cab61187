"""Writes a report in the requested format: one entry point for ``report``, ``compare
--report``, ``run --report`` and ``history``.

Order of work: build everything in memory (every UserError happens here), then write the
figures (``--plots DIR``, or the Markdown report's figure directory), then the report file
atomically. A bad selector therefore leaves no file behind.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from benchlab.errors import UserError, require_extra
from benchlab.report.model import ReportModel, Section, build_report
from benchlab.store.db import Store

FORMATS = ("html", "markdown")


@dataclass
class Written:
    """What was written: the report file, its size in bytes, and figure files."""

    path: Path | None
    size: int
    plots: list[Path] = field(default_factory=list)


def check_output(output: str | None, fmt: str, plots: str | None, *,
                 option: str = "-o") -> None:
    """Fail early, before any computation, on an output that cannot be written; ``option``
    is how the user named the file (``-o``, ``run --report``), for the error's fix."""
    if fmt not in FORMATS:
        raise UserError(f"unknown report format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if output is None and plots is None:
        raise UserError("say where the report goes: -o FILE (and/or --plots DIR)")
    for module in ((("jinja2", "bokeh") if fmt == "html" and output is not None else ())
                   + (("matplotlib",) if plots is not None or fmt == "markdown" else ())):
        require_extra(module, "report", load=False)  # one line naming the extra, before work
    if output is not None:
        target = Path(output)
        if target.is_dir():
            raise UserError(f"{target} is a directory; give a file name, e.g. {option} "
                            f"report.html")
        parent = target.parent if str(target.parent) else Path(".")
        if not parent.is_dir():
            raise UserError(f"directory {target.parent} does not exist; create it or choose "
                            f"another {option}")
        try:  # a probe now, so an unwritable place fails before minutes of computation
            with tempfile.TemporaryFile(dir=parent):
                pass
        except OSError as exc:
            raise UserError(f"cannot write in {parent}: {exc.strerror}; choose another "
                            f"{option}") from None


def write_model(model: ReportModel, output: str | None, *, fmt: str = "html",
                plots: str | None = None) -> Written:
    """Render ``model`` to ``output`` (HTML or Markdown) and figures to ``plots``."""
    from benchlab.report.html.render import render_html, write_atomically

    check_output(output, fmt, plots)
    written: list[Path] = []
    figure_dir = Path(plots) if plots else None
    if fmt == "markdown" and output is not None and figure_dir is None:
        figure_dir = Path(output).with_name(Path(output).stem + "_figures")
    if figure_dir is not None:
        from benchlab.report.plots import FORMATS as PLOT_FORMATS
        from benchlab.report.plots import write_plots

        formats = PLOT_FORMATS if plots else ("png",)
        written = write_plots(model.figures(), figure_dir, formats=formats)
    if output is None:
        return Written(None, 0, written)
    if fmt == "markdown":
        from benchlab.report.markdown import render_markdown

        text = render_markdown(model, figure_dir=figure_dir, base=Path(output).parent)
    else:
        text = render_html(model)
    size = write_atomically(output, text)
    return Written(Path(output), size, written)


def write_report(store: Store, selectors: Sequence[str], output: str | None, *,
                 fmt: str = "html", plots: str | None = None, metric: str | None = None,
                 reference: str | None = None, history: Sequence[str] = (),
                 options=None, extra: Sequence[Section] = ()) -> Written:
    """Build the report of ``selectors`` (plus history sections of the named benchmarks and
    ``extra`` sections) and write it. With only ``history`` names, no series are selected."""
    check_output(output, fmt, plots)
    sections = []
    if history:  # imported only here: the history's rank tests bring in scipy.stats (~1 s)
        from benchlab.report.history import build_history, history_section

        sections = [history_section(build_history(store, name, metric=metric))
                    for name in history]
    if selectors or not (history or extra):  # nothing else asked for: the newest session
        model = build_report(store, selectors, metric=metric, reference=reference,
                             options=options)
    else:
        model = ReportModel("benchlab report: history of " + ", ".join(history) if history
                            else (extra[0].title if extra else "benchlab report"),
                            _now())
    model.extra.extend(sections)
    model.extra.extend(extra)
    if selectors or not (history or extra):
        from benchlab.report.ab_session import open_with_gates

        open_with_gates(store, model, selectors, explicit_reference=reference is not None)
    return write_model(model, output, fmt=fmt, plots=plots)


def write_sections(sections: Sequence[Section], output: str | None, *, fmt: str = "html",
                   plots: str | None = None) -> Written:
    """A report of ``sections`` only (e.g. machine reports, which need no store)."""
    check_output(output, fmt, plots)
    model = ReportModel(sections[0].title if sections else "benchlab report", _now(),
                        extra=list(sections))
    return write_model(model, output, fmt=fmt, plots=plots)


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
