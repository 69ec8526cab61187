"""A test that needs a tool setup installs skips here without it, and FAILS in CI (CI=true),
so a half-failed setup cannot pass quietly."""

from __future__ import annotations

import pytest

from tests.conftest import require_tool


def test_a_missing_tool_skips_here_and_fails_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="benchlab-no-such-tool is not installed"):
        require_tool("benchlab-no-such-tool")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: benchlab-no-such-tool"):
        require_tool("benchlab-no-such-tool")
    with pytest.raises(pytest.fail.Exception):
        require_tool("sshd", "/nonexistent/sshd")


def test_a_present_tool_is_its_path(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require_tool("sh").endswith("/sh")
