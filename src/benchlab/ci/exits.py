"""The exit statuses of every gating command (``ab``, ``gate``, ``bisect``), named once.

0: no regression decided; 1: a regression beyond its threshold (or an undecided result with
``--fail-undecided``); 2: bad input (one line, nothing stored); 3: a build or a benchmark
failed. An interrupted job exits 128 + the signal (130 for Ctrl-C, 143 for SIGTERM), never 1,
so a cancelled CI job does not read as a regression.
"""

EXIT_PASS, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_FAILED = 0, 1, 2, 3
