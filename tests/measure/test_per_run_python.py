"""What Python does to spawn one run through the exec helper, counted: a
session's runs repeat one request, so the second run of the same request raises no exception
(not even one caught inside the standard library: ``os.environ.get`` of an unset variable
raises and catches a KeyError) and calls at most a budget of Python functions. Counted with
the interpreter's own profiling hooks on real runs of the real helper: no timing."""

from __future__ import annotations

import sys

from benchlab.measure.spawn import SpawnRequest, spawn_measured, spawn_method

#: Python functions called to spawn a run whose request was sent before (17 when it was first
#: counted; a new function on this path must earn its place).
CALL_BUDGET = 17


def _traced(action) -> tuple[list[str], list[str]]:
    """The Python functions ``action()`` called and the exceptions raised in them."""
    calls: list[str] = []
    raised: list[str] = []

    def tracer(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
        elif event == "exception":
            raised.append(f"{arg[0].__name__} in {frame.f_code.co_name}")
        return tracer

    sys.settrace(tracer)
    try:
        action()
    finally:
        sys.settrace(None)
    return calls, raised


def test_the_spawn_method_is_read_without_raising(monkeypatch):
    monkeypatch.delenv("BENCHLAB_SPAWN", raising=False)
    spawn_method()  # the first call finds (builds) the helper, importing what that needs
    _, raised = _traced(spawn_method)
    assert raised == []
    monkeypatch.setenv("BENCHLAB_SPAWN", "python")
    assert spawn_method() == "python"
    monkeypatch.setenv("BENCHLAB_SPAWN", "bogus")
    try:
        spawn_method()
    except Exception as exc:  # a UserError naming the variable, as before
        assert "BENCHLAB_SPAWN='bogus'" in str(exc)
    else:
        raise AssertionError("an unknown spawn method was accepted")


def test_a_repeated_run_raises_nothing_and_keeps_to_its_call_budget(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHLAB_SPAWN", raising=False)
    request = SpawnRequest(argv=["/bin/true"], cwd=str(tmp_path),
                           stderr_path=str(tmp_path / "stderr-0"))
    assert spawn_measured(request).status == "ok"
    results = []
    calls, raised = _traced(lambda: results.append(spawn_measured(request)))
    assert results[0].status == "ok"
    assert raised == []
    assert len(calls) <= CALL_BUDGET, calls
