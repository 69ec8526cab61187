"""The one rule for a bundled run plan's shape, shared by ``benchlab import`` of a bundle and by
``benchlab reproduce``: a plan the reproduction would call damaged (``"benchmarks": "x"``,
``"placement": [1]``, a number for a command ...) is refused by both, in the same words.
"""

from __future__ import annotations

from typing import Any

#: A benchmark's hooks, each text or absent.
HOOKS = ("prepare", "setup", "cleanup", "conclude")
#: Strings a plan holds as text; anything else in their place is a damaged plan.
TEXT_FIELDS = ("shell", "samples_csv", "cwd", "stdin_path", "stdout", "count")


def _bench_ok(b: Any) -> bool:
    return (isinstance(b, dict) and isinstance(b.get("name"), str)
            and isinstance(b.get("command"), str)
            and all(isinstance(b.get(h), (str, type(None))) for h in HOOKS)
            and isinstance(b.get("parameters", {}), dict))


def plan_problem(protocol: Any) -> str | None:
    """What is wrong with the shape of a stored run plan (``protocol``), or None when
    :meth:`benchlab.core.plan.RunPlan.from_dict` can read it."""
    if not isinstance(protocol, dict):
        return "not an object"
    benches = protocol.get("benchmarks")
    if not isinstance(benches, list) or not benches or not all(map(_bench_ok, benches)):
        return "benchmarks must be a list of objects with a name and a command"
    for key in ("placement", "control"):
        if protocol.get(key) is not None and not isinstance(protocol.get(key), dict):
            return f"{key} must be an object"
    metrics = protocol.get("metrics", [])
    if not isinstance(metrics, list) or not all(
            isinstance(m, dict) and isinstance(m.get("name"), str)
            and isinstance(m.get("regex"), str) for m in metrics):
        return "metrics must be a list of objects with a name and a regex"
    for key in TEXT_FIELDS:
        if protocol.get(key) is not None and not isinstance(protocol.get(key), str):
            return f"{key} must be text"
    for key in ("prepare", "setup", "cleanup"):  # plans stored before hooks were per benchmark
        if protocol.get(key) is not None and not (
                isinstance(protocol[key], list) and protocol[key]
                and all(isinstance(h, str) for h in protocol[key])):
            return f"{key} must be a list of commands"
    if not isinstance(protocol.get("planned_runs", {}), dict):
        return "planned_runs must be an object"
    return None
