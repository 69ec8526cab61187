"""What an imported tool's own metadata means to benchlab: the machine it describes (mapped into
benchlab's environment layout, so two imported sessions, or an import and a run, can be diffed),
and how that tool is asked for more values when a series has too few to analyse.

pyperf's metadata (hostname, cpu_model_name, cpu_count, python_version, ...) and Google
Benchmark's ``context`` (host_name, num_cpus, mhz_per_cpu, caches, ...) name the same facts
benchlab's environment probes collect: those go to the same key paths (``host.hostname``,
``cpu.model``, ``cpu.logical_cores``, ``python.version`` ...); the rest of each tool's
machine-describing keys are kept under the tool's name (``pyperf.cpu_config``,
``gbench.library_build_type``). Per-run values (date, load, duration, peak memory) are left out:
they differ between any two sessions and say nothing about the machine.
"""

from __future__ import annotations

from typing import Any, Mapping

#: How to get more than one value per benchmark from each importing tool.
REPETITION_HINTS = {
    "gbench": "re-run the benchmark with --benchmark_repetitions=10 (Google Benchmark writes "
              "one value per repetition; aggregates are not values)",
    "pyperf": "re-run pyperf with more processes and values, e.g. -p 20 (--processes) and "
              "--values 3",
}

#: pyperf metadata key -> benchlab environment key path (the same fact).
_PYPERF_EXACT = {"hostname": "host.hostname", "cpu_model_name": "cpu.model",
                 "cpu_count": "cpu.logical_cores", "python_executable": "python.executable",
                 "python_compiler": "python.compiler"}
#: pyperf metadata that describes one run or one moment, not the machine.
_PYPERF_VOLATILE = {"date", "duration", "load_avg_1min", "mem_max_rss", "mem_peak_pagefile_usage",
                    "runnable_threads", "uptime", "cpu_temp", "loops", "inner_loops", "name",
                    "unit", "calibrate_loops", "recalibrate_loops", "calibrate_warmups",
                    "recalibrate_warmups", "warmups", "tracemalloc_peak", "command_max_rss"}
#: Google Benchmark context key -> benchlab environment key path.
_GBENCH_EXACT = {"host_name": "host.hostname", "num_cpus": "cpu.logical_cores"}
_GBENCH_VOLATILE = {"date", "load_avg"}


def repetition_hint(session_metadata: Any) -> str | None:
    """How to get more values from the tool an imported session came from (None: not an
    import of gbench or pyperf)."""
    if isinstance(session_metadata, Mapping):
        return REPETITION_HINTS.get(str(session_metadata.get("format")))
    return None


def _put(env: dict[str, Any], path: str, value: Any) -> None:
    node = env
    *parents, leaf = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool)) or (
        isinstance(value, list) and all(_scalar(v) for v in value))


def pyperf_environment(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    """benchlab's environment layout from pyperf's file (or common run) metadata; None when it
    says nothing about the machine. ``python_version`` ("3.11.7 (64-bit) revision ...") gives
    ``python.version`` 3.11.7 and ``pyperf.python_version`` in full."""
    env: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in _PYPERF_VOLATILE or not _scalar(value):
            continue
        if key in _PYPERF_EXACT:
            _put(env, _PYPERF_EXACT[key], value)
        else:
            _put(env, f"pyperf.{key}", value)
    version = metadata.get("python_version")
    if isinstance(version, str) and version.split():
        _put(env, "python.version", version.split()[0])
    implementation = metadata.get("python_implementation")
    if isinstance(implementation, str):
        _put(env, "python.implementation", {"cpython": "CPython", "pypy": "PyPy"}.get(
            implementation.lower(), implementation))
    return env or None


def gbench_environment(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """benchlab's environment layout from a Google Benchmark ``context``; None when empty."""
    env: dict[str, Any] = {}
    for key, value in context.items():
        if key in _GBENCH_VOLATILE:
            continue
        if key in _GBENCH_EXACT and _scalar(value):
            _put(env, _GBENCH_EXACT[key], value)
        else:
            _put(env, f"gbench.{key}", value)
    return env or None


__all__ = ["REPETITION_HINTS", "repetition_hint", "pyperf_environment", "gbench_environment"]
