"""Reproduce anywhere: make a bundle, re-analyse it byte for byte, and judge a re-measurement.

- :mod:`.make`: ``benchlab bundle`` (gathers data, sources, digests, profile, report);
- :mod:`.analysis`: the canonical analysis and report of a bundle's data (pinned seed, fixed
  digits, fixed generation time);
- :mod:`.rerun`: ``benchlab reproduce --analysis-only`` (analysis, Markdown and HTML reports
  checked digest for digest) and the judgement of a re-measurement;
- :mod:`.disclosure`: what a re-measurement would run, in words, shown before it runs;
- :mod:`.verdict`: the point-by-point judgement and its three verdicts.

Nothing here runs a bundle's code: the re-measurement is :mod:`benchlab.core.reproduce` (plans
read and shown before anything runs, confined to scratch, run through the execution core) and
:mod:`benchlab.machines.reproduce` (profiles and calibration). This package sits in the report
layer (rank 7) because bundling needs everything below: the store's archive format
(:mod:`benchlab.store.bundle`), workloads, the core, statistics and the report renderers.
Import the submodules directly.
"""
