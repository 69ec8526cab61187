"""Errors that reach the user.

Every problem a user can cause or fix (bad flag values, a missing command, a malformed file, a
locked database, missing permissions) is raised as :class:`UserError` with a one-line message
that names the problem and the fix. The CLI prints it as ``benchlab: error: ...`` and exits 2,
with no traceback. Anything else is a bug in benchlab and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; ``str(err)`` is a single line naming problem and fix."""

    exit_code = 2

    def __init__(self, message: str):
        one_line = " ".join(str(message).split())
        super().__init__(one_line)


class NotAvailable(UserError):
    """A capability this machine does not have (no cgroup controller, no perf counters, ...)."""


#: The pip extra that provides each optional top-level module (pyproject's optional-dependencies).
EXTRA_OF_MODULE = {
    "bokeh": "report", "jinja2": "report", "matplotlib": "report",
    "dask": "cluster", "distributed": "cluster", "asyncssh": "cluster",
    "psycopg": "postgres", "pandas": "notebook",
}


class MissingExtra(UserError):
    """An optional dependency is not installed; the message names the ``pip install`` that adds it."""


def require_extra(module: str, extra: str | None = None, *, load: bool = True):
    """Import and return ``module``, or raise :class:`MissingExtra` naming the extra to install.

    ``extra`` defaults to the one :data:`EXTRA_OF_MODULE` lists for the module's top-level
    package. With ``load=False`` only checks that it is installed (no import, microseconds) and
    returns None: for a check before minutes of work, or in a package whose modules import
    the dependency inside their functions. The base install (run, show, list, analyze, compare,
    export, import, text history) never calls this; reports, clusters, PostgreSQL stores and
    notebooks do, at the point of use.
    """
    import importlib
    import importlib.util

    top = module.split(".")[0]
    if importlib.util.find_spec(top) is None:
        extra = extra or EXTRA_OF_MODULE.get(top, "all")
        raise MissingExtra(f"{top} is not installed (an optional part of benchlab); "
                           f"run: pip install 'benchlab[{extra}]'")
    return importlib.import_module(module) if load else None
