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
    """An optional dependency is not installed; the message names the command that adds it,
    for the installer that installed benchlab (:func:`install_hint`)."""


def _extra_requirements(extra: str) -> list[str]:
    """The requirements benchlab's ``extra`` adds (its own extras expanded), from the
    installed package's metadata; empty when that is not readable."""
    import importlib.metadata
    import re

    try:
        lines = importlib.metadata.requires("benchlab") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    out: list[str] = []
    for line in lines:
        req, _, marker = line.partition(";")
        if not re.search(r"extra\s*==\s*[\"']" + re.escape(extra) + r"[\"']", marker):
            continue
        own = re.fullmatch(r"\s*benchlab\s*\[([^\]]*)\].*", req)
        if own:  # "all" is benchlab[report,cluster,...]
            for name in own.group(1).split(","):
                out += [r for r in _extra_requirements(name.strip()) if r not in out]
        elif req.strip() not in out:
            out.append(req.strip())
    return out


def _uv_tool_requirement(receipt) -> str:
    """What ``uv tool install`` installed benchlab from (its receipt), as a requirement."""
    import tomllib

    try:
        reqs = tomllib.loads(receipt.read_text())["tool"]["requirements"]
        req = next(r for r in reqs if r.get("name") == "benchlab")
    except (OSError, ValueError, KeyError, StopIteration, TypeError, AttributeError):
        return "benchlab"
    if req.get("path"):
        return str(req["path"])
    if req.get("git"):
        return f"git+{req['git']}"
    return str(req.get("url") or "benchlab")


def install_hint(extra: str) -> str:
    """The command that adds benchlab's ``extra`` to this installation, fitting the installer
    that made it: ``uv tool install --with ...`` for a uv tool (from the requirement its
    receipt records: a wheel, a path, a git URL or the registry), ``pipx inject benchlab ...``
    for a pipx venv, else ``pip install 'benchlab[EXTRA]'``. Names the extra's own
    requirements where they are needed, since benchlab may not come from a registry."""
    import shlex
    import sys
    from pathlib import Path

    prefix = Path(sys.prefix)
    reqs = _extra_requirements(extra)
    receipt = prefix / "uv-receipt.toml"
    if receipt.is_file() and reqs:
        withs = " ".join(f"--with {shlex.quote(r)}" for r in reqs)
        return f"uv tool install {withs} {shlex.quote(_uv_tool_requirement(receipt))}"
    if (prefix / "pipx_metadata.json").is_file() and reqs:
        return f"pipx inject benchlab {' '.join(shlex.quote(r) for r in reqs)}"
    return f"pip install 'benchlab[{extra}]'"


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
        raise MissingExtra(f"{top} is not installed (an optional part of benchlab: the "
                           f"{extra!r} extra); run: {install_hint(extra)}")
    return importlib.import_module(module) if load else None
