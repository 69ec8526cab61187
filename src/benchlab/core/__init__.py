"""The execution core (rank 5): a serialisable run plan goes in, measured runs come out and are
written to the store.

- :mod:`.plan`: :class:`RunPlan` (benchmarks, protocol, :class:`Placement`), plain data with
  ``to_dict``/``from_dict`` and ``validate``; :mod:`.parameters`: hyperfine's parameter scans
  and lists expanded into benchmarks.
- :mod:`.planner`: the order of runs (:class:`RunPlanner`).
- :mod:`.placement`: the placement step (affinity, cgroups, isolation, perf) on this machine.
- :mod:`.execute`: THE entry point, ``execute(plan, store, where)`` and ``resume``: ``where`` is
  this machine (``HERE``) or a ``Cluster``; the CLI and the study call nothing else.
- :mod:`.recorder`: the one object that stores, counts and judges runs (both paths);
  :mod:`.session_types`: observer, result, interruption.
- :mod:`.executor`: one session's execution on this machine in named steps, through a
  ``Runner`` (the seam tests replace); :mod:`.run_one`: one planned run and the hooks;
  :mod:`.samples`: what runs report; :mod:`.scratch`: temporary directories and children.
- :mod:`.cluster`: the same on a Dask cluster (lanes of runs, lost runs, stops).
- :mod:`.session`: create (one walk), start, resume, interrupt (SIGTERM acts as Ctrl-C).
- :mod:`.study`: stability studies; :mod:`.until_decided`: sequential stopping.
- :mod:`.driven`: sessions whose runs the caller picks (machine profiles, calibration).

Every command that executes runs (run, study, profile, calibrate, demo) goes through here.
Import the submodules directly: this package imports nothing so ``benchlab run`` stays fast.
"""
