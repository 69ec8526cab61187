"""Reproduce anywhere: make a bundle, re-analyse it byte for byte, re-measure it and judge.

- :mod:`.make`: ``benchlab bundle`` (gathers data, sources, digests, profile, report);
- :mod:`.analysis`: the canonical analysis and report of a bundle's data (pinned seed, fixed
  digits, fixed generation time);
- :mod:`.rerun`: ``benchlab reproduce`` (analysis-only check; re-measurement, calibration);
- :mod:`.verdict`: the point-by-point judgement and its three verdicts.

It sits in the report layer (rank 7) because it needs everything below: the store's archive
format (:mod:`benchlab.store.bundle`), workloads, the execution core, machine profiles and
calibration, statistics and the report renderers. Import the submodules directly.
"""
