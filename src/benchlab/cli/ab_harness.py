"""``benchlab ab --harness KIND COMMAND``: gate every benchmark a harness reports
(:mod:`benchlab.ci.ab_harness`)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click

from benchlab.errors import UserError
from benchlab.measure.harnesses import harness_kinds

#: The ``--harness`` metavar of ab, gate and bisect: every kind of the harness registry (read
#: from its names: printing a command's help imports no harness module).
HARNESS_METAVAR = "|".join(harness_kinds())

#: ab's parameters that do not go with --harness -> (option, value when not given).
_NOT_WITH_HARNESS = {
    "names": ("-n/--name", ()), "suite": ("--suite", None), "baseline": ("--baseline", None),
    "runs": ("-r/--runs", None), "force": ("--force", False), "count": ("--count", None),
    "instructions_threshold": ("--instructions-threshold", None),
    "cpu_threshold": ("--cpu-threshold", None),
}


def harness_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--harness KIND`` option of ``ab``, and the dispatch to :func:`ab_with_harness`
    when it is given (``ab`` itself never sees it)."""
    @functools.wraps(f)
    def dispatch(**given: Any) -> Any:
        if given.get("harness") is None and not _suite_names_harness(given):
            given.pop("harness", None)
            return f(**given)
        # ab's own helpers (reading options, running the job) from its module's namespace:
        # importing benchlab.cli.ab here would make the two modules import each other
        return ab_with_harness(given, f.__globals__)

    return click.option(
        "--harness", default=None, metavar=HARNESS_METAVAR,
        help="COMMAND runs a benchmark harness: gate every benchmark it reports, each on "
             "its own, on the harness's own measure (time per operation; JMH: its mode's "
             "score) or on --metric NAME of its metrics; --max-time is the whole job's "
             "budget.")(dispatch)


def _suite_names_harness(given: dict[str, Any]) -> bool:
    """True when ``--suite FILE`` names a harness (``[gate] harness``): its command, metrics
    and threshold become ``given``'s, as ``--harness KIND COMMAND`` would give them."""
    if not given.get("suite"):
        return False
    from benchlab.ci.ab_suite import alpha_scope_of, harness_of

    found = harness_of(given["suite"])
    if found is None:
        return False
    if given["commands"]:
        raise UserError("give benchmark commands or --suite FILE, not both")
    given.update(harness=found.kind, commands=(found.command,),
                 gate_metrics=given["gate_metrics"] or tuple(found.metrics),
                 suite_build_timeout=given["suite"], suite=None,
                 suite_threshold=found.threshold,
                 alpha_scope=given.get("alpha_scope") or alpha_scope_of(given["suite"]))
    return True


def _check(given: dict[str, Any]) -> None:
    for param, (option, default) in _NOT_WITH_HARNESS.items():
        if given.get(param, default) not in (default, None, ()):
            raise UserError(f"{option} does not go with --harness (the harness names and "
                            f"runs its own benchmarks); drop {option}")
    if len(given["commands"]) != 1:
        raise UserError(f"--harness gates one command (the harness's), got "
                        f"{len(given['commands'])}; give one command that runs them all")


def ab_with_harness(given: dict[str, Any], ab: dict[str, Any]) -> None:
    """``ab --harness``: ``given`` holds ab's parameters by name, ``ab`` the namespace of
    ``benchlab.cli.ab`` (its reading of options and ``run_job``, which runs the job through
    :func:`benchlab.ci.gate_job.run_gate` and writes the report)."""
    import tempfile
    from pathlib import Path

    from benchlab.ci import revisions as rv
    from benchlab.ci.gate import check_threshold
    from benchlab.ci.gate_job import Build, GateJob, HarnessCommand, Paired
    from benchlab.ci.reported import parse_better
    from benchlab.cli.common import open_store
    from benchlab.measure.harnesses import get_harness

    _check(given)
    build_timeout_for, options_from, run_job = (
        ab[name] for name in ("build_timeout_for", "options_from", "run_job"))
    kind, command = given["harness"], given["commands"][0]
    # a command the harness cannot read is refused before anything is built
    get_harness(kind).prepare(command, Path(tempfile.gettempdir()))
    metrics = [m for m in dict.fromkeys(given["gate_metrics"]) if m != "wall"]
    threshold = (check_threshold(given["threshold"], "--threshold")
                 if given["threshold"] is not None else given.get("suite_threshold"))
    options = options_from(**given)
    options.validate()
    store = open_store(given["db"])
    root = rv.repo_root(given["repo"])
    job = GateJob(Paired(given["base"] or rv.default_base(root)), command="ab",
                  harness=HarnessCommand(kind, command, metrics, threshold), head=given["head"],
                  build=Build(root, given["build"],
                              build_timeout_for(given["build_timeout"],
                                                given.get("suite_build_timeout"))),
                  options=options, fail_undecided=given["fail_undecided"],
                  directions=parse_better(given["better"]))
    run_job(store, job, given["session_name"], given["quiet"],
            markdown_path=given["markdown_path"], junit_path=given["junit_path"],
            json_path=given["json_path"])
