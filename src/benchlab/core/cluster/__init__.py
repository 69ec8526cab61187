"""Runs on a Dask cluster: the core's run plans shipped to workers on other machines.

- :mod:`.address`: ``--cluster`` (``tcp://host:port``, ``local:N``, ``ssh:HOST,HOST``), the
  quiet Dask configuration, connecting, the machines of a cluster and ``--on``.
- :mod:`.worker_side`: what executes on a worker: probe a machine (validate the plan there,
  environment, setup hooks), run ONE planned run with the core's executor step, finish.
- :mod:`.dispatch`: the client's loop: lanes of planned runs, one measurement per slot, results
  written through the client's SessionWriter as they arrive, lost runs re-queued.
- :mod:`.stop`: on Ctrl-C/SIGTERM of the client, kill the session's runs where they execute.
- :mod:`.session`: start, resume and end a cluster session; one cluster shared by many
  sessions (a study's cells).

Dask is imported only inside these modules' functions, never by ``benchlab run`` without
``--cluster`` (start-up stays fast). Nothing here is imported by ``benchlab.core`` itself.
"""

from benchlab.errors import require_extra

# Every way into a cluster passes here: without the extra, one line naming it (no import).
require_extra("distributed", "cluster", load=False)
