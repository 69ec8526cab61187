"""benchlab: rigorous, reproducible performance measurement of programs and machines.

Layers, lowest first (docs/architecture.md has the table and the import rule; data flows one
way: run -> store -> analyse -> report):

- ``benchlab`` itself (rank 0): ``errors`` (UserError), ``units`` (the one parser and formatter
  of durations, sizes and CPU lists), ``jsonable``, ``processes``, ``paths``, ``lazy``,
  ``digests``, ``records``.
- ``benchlab.stats``, ``benchlab.store``, ``benchlab.environment`` (rank 1, independent of each
  other): pure statistics on numpy arrays; the database, its one session writer and the
  import/export formats; read-only probes of the machine.
- ``benchlab.control`` (rank 2): affinity, cgroups, background load, containers, system checks.
- ``benchlab.measure`` (rank 3): spawning and timing one measured process, rusage, perf counters,
  program-reported samples.
- ``benchlab.workloads`` (rank 4): the bundled C workloads and their builder.
- ``benchlab.core`` (rank 5): the execution core: a run plan in, measured runs stored.
- ``benchlab.machines`` (rank 6): machine profiles, variability, calibration, prediction.
- ``benchlab.report`` (rank 7): text, Markdown, HTML, plots, verdicts in words, bundles.
- ``benchlab.cli`` (rank 8): the thin Click front end.
"""

__version__ = "0.2.0"

import _signal  # the C module: ``signal`` would import enum (~5 ms) before --version
import os as _os
import sys as _sys


def _interrupted_before_main(signum, frame) -> None:
    """Ctrl-C while the console script is still importing: one line, exit 130, no traceback.
    Nothing has been started that would need cleaning up."""
    _os.write(2, b"benchlab: interrupted\n")
    _os._exit(130)


def _quiet_interrupts_until_main() -> None:
    """In the ``benchlab`` console script only, until :func:`benchlab.cli.main.main` runs.

    The script's first line imports ``benchlab.cli.main``; a Ctrl-C during that import would
    print Python's KeyboardInterrupt traceback (1 in 4 signals sent 14-40 ms after start on a
    loaded machine, ``bench/sigint_startup.py``). ``main`` puts Python's handler back first
    thing. A library user's process (its ``__main__`` is not the script) is not touched, nor
    is a SIGINT that is ignored (a background job)."""
    main = _sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or ""
    if (getattr(main, "__name__", None) == "__main__"  # not a spawned child re-running it
            and _os.path.basename(script) == "benchlab"
            and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler):
        _signal.signal(_signal.SIGINT, _interrupted_before_main)


def python_interrupts() -> None:
    """Give Ctrl-C back to Python (KeyboardInterrupt) if the console script had it quiet."""
    if _signal.getsignal(_signal.SIGINT) is _interrupted_before_main:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


_quiet_interrupts_until_main()


def __getattr__(name: str):
    """``benchlab.open(path)``: a store's sessions, runs, samples and environments as pandas
    DataFrames (:class:`benchlab.store.notebook.Results`).

    Resolved on first use, so ``import benchlab`` stays light (no store, no pandas). This is the
    one documented exception to the layer rule (docs/architecture.md): rank 0 reaching rank 1.
    """
    if name == "open":
        from benchlab.store.notebook import open_results

        return open_results
    raise AttributeError(f"module 'benchlab' has no attribute {name!r}")
