"""The report as Markdown for pull requests: the same numbers as the HTML, figures linked.

Figures are PNG files written by :mod:`benchlab.report.plots`; the Markdown links them by a
path relative to the Markdown file. User-controlled strings are escaped for Markdown and
HTML (``<``, ``>``, ``&``, ``|``, brackets, backticks, newlines), so a benchmark named
``<script>`` or ``[x](javascript:...)`` shows as text, never as markup or a link.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchlab.report.comparison_words import check_line, power_note, verdict_sentence
from benchlab.report.model import ReportModel
from benchlab.report.verdict_text import DATA_CHECKS
from benchlab.units import format_value

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "[": "\\[",
                          "]": "\\]", "`": "\\`", "*": "\\*", "_": "\\_", "\n": " ", "\r": " ",
                          "#": "\\#", "!": "\\!"})


def esc(value: object) -> str:
    """Any value as inert Markdown text (one line)."""
    return str(value).translate(_ESCAPES)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return out + [""]


def _figure(spec, figure_dir: Path | None, base: Path) -> list[str]:
    if figure_dir is None:
        return []
    rel = os.path.relpath(figure_dir / f"{spec.key}.png", base)
    lines = [f"![{esc(spec.title)}]({Path(rel).as_posix()})", ""]
    if spec.caption:
        lines += [f"*{esc(spec.caption)}*", ""]
    return lines


def render_markdown(model: ReportModel, *, figure_dir: Path | None = None,
                    base: Path = Path(".")) -> str:
    """The report as Markdown; figures linked from ``figure_dir`` relative to ``base``."""
    out = [f"# {esc(model.title)}", "", f"Generated {model.generated_utc}.", ""]
    out += [f"- **note**: {esc(n)}" for n in model.notes] + ([""] if model.notes else [])
    for sec in model.first:
        out += _section(sec, figure_dir, base)
    if model.comparison is not None:
        out += _comparison(model.comparison, figure_dir, base)
    for b in model.benchmarks:
        out += _benchmark(b, figure_dir, base)
    for sec in model.extra:
        out += _section(sec, figure_dir, base)
    if model.sessions:
        out += _sessions(model.sessions)
    return "\n".join(out) + "\n"


def _section(sec, figure_dir: Path | None, base: Path) -> list[str]:
    """A generic section: its title, paragraphs, figures and tables."""
    out = [f"## {esc(sec.title)}", ""] + [esc(p) + "\n" for p in sec.paragraphs]
    for spec in sec.figures:
        out += _figure(spec, figure_dir, base)
    for t in sec.tables:
        if t.caption:
            out += [f"**{esc(t.caption)}**", ""]
        out += _table(t.header, t.rows)
    return out


def _value(v, unit: str) -> str:
    return format_value(v, unit, 5)


def _comparison(c, figure_dir: Path | None, base: Path) -> list[str]:
    """The comparison against the reference: the verdict as run prints it, the table of its
    numbers, the checks of the data (every JayBeams step and the power plan when they decide)."""
    out = [f"## Comparison against {esc(c.reference)}", ""]
    if c.jaybeams:
        out += [f"- **{esc(r.name_a)} vs {esc(r.name_b)}**: {esc(verdict_sentence(r, c.unit))}"
                for r in c.results] + [""]
    else:  # the verdict's own lines, word for word: its header says why levels differ
        out += [f"- {esc(line)}" for _, line in c.verdict_lines] + [""]
    out += _table(*_comparison_table(c))
    for r in c.results:
        if c.jaybeams:
            out += [f"**{esc(r.name_a)} vs {esc(r.name_b)}** — power: "
                    f"{esc(power_note(r, c.unit))}", ""]
        else:
            out += [f"**{esc(r.name_a)} vs {esc(r.name_b)}** — the data:", ""]
        out += [f"- {esc(ch.status)}: {esc(check_line(r, ch))}" for ch in r.checks
                if c.jaybeams or ch.name in DATA_CHECKS] + [""]
    for spec in c.figures:
        out += _figure(spec, figure_dir, base)
    return out


def _comparison_table(c) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the comparison table: the verdict's numbers as its sentences write
    them (the JayBeams Hodges-Lehmann shift too when that analysis decides)."""
    f = _value
    header = ["command", "n", "median"]
    if c.jaybeams:  # that analysis's own estimate, interval, p and outcome
        header += [f"HL shift vs {c.reference}", "95 % interval of the shift", "p", "outcome"]
    else:
        header += ["estimate", *(("interval (its Holm level)", "p (Holm-adjusted)") if c.holm
                                 else ("interval", "p")), "outcome"]
    rows = []
    for r, q in zip(c.results, c.ratios):
        hl = r.hodges_lehmann
        row = [r.name_a, str(r.n_a), f(r.summary_a.median, c.unit)]
        if c.jaybeams:
            row += [f(hl.estimate, c.unit) if hl else "-",
                    f"{f(hl.ci_low, c.unit)} .. {f(hl.ci_high, c.unit)}" if hl else "-",
                    f"{r.p_decision:.3g}" if r.p_decision is not None else "-", r.outcome]
        else:
            row += [*q["numbers"], q["outcome"]]
        rows.append(row + [f"{c.instructions[r.name_a]:,.0f}" if r.name_a in c.instructions
                           else "-"])
    return header + ["instructions / run"], rows


def _benchmark(b, figure_dir: Path | None, base: Path) -> list[str]:
    """One benchmark's section: its summary table, steady state and figures."""
    f, s, u = _value, b.summary, b.series.unit
    out = [f"## {esc(b.series.benchmark)} ({esc(b.series.metric)}, session "
           f"{esc(b.series.session_uid)})", ""]
    if b.command:
        out += [f"Command: {esc(b.command)}", ""]
    ci = f"{f(b.median_ci[0], u)} .. {f(b.median_ci[1], u)}" if b.median_ci else "-"
    out += _table(["n", "median", "95 % interval", "MAD/√n", "mean", "sd", "min", "p95",
                   "p99", "max", "outliers"],
                  [[str(s.n), f(s.median, u), ci, f(b.mad_uncertainty, u), f(s.mean, u),
                    f(s.sd, u), f(s.min, u), f(s.p95, u), f(s.p99, u), f(s.max, u),
                    str(b.n_outliers)]])
    if b.steady is not None:
        out += [f"Steady state: {esc(b.steady.classification)}; level shifts at "
                f"{esc(b.steady.level_shifts or 'none')}.", ""]
    for spec in b.figures:
        out += _figure(spec, figure_dir, base)
    return out


def _sessions(sessions) -> list[str]:
    """The sessions' environments side by side, and each session's failed runs."""
    out = ["## Sessions and environment", ""]
    header = ["field"] + [ss.session["uid"] for ss in sessions]
    rows = [[label] + [ss.environment_rows[i][1] + (" (differs)" if
                                                    ss.environment_rows[i][2] else "")
                       for ss in sessions]
            for i, (label, _, _) in enumerate(sessions[0].environment_rows)]
    out += _table(header, rows)
    for ss in sessions:
        if ss.failed_runs:
            out += [f"Failed runs in session {esc(ss.session['uid'])}:", ""]
            out += _table(["run", "status", "exit", "stderr (tail)"],
                          [[str(r["seq"]), r["status"], str(r.get("exit_code")),
                            r["stderr_tail"][-300:]] for r in ss.failed_runs[:20]])
    return out
