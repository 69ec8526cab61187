"""``benchlab reproduce``: re-analyse a bundle byte for byte, or judge a re-measurement.

Nothing here runs a bundle's code. The re-measurement (plans read and shown before anything
runs, confined to scratch, run through the execution core) is :mod:`benchlab.core.reproduce`,
with the machines' variability and calibration in :mod:`benchlab.machines.reproduce`; this
module checks the analysis (:func:`reproduce_analysis`) and turns a re-measurement into a
judgement (:func:`judge_remeasured`, :mod:`.verdict`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from benchlab.report.reproduce.analysis import (
    ANALYSIS_MEMBER,
    REPORT_HTML,
    REPORT_MD,
    analysis_bytes,
    render_reports,
)
from benchlab.report.reproduce.make import software
from benchlab.store.bundle import Bundle, session_documents
from benchlab.store.bundle.archive import SOFTWARE_MEMBER


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class AnalysisCheck:
    """The outcome of ``reproduce --analysis-only``: digests (SHA-256) bundled and recomputed
    of the analysis, the Markdown report and the HTML report (``html_here`` None: the HTML
    report was not checked, and the caller says so)."""

    analysis_bundled: str
    analysis_here: str
    report_bundled: str
    report_here: str
    html_bundled: str | None = None
    html_here: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when the analysis JSON and the Markdown report match byte for byte, and so
        does the HTML report when it was checked."""
        return (self.analysis_bundled == self.analysis_here
                and self.report_bundled == self.report_here
                and (self.html_here is None or self.html_bundled == self.html_here))


def software_warnings(bundle: Bundle) -> list[str]:
    """One line per library whose version differs from the one the bundle was analysed with."""
    if SOFTWARE_MEMBER not in bundle.members:
        return ["the bundle records no software versions"]
    then, now = bundle.json(SOFTWARE_MEMBER), software()
    if not isinstance(then, dict):
        return [f"{SOFTWARE_MEMBER} is not an object: the versions that made it are unknown"]
    return [f"{key} {then.get(key)} made the bundle, {now[key]} runs here: numbers may differ "
            f"in their last digits" for key in ("python", "numpy", "scipy", "benchlab")
            if then.get(key) != now[key]]


def reproduce_analysis(bundle: Bundle, *, html: bool = True) -> tuple[AnalysisCheck, str]:
    """Re-run the analysis of ``bundle`` from its data; returns the digests and the Markdown
    report recomputed here (the caller shows it).

    With ``html`` the HTML report is rendered here too and compared with the bundled one byte
    for byte (an added ``<script>`` is DIFFERENT, whatever the manifest says); without, or
    when the bundle has none, ``html_here`` is None and the HTML report is not verified.
    """
    docs = session_documents(bundle)
    seed_doc = bundle.json(ANALYSIS_MEMBER)
    seed = seed_doc.get("seed", 1) if isinstance(seed_doc, dict) else 1
    analysis = analysis_bytes(docs, seed=seed if isinstance(seed, int) else 1)
    check_html = html and REPORT_HTML in bundle.members
    markdown, html_text = render_reports(bundle, html=check_html)
    check = AnalysisCheck(_digest(bundle.members[ANALYSIS_MEMBER]), _digest(analysis),
                          _digest(bundle.members.get(REPORT_MD, b"")),
                          _digest(markdown.encode("utf-8")),
                          _digest(bundle.members[REPORT_HTML]) if check_html else None,
                          _digest(html_text.encode("utf-8")) if html_text is not None else None,
                          software_warnings(bundle))
    if not check_html:
        check.warnings.append("the HTML report was not verified (open it only if you trust "
                              "its sender)")
    return check, markdown


def judge_remeasured(remeasured, *, tolerance: float = 0.2):
    """The :class:`.verdict.Judgement` of a :class:`benchlab.machines.reproduce.Remeasured`."""
    from benchlab.report.reproduce.verdict import judge

    return judge(remeasured.pairs, speedup_range=remeasured.speedup_range,
                 tolerance=tolerance, warnings=remeasured.warnings,
                 cpu_quota=remeasured.cpu_quota)


__all__ = ["AnalysisCheck", "reproduce_analysis", "software_warnings", "judge_remeasured"]
