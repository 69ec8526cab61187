"""The four records made once per run write their own ``__init__`` (the generic
``@record`` one cost ~2-3 us an instance, ~50,000 instructions a run for the four): each takes
exactly its fields, in order, with the same defaults, and fills the instance exactly as the
generic one does (the same ``__dict__``, in field order); frozen ones stay frozen; repr, eq and
``dataclasses.replace`` work. A field added to a class without its ``__init__`` fails here."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from benchlab import records
from benchlab.core.planner import PlannedRun
from benchlab.core.run_one import MeasuredRun
from benchlab.measure.spawn import RunMeasurement, SpawnRequest

MEASURED = dict(status="ok", exit_code=0, signal=None, wall_ns=9, user_ns=1, sys_ns=2,
                max_rss_kib=3, minflt=4, majflt=0, nvcsw=1, nivcsw=0, start_mono_ns=5,
                end_mono_ns=14, start_unix_ns=6, error=None, method="exec-helper", cpus=(0, 1))
CASES = [
    (PlannedRun, False, [((0, True, 2), {}), ((), {"benchmark": 1, "warmup": False,
                                                   "iteration": 0})]),
    (MeasuredRun, False, [((PlannedRun(0, False, 1), 0, None, [], {}, {}), {}),
                          ((PlannedRun(0, False, 1), 1, None, [{}], {"k": 1}, {"m": [1.0]}),
                           {"failure": "why"})]),
    (SpawnRequest, True, [((["/bin/true"],), {}),
                          ((["sh", "-c", "x"], "/tmp"), {"timeout_s": 2.5, "cpus": [0],
                                                         "rlimits": {"AS": 1}, "env": {}})]),
    (RunMeasurement, True, [((), MEASURED), ((), {**MEASURED, "descendants_killed": 2})]),
]


@pytest.mark.parametrize("cls", [c[0] for c in CASES], ids=lambda c: c.__name__)
def test_the_init_takes_exactly_the_fields(cls):
    fields = dataclasses.fields(cls)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default, f.name
        elif f.default_factory is dataclasses.MISSING:
            assert p.default is inspect.Parameter.empty, f.name
        assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("cls,frozen,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_instance_is_the_one_the_generic_init_made(cls, frozen, calls):
    generic = records._init_of(cls, dataclasses.fields(cls), frozen)
    for args, kwargs in calls:
        ours = cls(*args, **kwargs)
        theirs = cls.__new__(cls)
        generic(theirs, *args, **kwargs)
        assert list(vars(ours).items()) == list(vars(theirs).items())
        assert ours == theirs and repr(ours) == repr(theirs)
        assert dataclasses.replace(ours) == ours
        if frozen:
            with pytest.raises(dataclasses.FrozenInstanceError):
                ours.__setattr__(dataclasses.fields(cls)[0].name, None)


def test_a_default_factory_still_makes_one_value_per_instance():
    first, second = SpawnRequest(argv=["a"]), SpawnRequest(argv=["b"])
    assert first.rlimits == {} and first.rlimits is not second.rlimits
    assert SpawnRequest(argv=["a"], rlimits=None).rlimits is None  # as @dataclass's: given
