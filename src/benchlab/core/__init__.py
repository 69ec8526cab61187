"""The execution core (rank 5): a serialisable run plan goes in, measured runs come out and are
written to the store.

- :mod:`.plan`: :class:`RunPlan` (benchmarks, protocol, :class:`Placement`), plain data with
  ``to_dict``/``from_dict`` and ``validate``; :mod:`.parameters`: hyperfine's parameter scans
  and lists expanded into benchmarks.
- :mod:`.planner`: the order of runs (:class:`RunPlanner`).
- :mod:`.placement`: the placement step (affinity, cgroups, isolation, perf) on this machine.
- :mod:`.executor`: one session's execution in named steps; :mod:`.run_one`: one planned run;
  :mod:`.samples`: what runs report; :mod:`.scratch`: temporary directories and children.
- :mod:`.session`: start, resume, interrupt (SIGTERM acts as Ctrl-C).
- :mod:`.study`: stability studies; :mod:`.until_decided`: sequential stopping.
- :mod:`.driven`: sessions whose runs the caller picks (machine profiles, calibration).

Every command that executes runs (run, study, profile, calibrate, demo) goes through here.
Import the submodules directly: this package imports nothing so ``benchlab run`` stays fast.
"""
