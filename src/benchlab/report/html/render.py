"""Renders a :class:`benchlab.report.model.ReportModel` into one self-contained HTML file.

jinja2 with autoescaping on for every value (names, commands, environment values, stderr
tails are user-controlled); only three things are inserted unescaped, all produced by code, not
users: bokeh's JavaScript library, bokeh's document script (user strings inside it are JSON
that bokeh escapes for a ``<script>`` context) and bokeh's figure ``<div>`` s.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import benchlab
from benchlab.errors import UserError
from benchlab.report.comparison_words import check_line, power_note, verdict_sentence
from benchlab.report.model import ReportModel
from benchlab.report.verdict_text import DATA_CHECKS
from benchlab.units import format_value


def _fmt(value: float | None, unit: str) -> str:
    return format_value(value, unit, digits=5)


def _pval(p: float | None) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    return f"{p:.3g}" if p >= 1e-4 else "< 0.0001"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def render_html(model: ReportModel) -> str:
    """The whole report as one HTML document (bokeh's JS inlined: works offline)."""
    import jinja2

    from benchlab.report.html.bokeh_figures import components, inline_resources

    figures = model.figures()
    script, divs = components(figures)
    div_of = {id(f): d for f, d in zip(figures, divs)}
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchlab.report.html", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(
        model=model, version=benchlab.__version__,
        bokeh_js=inline_resources() if figures else "", bokeh_script=script,
        div=lambda f: div_of[id(f)], fmt=_fmt, pval=_pval, count=_count,
        verdict=verdict_sentence, power=power_note, check=check_line, data_checks=DATA_CHECKS)


def write_atomically(path: str | os.PathLike, text: str) -> int:
    """Write ``text`` to ``path`` via a temporary file and rename: a failed or interrupted
    report never leaves a half-written file behind. Returns the size in bytes."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{target} is a directory; give a file name, e.g. -o report.html")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"directory {parent} does not exist; create it or choose another -o")
    data = text.encode()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".benchlab-report-", dir=parent)
    except OSError as exc:
        raise UserError(f"cannot write in {parent}: {exc.strerror}; choose another -o") \
            from None
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 would hide the report from the team
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write {target}: {exc.strerror}; choose another -o") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)
