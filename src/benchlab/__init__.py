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

__version__ = "0.1.0"
