"""A session's verdict: read its series from the store, decide once, render everywhere.

Data flow store -> analyse -> report: :func:`session_verdict` reads a session's series and calls
:func:`benchlab.stats.verdict_model.verdict_model`; ``benchlab run``, ``show``, ``report``, the
exports and bundles render the :class:`~benchlab.stats.verdict_model.Verdict` it returns with
:func:`benchlab.report.verdict_text.verdict_lines`. The baseline rule and its settings are
stored in the session's metadata (key ``"verdict"``) by ``run``
(:func:`benchlab.cli.run_outcome.store_run_verdict`, through :mod:`benchlab.store.session_metadata`),
with the verdict itself as data under ``"result"`` (so the JSON export and bundles carry it), and
``show`` months later gives exactly what ``run`` gave. This module only reads the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from benchlab.stats.verdict_model import Verdict

# The statistics and their words are imported by the functions that use them: `run -q` stores
# the verdict's settings through this module without numpy (start-up).

#: Key of the verdict's settings in a session's metadata.
METADATA_KEY = "verdict"


def verdict_settings(*, reference: str | None = None, sort: str = "auto",
                     metric: str | None = None,
                     confidence_level: float = 0.95, equivalence_margin: float = 0.01
                     ) -> dict[str, Any]:
    """The settings that decide a session's verdict, as stored in its metadata (``metric``
    None: the session's default, :func:`benchlab.report.run_summary.default_verdict_metric`)."""
    return {"reference": reference, "sort": sort, "metric": metric,
            "confidence_level": float(confidence_level),
            "equivalence_margin": float(equivalence_margin)}


def stored_settings(store: Any, session_id: int) -> dict[str, Any]:
    """The session's stored verdict settings; the defaults for a session stored without them
    (imports, sessions of older versions)."""
    meta = store.get_session(session_id).get("metadata") or {}
    stored = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    out = verdict_settings()
    if isinstance(stored, dict):
        out.update({k: v for k, v in stored.items() if k in out})
    return out


def session_series(store: Any, session_id: int, metric: str = "wall"
                   ) -> list[tuple[str, np.ndarray]]:
    """(benchmark name, measured values) in command order, exactly the series ``run`` judges
    (:func:`benchlab.report.run_summary.verdict_series`: failed runs too with ``-i``)."""
    from benchlab.report.run_summary import verdict_series

    return verdict_series(store, session_id, metric)


def session_verdict(store: Any, session_id: int, **overrides: Any) -> Verdict | None:
    """The verdict of a stored session, with its stored settings (``overrides`` replace them:
    keys of :func:`verdict_settings`); None with fewer than two measured benchmarks."""
    from benchlab.report.run_summary import default_verdict_metric
    from benchlab.stats.verdict_model import verdict_model

    settings = {**stored_settings(store, session_id), **overrides}
    if settings["metric"] is None:
        settings["metric"] = default_verdict_metric(store, session_id)
    series = session_series(store, session_id, settings["metric"])
    if len(series) < 2:
        return None
    names = [name for name, _ in series]
    reference = settings["reference"] if settings["reference"] in names else None
    unit = _unit(store, session_id, settings["metric"])
    return verdict_model(series, reference=reference, sort=settings["sort"],
                         metric=settings["metric"], unit=unit,
                         confidence_level=settings["confidence_level"],
                         equivalence_margin=settings["equivalence_margin"])


def _unit(store: Any, session_id: int, metric: str) -> str:
    return store.metric_unit(session_id, metric) or ""


def session_verdict_lines(store: Any, session_id: int, verdict: Verdict | None = None,
                          **overrides: Any) -> list[str]:
    """``verdict`` (default: :func:`session_verdict` with ``overrides``) in words, sorted as the
    session's stored ``sort`` says; [] with fewer than two measured benchmarks. A session run
    ``--until-decided`` gets its sequential design's decision instead
    (:func:`benchlab.report.verdict_text.sequential_lines`)."""
    from benchlab.report.verdict_text import verdict_lines

    sequential = sequential_verdict_lines(store, session_id)
    if sequential:
        return sequential
    meta = store.get_session(session_id).get("metadata") or {}
    if verdict is None:
        verdict = session_verdict(store, session_id, **overrides)
    if verdict is None:
        return []
    from benchlab.store.formats.tool_metadata import repetition_hint

    sort = {**stored_settings(store, session_id), **overrides}["sort"]
    # an imported session gets its tool's way to more values (--benchmark_repetitions=10)
    return verdict_lines(verdict, sort=sort, more_runs=repetition_hint(meta))


def sequential_verdict_lines(store: Any, session_id: int) -> list[str]:
    """The words of a session run ``--until-decided``: its sequential design's own decision
    (:func:`benchlab.report.verdict_text.sequential_lines`), since a fixed-sample p-value or
    interval is not valid after a sequential stop; [] for any other session."""
    from benchlab.report.verdict_text import sequential_lines

    meta = store.get_session(session_id).get("metadata") or {}
    sequential = meta.get("until_decided") if isinstance(meta, dict) else None
    if not (isinstance(sequential, dict) and "decision" in sequential):
        return []
    names = [b["name"] for b in store.benchmarks(session_id)]
    unit = _unit(store, session_id, (sequential.get("options") or {}).get("metric", "wall"))
    return sequential_lines(sequential, names, unit or "ns")


def speed_verdict(series: list[tuple[str, Any]], *, sort: str = "auto",
                  reference_index: int | None = None, confidence_level: float = 0.95) -> list[str]:
    """hyperfine's "X ran N times faster than Y" made honest, for series not in a store.

    Parameters
    ----------
    series : list of (name, array of wall times in ns)
        Every benchmark's measured wall times, in command order.
    sort : {'auto', 'command', 'mean-time'}
        hyperfine's ``--sort``: the baseline is the fastest median unless ``command``.
    reference_index : int, optional
        ``--reference``: the baseline, whatever the sort.
    confidence_level : float
        1 - alpha, the family-wise error rate of the claims.
    """
    import numpy as np

    from benchlab.report.verdict_text import verdict_lines
    from benchlab.stats.verdict_model import verdict_model

    usable = [(name, np.asarray(v, dtype=float)) for name, v in series]
    if len(usable) < 2:
        return []
    reference = usable[reference_index][0] if reference_index is not None else None
    verdict = verdict_model(usable, reference=reference, sort=sort,
                            confidence_level=confidence_level)
    return verdict_lines(verdict, sort=sort)

