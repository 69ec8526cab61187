"""Gating changes in CI (rank 6, beside machines): two revisions or two sessions in, a decision
per benchmark and an exit status out.

- :mod:`.revisions`: git revisions checked out into worktrees and built (builds, their logs, the
  sweep of what an interrupted job left).
- :mod:`.ab`: interleaved pairs of runs of a base and a head build, with sequential looks;
  :mod:`.ab_plan`: its benchmarks, options and plan; :mod:`.ab_suite`: the suite file.
- :mod:`.reported`: metrics the program prints (``--metric NAME[:UNIT]=REGEX``), their
  direction, one value per run.
- :mod:`.gate`: the paired decision (``decide``), thresholds; :mod:`.exits`: exit statuses.
- :mod:`.baseline`: stored baselines (a session or a branch's history) against a fresh session.
- :mod:`.bisect`: the commit that introduced a regression, one paired job per step.
- :mod:`.gate_job`: the one entry of every gating job (:func:`~.gate_job.run_gate`): builds,
  measures, judges and reports ``ab``, ``gate`` and each ``bisect`` step.
- :mod:`.report_model`: :class:`~.report_model.GateReport`, the data every output renders.

Import the submodules directly: this package imports nothing so ``benchlab run`` stays fast.
"""
