"""benchlab: rigorous, reproducible performance measurement of programs and machines.

Layers (data flows one way: run -> store -> analyse -> report):

- ``benchlab.measure``: spawning and timing runs, rusage, program-reported samples, environment.
- ``benchlab.control``: affinity, cgroups, workers, background load, system checks.
- ``benchlab.stats``: pure statistics on numpy arrays (no I/O).
- ``benchlab.machines``: machine profiles, variability, calibration.
- ``benchlab.store``: SQLite schema, migrations, import/export formats.
- ``benchlab.report``: text, Markdown, HTML, plots.
- ``benchlab.cli``: the thin Click front end.
"""

__version__ = "0.2.0"


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
