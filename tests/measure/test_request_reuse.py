"""The exec helper's request is built once and sent again while nothing in it changed (encoding and joining the environment was ~55,000 instructions a run). A change of the
environment between runs, or of the request, reaches the next run: real runs of the real helper.
"""

from __future__ import annotations

import os

from benchlab.measure.spawn import SpawnRequest, helper_client, spawn_measured

PROBE = ["sh", "-c", 'test "$BENCHLAB_TEST_REUSE" = yes']


def _status(request: SpawnRequest) -> str:
    return spawn_measured(request).status


def test_the_same_request_is_sent_again_unbuilt():
    request = SpawnRequest(argv=["/bin/true"])
    assert _status(request) == "ok"
    sent = helper_client.thread_helper()._last_message
    assert _status(request) == "ok"
    assert helper_client.thread_helper()._last_message is sent


def test_a_changed_environment_reaches_the_next_run(monkeypatch):
    monkeypatch.delenv("BENCHLAB_TEST_REUSE", raising=False)
    assert _status(SpawnRequest(argv=PROBE)) == "failed"
    monkeypatch.setenv("BENCHLAB_TEST_REUSE", "yes")
    assert _status(SpawnRequest(argv=PROBE)) == "ok"
    os.environ["BENCHLAB_TEST_REUSE"] = "no"  # a value changed in place
    assert _status(SpawnRequest(argv=PROBE)) == "failed"
    monkeypatch.delenv("BENCHLAB_TEST_REUSE")
    assert _status(SpawnRequest(argv=PROBE)) == "failed"


def test_a_given_environment_and_changed_tokens_reach_the_next_run(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "BENCHLAB_TEST_REUSE": "yes"}
    assert _status(SpawnRequest(argv=PROBE, env=env)) == "ok"
    env["BENCHLAB_TEST_REUSE"] = "no"  # the same dict, changed in place
    assert _status(SpawnRequest(argv=PROBE, env=env)) == "failed"
    out = tmp_path / "out"
    assert _status(SpawnRequest(argv=["pwd"], cwd=str(tmp_path), stdout_path=str(out))) == "ok"
    assert _status(SpawnRequest(argv=["pwd"], cwd="/", stdout_path=str(out))) == "ok"
    assert out.read_text() == "/\n"


def test_a_request_larger_than_the_pipe_and_the_helper_buffer_arrives_whole(tmp_path):
    """The helper reads a request whole into a buffer of 64 KiB that grows: a 300 KiB
    environment reaches the target intact, and the next, small request still runs."""
    parts = {f"BENCHLAB_TEST_BIG{k}": str(k) * (100 * 1024) for k in range(3)}  # one string
    out = tmp_path / "out"  # may not pass 128 KiB (the kernel's MAX_ARG_STRLEN)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **parts}
    m = spawn_measured(SpawnRequest(
        argv=["sh", "-c", 'printf %s "$BENCHLAB_TEST_BIG0$BENCHLAB_TEST_BIG1$BENCHLAB_TEST_BIG2"'],
        env=env, stdout_path=str(out)))
    assert m.status == "ok", m.error
    assert out.read_text() == "".join(parts.values())
    assert _status(SpawnRequest(argv=["/bin/true"])) == "ok"
