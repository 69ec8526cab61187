"""Sandboxes: one interface (:class:`Sandbox`), one registry (:data:`SANDBOXES`).

A sandbox is a program that runs the measured program isolated, a fresh one per run
(``--isolation NAME``). It says how to run a program inside it (:meth:`Sandbox.argv`), what to
do once before the first run (:meth:`Sandbox.prepare`), the one line that tells a user how to
get it when it is not installed (:attr:`Sandbox.missing`), and whether it writes a meta file of
its own view of each run (isolate(1)'s ``key:value`` format).

Adding a sandbox is one module in this package whose ``SANDBOX`` is a :class:`Sandbox`, one line
in :data:`SANDBOXES`, and its tests: ``--isolation`` accepts the name, its messages list it, and
:meth:`benchlab.measure.isolation.Isolation.check` refuses it with its own line where its
program is not installed. A sandbox's module is imported only when that sandbox is used, so
parsing ``--isolation`` imports none of them.
"""

from __future__ import annotations

import importlib
import os

from benchlab.errors import UserError

#: Sandbox name (the ``--isolation`` word, its program) -> ``"module:attribute"`` of its
#: :class:`Sandbox` (imported when used). The order is the order messages list them in.
SANDBOXES: dict[str, str] = {
    "bwrap": "benchlab.measure.sandboxes.bwrap:SANDBOX",
    "firejail": "benchlab.measure.sandboxes.firejail:SANDBOX",
    "isolate": "benchlab.measure.sandboxes.isolate:SANDBOX",
}

#: The host's directories a sandbox may replace by private, empty ones.
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


class Sandbox:
    """A sandbox program. A module sets :attr:`name`, :attr:`missing` and :meth:`argv`."""

    #: The ``--isolation`` word; also the program checked for on PATH.
    name = ""
    #: The one-line reason and fix when :attr:`name` is not installed here.
    missing = ""
    #: True when each run writes a meta file (isolate(1)'s ``key:value`` lines) to ``meta_path``.
    writes_meta = False

    def argv(self, argv: list[str], *, worker: int, meta_path: str | None,
             keep: tuple[str, ...]) -> list[str]:
        """The argv that runs ``argv`` in this sandbox. ``worker``: the worker's number (a
        sandbox with numbered boxes uses it); ``meta_path``: where the meta file goes (None:
        nowhere); ``keep``: directories the run needs writable at their own paths (the run's
        working directory, the session's scratch directory), see :func:`kept_dirs`."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Make the sandbox ready once, before the first run (UserError when it refuses)."""


def sandbox(name: str) -> Sandbox:
    """The sandbox registered as ``name``; UserError naming the sandboxes otherwise."""
    target = SANDBOXES.get(name)
    if target is None:
        raise UserError(f"unknown sandbox {name!r}; choose one of {', '.join(SANDBOXES)}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def kept_dirs(paths: tuple[str, ...], private: tuple[str, ...]) -> list[str]:
    """The real paths among ``paths`` that lie strictly inside one of the ``private``
    directories (a sandbox's fresh /tmp hides them), without duplicates or nesting; the private
    directories themselves are never kept (the program gets the new, empty one)."""
    found: list[str] = []
    for p in paths:
        real = os.path.realpath(p)
        if any(real.startswith(root + "/") for root in private) and os.path.isdir(real):
            found.append(real)
    found.sort()
    return [d for i, d in enumerate(found)
            if not any(d == o or d.startswith(o + "/") for o in found[:i])]
