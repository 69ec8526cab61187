"""What CI systems read from a gate: Markdown, JUnit XML, JSON (docs/ci.schema.json), a table.

All four render one :class:`GateReport` (plain data: the revisions, each benchmark's decision,
the exit status and why), so they cannot disagree.

- Markdown: a heading with the verdict, a table (benchmark, metric, ratio head/base with its
  interval, threshold, outcome, pairs), the revisions; GitHub shows it as the job's summary when
  written to ``$GITHUB_STEP_SUMMARY``.
- JUnit XML: one ``<testsuite name="benchlab">``, one ``<testcase>`` per benchmark and metric; a
  regression is a ``<failure>``, a failed build or run an ``<error>``, an undecided result
  ``<skipped>`` only with ``--fail-undecided`` off (so it shows but does not fail).
- JSON: ``to_json`` (schema ``docs/ci.schema.json``, ``"schema": "benchlab-gate/1"``).
- Terminal: one screen, one line per decision.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

from benchlab.ci.gate import GateDecision
from benchlab.ci.report_model import GateReport

SCHEMA = "benchlab-gate/1"


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{100.0 * (x - 1.0):+.2f} %"


def ratio_text(d: GateDecision) -> str:
    """``1.0123 [1.0051, 1.0197]`` (head/base), or ``n/a``."""
    if not math.isfinite(d.ratio):
        return "n/a"
    return f"{d.ratio:.4f} [{d.low:.4f}, {d.high:.4f}]"


def _outcome_words(d: GateDecision) -> str:
    if d.outcome == "slower":
        return "REGRESSION"
    if d.outcome == "faster":
        return "improvement"
    if d.outcome == "equivalent":
        return "equivalent"
    return "undecided" + (" (no regression beyond threshold)" if d.no_regression else "")


def metric_text(d: GateDecision) -> str:
    """The metric's name, with its unit and direction when the program reported it."""
    if not d.unit and d.direction != "higher":
        return d.metric
    better = "higher is better" if d.direction == "higher" else "lower is better"
    return f"{d.metric} ({d.unit + ', ' if d.unit else ''}{better})"


def _count(report: GateReport, d: GateDecision) -> str:
    """Pairs of a paired metric; values per side (n) otherwise."""
    if report.pairs and d.metric != "instructions":
        return str(report.pairs.get(d.benchmark, d.n_base))
    return str(d.n_base)


def _count_header(report: GateReport) -> str:
    return "pairs" if report.pairs else "n"


def _beyond(d: GateDecision) -> str:
    """How a regression's ratio passes its threshold: ``> 1.02``, or ``< 0.98`` for a
    higher-is-better metric."""
    if d.direction == "higher":
        return f"< {1 / (1 + d.threshold):.4g}"
    return f"> {1 + d.threshold:g}"


#: Decisions listed on the terminal before the rest is only counted (one screen).
SCREEN_ROWS = 20
#: Markdown is kept under this many characters (GitHub's PR comment and summary limit is 65,536).
MARKDOWN_LIMIT = 60_000
#: Regressions named in the one summary line before the rest is counted.
NAMED_REGRESSIONS = 5


def ordered(report: GateReport) -> list[GateDecision]:
    """Regressions first, then undecided results that could still be one, then the rest."""
    def rank(d: GateDecision) -> int:
        if d.regression:
            return 0
        return 1 if d.outcome == "undecided" and not d.no_regression else 2
    return sorted(report.decisions, key=rank)


def _rest_text(rest: list[GateDecision]) -> str:
    """``183 more: 150 equivalent, 30 undecided, 3 improvement`` for the decisions not listed."""
    counts: dict[str, int] = {}
    for d in rest:
        word = _outcome_words(d).split(" (")[0]
        counts[word] = counts.get(word, 0) + 1
    return f"{len(rest)} more: " + ", ".join(f"{n} {w}" for w, n in sorted(counts.items()))


def table_header(report: GateReport) -> tuple[str, ...]:
    """The columns of the gate's table: the last is "pairs" for a paired gate, else "n"."""
    return ("benchmark", "metric", "head/base [interval]", "change", "threshold", "outcome",
            _count_header(report))


