"""IOI's isolate as a sandbox (``--isolation isolate``): box = the worker's number, its meta
file read as the isolator's own view of the run (:mod:`benchlab.control.sandboxes` keeps the
boxes)."""

from __future__ import annotations

from benchlab.measure.sandboxes import Sandbox


class Isolate(Sandbox):
    """isolate(1): one box per worker, a meta file per run."""

    name = "isolate"
    missing = ("isolate (IOI's sandbox) is not installed here (it is not packaged in Debian: "
               "build it from github.com/ioi/isolate), or use --isolation bwrap")
    writes_meta = True

    def argv(self, argv: list[str], *, worker: int, meta_path: str | None,
             keep: tuple[str, ...]) -> list[str]:
        """``isolate --run`` in box ``worker``, its meta file at ``meta_path``."""
        from benchlab.control.sandboxes import isolate_run_argv

        return isolate_run_argv(argv, box=worker, meta_path=meta_path or "/dev/null")

    def prepare(self) -> None:
        """Initialise box 0 (the check's runs use it)."""
        from benchlab.control.sandboxes import init_isolate_box

        init_isolate_box(0)


SANDBOX = Isolate()
