"""An ``ab`` session read back: the gate's paired decisions first, as ``benchlab ab`` printed them.

An ``ab`` session stores both revisions' runs under names such as ``work@base`` and
``work@head``, and its metadata (``ab``) holds what the gate decided on them: per benchmark and
metric the head/base ratio of the **pairs** with its repeated interval, the outcome, the pairs
and the seconds measured. ``show``, ``report`` and ``compare`` of such a session open with those
decisions (:func:`gate_report_of` rebuilds the :class:`~benchlab.ci.report_model.GateReport`
the job rendered, so the table and the verdict line are the job's own), and do not judge the
two revisions' runs as independent samples against one reference: that comparison ignores the
pairing, so on a shared machine it can read "2 % faster" where the pairs said "undecided", or
the reverse. The runs stay listed below it, as plain descriptions of each side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # imported where used: show reads every session, few are ab sessions
    from benchlab.ci.report_model import GateReport
    from benchlab.report.model import Section

#: The words that introduce the gate's decisions wherever an ``ab`` session is shown.
HEADING = ("the gate's decisions (benchlab ab: head/base within interleaved pairs, the repeated "
        "interval the job decided on):")
#: Why the unpaired comparison of the two sides is not shown as a verdict.
UNPAIRED_NOTE = ("the runs of each side are not judged as independent samples: the pairs "
                 "cancel what the machine did during each pair, an unpaired comparison of the "
                 "same runs cannot (`benchlab compare NAME@head NAME@base` makes one on "
                 "request)")


def gate_report_of(session: dict[str, Any]) -> "GateReport | None":
    """The gate's report of an ``ab`` session (a session dict as the store returns it, with
    ``metadata``, ``uid`` and ``command_line``); None when the session is not one, or ended
    before the gate decided anything."""
    meta = session.get("metadata")
    ab = meta.get("ab") if isinstance(meta, dict) else None
    if not isinstance(ab, dict) or not isinstance(ab.get("decisions"), list):
        return None
    from benchlab.ci.gate import GateDecision, exit_status
    from benchlab.ci.report_model import GateReport

    decisions = [GateDecision.from_dict(d) for d in ab["decisions"] if isinstance(d, dict)]
    failure = ab.get("failure") or None
    if not decisions and not failure:
        return None
    argv = session.get("command_line") or []
    fail_undecided = isinstance(argv, list) and "--fail-undecided" in argv
    revisions = {}
    for label in ("base", "head"):
        if isinstance(ab.get(label), dict):
            revisions[label] = {k: v for k, v in ab[label].items() if k != "build_log"}
    return GateReport("ab", session.get("uid"), revisions, decisions,
                      exit_status(decisions, failed=bool(failure),
                                  fail_undecided=fail_undecided),
                      pairs=_numbers(ab.get("pairs"), int),
                      seconds=_numbers(ab.get("seconds"), float), failure=failure,
                      fail_undecided=fail_undecided,
                      notes=[str(n) for n in ab.get("notes") or []])


def _numbers(value: Any, kind: type) -> dict[str, Any]:
    """``{benchmark: number}`` from stored metadata (anything else: empty)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): kind(v) for k, v in value.items() if isinstance(v, (int, float))}


def gate_lines(report: "GateReport") -> list[str]:
    """The lines ``show`` and ``compare`` print for an ``ab`` session: a heading, the gate's
    table and verdict line exactly as the job printed them, and why nothing else is judged."""
    from benchlab.report import ci_outputs

    return [HEADING, *ci_outputs.terminal_table(report).splitlines(), f"note: {UNPAIRED_NOTE}"]


def gate_section(report: "GateReport") -> "Section":
    """The report section of an ``ab`` session's gate: its verdict line, every decision
    (regressions first) in the gate's columns, the revisions and the job's notes."""
    from benchlab.report import ci_outputs
    from benchlab.report.model import Section, Table

    rows = [list(ci_outputs.table_row(report, d)) for d in ci_outputs.ordered(report)]
    paragraphs = [ci_outputs.summary_line(report), HEADING[0].upper() + HEADING[1:-1] + "."]
    for label, rev in report.revisions.items():
        commit = str(rev.get("commit") or "")[:12]
        dirty = " with uncommitted changes" if rev.get("dirty") else ""
        paragraphs.append(f"{label}: {commit}{dirty} {rev.get('subject') or ''}".rstrip())
    paragraphs += [f"note: {n}" for n in report.notes]
    paragraphs.append(UNPAIRED_NOTE[0].upper() + UNPAIRED_NOTE[1:] + ".")
    return Section(f"gate-{report.session}", f"Gate (ab session {report.session}): "
                   f"{report.verdict}", paragraphs,
                   [Table("", list(ci_outputs.table_header(report)), rows,
                          [d.regression for d in ci_outputs.ordered(report)])])


def open_with_gates(store: Any, model: Any, selectors: Sequence[str], *,
                    explicit_reference: bool = False) -> None:
    """Put the gate of every ``ab`` session ``selectors`` name (none: the newest session) first
    in ``model`` (a :class:`~benchlab.report.model.ReportModel`); when every selector is such a
    session and no reference was asked for, the unpaired comparison of its sides is left out
    (the gate's pairs are the verdict; the runs stay described)."""
    keys = list(selectors) or [store.newest_uid()]
    gates = []
    for key in keys:
        session = _session_named(store, key)
        report = gate_report_of(session) if session is not None else None
        if report is not None:
            gates.append(report)
    model.first.extend(gate_section(g) for g in gates)
    if gates and len(gates) == len(keys) and not explicit_reference:
        model.comparison = None


def _session_named(store: Any, key: str) -> dict[str, Any] | None:
    """The session ``key`` names when it names one and not a series (``SESSION:NAME``)."""
    from benchlab.errors import UserError

    if ":" in key or "/" in key:
        return None
    try:
        return store.find_session(key)
    except UserError:
        return None