def table_row(report: GateReport, d: GateDecision) -> tuple[str, ...]:
    """One decision as the gate's table shows it (columns of :func:`table_header`)."""
    return (d.benchmark, metric_text(d), ratio_text(d), _pct(d.ratio),
            f"{100 * d.threshold:g} %", _outcome_words(d), _count(report, d))


def terminal_table(report: GateReport) -> str:
    """One screen: a line per decision (past :data:`SCREEN_ROWS` decisions: the regressions,
    then the undecided, then a count of the rest), then the verdict and why."""
    rows = [table_header(report)]
    shown = report.decisions
    rest: list[GateDecision] = []
    if len(shown) > SCREEN_ROWS:
        listed = ordered(report)
        shown, rest = listed[:SCREEN_ROWS], listed[SCREEN_ROWS:]
    rows += [table_row(report, d) for d in shown]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if rest:
        lines.append(f"... {_rest_text(rest)} (all in --json and --junit)")
    lines.append("")
    lines += [f"note: {n}" for n in report.notes[:6]]
    lines.append(summary_line(report))
    return "\n".join(lines)


def summary_line(report: GateReport) -> str:
    """The one line that says the verdict and why (exit status in brackets); at
    ``--alpha-scope suite`` also how alpha was spent over the job's decisions."""
    line = _verdict_line(report)
    if (report.alpha or {}).get("scope") != "suite":
        return line
    said, _, status = line.rpartition(" [exit ")
    return f"{said}; {report.alpha['statement']} [exit {status}"


def _verdict_line(report: GateReport) -> str:
    """The verdict and why, ending ``[exit N]``."""
    regressions = [d for d in report.decisions if d.regression]
    undecided = [d for d in report.decisions if d.outcome == "undecided"]
    if report.failure:
        return f"FAILED: {report.failure} [exit {report.exit_status}]"
    if report.kind == "bisect":
        first = report.revisions.get("first_bad")
        if first is None or not report.decisions:
            return f"no first bad commit: {'; '.join(report.notes[:1])} [exit " \
                   f"{report.exit_status}]"
        d = report.decisions[0]
        merge = (f" (brought in by merge {first['merged_by'][:12]} "
                 f"{first.get('merged_by_subject') or ''})" if first.get("merged_by") else "")
        return (f"first bad commit: {first.get('commit')} {first.get('subject', '')}{merge}: "
                f"{d.benchmark} ({d.metric}) x{d.ratio:.4f} [{d.low:.4f}, {d.high:.4f}] of the "
                f"good build [exit {report.exit_status}]")
    if regressions:
        named = "; ".join(f"{d.benchmark} ({d.metric}) {_pct(d.ratio)}, head/base "
                          f"{ratio_text(d)} {_beyond(d)}"
                          for d in regressions[:NAMED_REGRESSIONS])
        if len(regressions) > NAMED_REGRESSIONS:
            named += f"; and {len(regressions) - NAMED_REGRESSIONS} more"
        return f"REGRESSION: {named} [exit {report.exit_status}]"
    if undecided and report.fail_undecided and report.exit_status:
        open_ = [d for d in undecided if not d.no_regression]
        return (f"FAILED under --fail-undecided: {len(open_)} undecided result(s) could still "
                f"be a regression ({', '.join(d.benchmark for d in open_[:NAMED_REGRESSIONS])}"
                f"{', ...' if len(open_) > NAMED_REGRESSIONS else ''}) [exit "
                f"{report.exit_status}]")
    text = "passed: no regression beyond its threshold was decided"
    if undecided:
        fails = " (--fail-undecided: fails)" if report.fail_undecided and \
            report.exit_status else " (undecided never fails without --fail-undecided)"
        text += f"; {len(undecided)} undecided{fails}"
    improvements = [d for d in report.decisions if d.improvement]
    if improvements:
        text += "; improved: " + ", ".join(f"{d.benchmark} {_pct(d.ratio)}" for d in improvements)
    return f"{text} [exit {report.exit_status}]"


