"""How the parallel phase (``pytest -n 2 --dist loadgroup``) hands tests to its workers.

xdist gives each worker the next unit of its queue (one test, or every test of one
``xdist_group``) whenever the worker has two tests or fewer left, in collection order. Two costs
follow from that, and :func:`schedule` removes both on the workers:

* a module whose tests share a module-scoped fixture (a built wheel and its venv, a Dask
  cluster, a measured session) got its tests split between the workers, and each worker built
  the fixture: such tests now form one group per module and run on one worker, the fixture
  built once;
* a long test collected late started when the other worker had little left, and the suite
  waited for it alone: the units are now sorted longest first (recorded durations in
  ``tests/durations.json``; a test not listed counts as short), so the last units are the
  short ones and the workers end within seconds of each other. The file was recorded by a
  whole parallel phase (``BENCHLAB_RECORD_DURATIONS``, below) at load 2-4: only the order of its
  numbers matters.

The order changes nothing a test asserts: tests are independent (each has its own temporary
directory and store). ``BENCHLAB_RECORD_DURATIONS=PATH`` records a run's durations (setup, call
and teardown of each test, in seconds) into PATH, in the format of ``tests/durations.json``.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent / "durations.json"
#: Fixture scopes whose fixture is built once per worker and module (or package): their users
#: go to one worker together.
SHARED_SCOPES = ("module", "package", "class")
#: Tests shorter than this (seconds, all phases) are not recorded: their order does not matter.
RECORD_AT_LEAST = 0.5


def base_nodeid(nodeid: str) -> str:
    """``nodeid`` without the ``@group`` suffix xdist's loadgroup appends (as xdist splits it)."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.rsplit("@", 1)[0]
    return nodeid


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    """Recorded seconds per test node id (empty when the file is absent)."""
    if not path.is_file():
        return {}
    return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}


def _shared_fixture_group(item: pytest.Item) -> str | None:
    """The group of a test that uses a module-, package- or class-scoped fixture: its module's
    path (a package's path for a package-scoped one); None for any other test."""
    info = getattr(item, "_fixtureinfo", None)
    scopes = {defs[-1].scope for defs in (info.name2fixturedefs.values() if info else ())
              if defs}
    if not scopes & set(SHARED_SCOPES):
        return None
    path = item.nodeid.split("::", 1)[0]
    return path.rsplit("/", 1)[0] if scopes == {"package"} else path


def group_shared_fixtures(items: list[pytest.Item]) -> None:
    """Mark every test using a module-scoped (package, class) fixture with an ``xdist_group``
    named after its module, unless it has a group already."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def group_of(item: pytest.Item) -> str | None:
    """The name xdist's loadgroup gives ``item``'s ``xdist_group`` marks (joined), or None."""
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    return "_".join(names) if names else None


def tag_groups(items: list[pytest.Item]) -> None:
    """Append ``@group`` to the node id of each grouped test, which is how the controller learns
    the groups. xdist 3.8 does it by setting ``item._nodeid``, which pytest 9.2 no longer reads
    (``nodeid`` is ``str(item._id)``): without this, ``--dist loadgroup`` scheduled every test
    on its own, groups included (tests/test_scheduling.py catches it)."""
    from _pytest.nodeid import NodeId

    for item in items:
        group = group_of(item)
        if group is not None and base_nodeid(item.nodeid) == item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{group}")


def unit_of(item: pytest.Item) -> str:
    """The unit xdist's loadgroup schedules ``item`` in: its group, else itself."""
    group = group_of(item)
    return "@" + group if group is not None else base_nodeid(item.nodeid)


def longest_first(items: list[pytest.Item], durations: dict[str, float]) -> None:
    """Reorder ``items`` in place: units (groups, or single tests) by their recorded seconds,
    longest first; ties (the unrecorded, short tests) keep collection order, and the tests of a
    group stay together in collection order."""
    units: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        units[unit_of(item)].append(item)
    cost = {unit: sum(durations.get(base_nodeid(i.nodeid), 0.0) for i in members)
            for unit, members in units.items()}
    order = sorted(units, key=lambda unit: -cost[unit])  # stable: ties in collection order
    items[:] = [item for unit in order for item in units[unit]]


def schedule(config: pytest.Config, items: list[pytest.Item],
             durations: Path = DURATIONS) -> None:
    """On an xdist worker under ``--dist loadgroup``: group the users of shared fixtures, then
    order the units longest first by the seconds recorded in ``durations``. Elsewhere (the
    serial phase, one file) nothing changes."""
    if not hasattr(config, "workerinput") or not config.getvalue("loadgroup"):
        return
    group_shared_fixtures(items)
    longest_first(items, load_durations(durations))
    tag_groups(items)


class DurationRecorder:
    """Sums each test's setup, call and teardown seconds as reports arrive (on the controller
    under xdist) and writes those of at least ``RECORD_AT_LEAST`` seconds to ``path``, updating
    what the file already holds (a test run again gets its new time)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[base_nodeid(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return  # the controller writes: it saw every worker's reports
        # an existing file is updated, not replaced: `make test`'s serial phase adds its tests
        # to the parallel phase's instead of overwriting them (remove the file to start afresh)
        try:
            merged = {k: v for k, v in json.loads(self.path.read_text()).items()
                      if k not in self.seconds}
        except (OSError, ValueError):
            merged = {}
        merged.update({k: round(v, 1) for k, v in self.seconds.items() if v >= RECORD_AT_LEAST})
        kept = dict(sorted(merged.items(), key=lambda kv: -kv[1]))
        self.path.write_text(json.dumps(kept, indent=0) + "\n")


def register_recorder(config: pytest.Config) -> None:
    """Record durations when ``BENCHLAB_RECORD_DURATIONS`` names a file."""
    target = os.environ.get("BENCHLAB_RECORD_DURATIONS")
    if target and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationRecorder(Path(target)), "benchlab-durations")
