"""Extensions that tests/test_extension_points.py registers at run time, one per extension point,
each written as a new one would be (docs/architecture.md, "Extension points"): no file of
benchlab changes. :func:`register` is what a program embedding benchlab would call before the
command line starts."""

from __future__ import annotations

import dataclasses
from typing import Any

from benchlab.control.container_engines import ENGINE_KINDS
from benchlab.measure.harnesses import HARNESS_MODULES, Harness, Prepared
from benchlab.measure.harnesses import register as add_harness
from benchlab.measure.sandboxes import SANDBOXES, Sandbox
from benchlab.store.backends import BACKENDS, backend
from benchlab.store.formats import gotest
from benchlab.store.formats.exporters import EXPORTERS


class CleanEnvironment(Sandbox):
    """A sandbox that gives the program an empty environment (``env -i``): a run can tell
    whether it went through it."""

    name = "env"
    missing = "env is not installed here; apt-get install coreutils"

    def argv(self, argv: list[str], *, worker: int, meta_path: str | None,
             keep: tuple[str, ...]) -> list[str]:
        """``env -i PATH=/usr/bin:/bin`` before the program."""
        return ["env", "-i", "PATH=/usr/bin:/bin", *argv]


class NotInstalled(Sandbox):
    """A sandbox whose program no machine has."""

    name = "benchlab-no-such-jail"
    missing = "benchlab-no-such-jail is not installed here; build it, or choose another --isolation"


SANDBOX = CleanEnvironment()
MISSING_SANDBOX = NotInstalled()

#: A container engine that speaks podman's language under another name (a wrapper script).
ENGINE = dataclasses.replace(ENGINE_KINDS["podman"], name="podwrap")


class TaggedFile:
    """A store backend for ``--db tagged:PATH``: the SQLite file PATH, reached through a
    prefix no other backend claims (what a third backend looks like to benchlab)."""

    name = "tagged"
    prefix = "tagged:"

    def claims(self, target: str) -> bool:
        """Values that begin with ``tagged:``."""
        return target.startswith(self.prefix)

    def open(self, store_class: Any, target: str, readonly: bool) -> Any:
        """The SQLite store at the path after the prefix."""
        return backend("sqlite").open(store_class, target[len(self.prefix):], readonly)

    def files(self, target: str) -> list[str]:
        """The SQLite file's files."""
        return backend("sqlite").files(target[len(self.prefix):])

    def vacuum(self, store: Any) -> tuple[int | None, int | None]:
        """SQLite's."""
        return backend("sqlite").vacuum(store)


BACKEND = TaggedFile()


class GoLines(Harness):
    """A harness whose command prints Go's benchmark lines itself (any shell line)."""

    kind = "golines"
    primary = gotest.PRIMARY

    def prepare(self, command: str, workdir: Any) -> Prepared:
        """The command as given: its results are on standard output."""
        return Prepared(command=command)

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Go's result lines of the run's standard output."""
        return gotest.parse_gotest_text(stdout, source, name=self.kind)


add_harness(GoLines())  # what a harness module does when HARNESS_MODULES names it


def register() -> None:
    """Add each extension to its registry (a backend goes before ``sqlite``, which takes every
    value left)."""
    SANDBOXES["env"] = "tests.extension_plugins:SANDBOX"
    SANDBOXES["benchlab-no-such-jail"] = "tests.extension_plugins:MISSING_SANDBOX"
    ENGINE_KINDS["podwrap"] = ENGINE
    EXPORTERS["tsv"] = "tests.store.tsv_exporter:export"
    HARNESS_MODULES["golines"] = "tests.extension_plugins"
    others = dict(BACKENDS)
    BACKENDS.clear()
    BACKENDS["tagged"] = "tests.extension_plugins:BACKEND"
    BACKENDS.update(others)