def markdown(report: GateReport) -> str:
    """The Markdown summary (GitHub renders it as the job summary)."""
    icon = {"passed": "✅", "regression": "❌", "failed": "⚠️"}.get(report.verdict, "⚠️")
    out = [f"## {icon} benchlab {report.kind}: {report.verdict}", "",
           summary_line(report), ""]
    out += ["| benchmark | metric | head/base [interval] | change | threshold | outcome | "
            f"{_count_header(report)} |", "|---|---|---|---|---|---|---|"]
    size = sum(len(line) + 1 for line in out) + 4_000  # room for revisions and notes
    decisions = report.decisions if len(report.decisions) <= SCREEN_ROWS else ordered(report)
    for i, d in enumerate(decisions):
        row = "| " + " | ".join(table_row(report, d)) + " |"
        if size + len(row) + 200 > MARKDOWN_LIMIT:
            out.append(f"\n{_rest_text(decisions[i:])}: not listed, to fit a pull request's "
                       f"comment (the JSON and JUnit outputs list every benchmark)")
            break
        out.append(row)
        size += len(row) + 1
    out.append("")
    for label, rev in report.revisions.items():
        commit = str(rev.get("commit") or rev.get("session") or "")[:12]
        dirty = " + uncommitted changes" if rev.get("dirty") else ""
        out.append(f"- **{label}**: `{commit}`{dirty} {rev.get('subject', '')}".rstrip())
    if report.session:
        out.append(f"- session: `{report.session}` (`benchlab show {report.session}`)")
    for note in report.notes:
        if size + len(note) + 200 > MARKDOWN_LIMIT:
            out.append("- (more notes in the JSON output)")
            break
        out.append(f"- {note}")
        size += len(note) + 3
    return "\n".join(out) + "\n"


def junit(report: GateReport) -> str:
    """JUnit XML: a testcase per benchmark and metric; a regression is a failure."""
    suite = ET.Element("testsuite", name=f"benchlab {report.kind}")
    failures = errors = skipped = 0
    for d in report.decisions:
        case = ET.SubElement(suite, "testcase", classname=f"benchlab.{d.metric}",
                             name=d.benchmark,
                             time=f"{report.seconds.get(d.benchmark, 0.0):.3f}")
        text = (f"{d.benchmark} ({d.metric}): head/base {ratio_text(d)}, threshold "
                f"{100 * d.threshold:g} %, {d.outcome}")
        if d.regression:
            failures += 1
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        elif d.outcome == "undecided" and report.fail_undecided and not d.no_regression:
            failures += 1
            ET.SubElement(case, "failure", message=text, type="undecided").text = text
        elif d.outcome == "undecided":
            skipped += 1
            ET.SubElement(case, "skipped", message=text)
        ET.SubElement(case, "system-out").text = text
    if report.failure:
        errors += 1
        case = ET.SubElement(suite, "testcase", classname="benchlab.job", name="build-and-run")
        ET.SubElement(case, "error", message=report.failure, type="failed").text = report.failure
    suite.set("tests", str(len(suite.findall("testcase"))))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", f"{sum(report.seconds.values()):.3f}")
    root = ET.Element("testsuites", name="benchlab", tests=suite.get("tests"),
                      failures=str(failures), errors=str(errors))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def to_json(report: GateReport) -> dict[str, Any]:
    """The JSON document of docs/ci.schema.json."""
    return {
        "schema": SCHEMA,
        "kind": report.kind,
        "verdict": report.verdict,
        "exit_status": report.exit_status,
        "summary": summary_line(report),
        "session": report.session,
        "revisions": report.revisions,
        "failure": report.failure,
        "fail_undecided": report.fail_undecided,
        "benchmarks": [{**d.to_dict(),
                        "pairs": report.pairs.get(d.benchmark) if d.metric != "instructions"
                        else None,
                        "seconds": report.seconds.get(d.benchmark)}
                       for d in report.decisions],
        "notes": list(report.notes),
        "alpha": report.alpha,
    }
