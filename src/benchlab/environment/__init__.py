"""Read-only probes of the machine (rank 1): one reader module per source, the collector, and the
fingerprint and diff of two environments.

- :mod:`.cpu`, :mod:`.topology`, :mod:`.memory`, :mod:`.kernel`, :mod:`.system`,
  :mod:`.virtualization`, :mod:`.software`, :mod:`.process`: the readers.
- :mod:`.collect`: :func:`collect_environment` (alias :func:`collect`), every section in one dict.
- :mod:`.fingerprint`: :func:`environment_digest` (one fingerprint for every session writer)
  and :func:`flatten`; :mod:`.diff`: :func:`diff_environments` (one diff for compare and reports).

Nothing here changes the machine; ``benchlab.control`` does, and reads its state from here.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name and the reader module that defines it. The package imports a module when
#: one of its names is first used: compare needs only the diff, show only ``is_unknown``, and
#: neither should pay for the probes (subprocess, the CPU and topology readers).
_HOME = {
    "is_unknown": "_read", "read_text": "_read", "reading_once": "_read", "unknown": "_read",
    "utc_now_iso": "_read",
    "SCHEMA_VERSION": "collect", "collect": "collect", "collect_environment": "collect",
    "boost_state": "cpu", "frequency_state": "cpu", "online_cpus": "cpu", "smt_state": "cpu",
    "diff_environments": "diff",
    "environment_digest": "fingerprint", "flatten": "fingerprint",
    "aslr_setting": "kernel", "cgroup_state": "kernel", "kernel_cmdline_params": "kernel",
    "thp_setting": "kernel",
    "meminfo": "memory",
    "env_var_digests": "process", "load_average": "process",
    "virtualization_state": "virtualization",
}


def __getattr__(name: str) -> Any:
    """``benchlab.environment.NAME``: imported from its reader module on first use."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(f"{__name__}.{module}")
    for other, home in _HOME.items():  # all of its names at once; importing ``.collect``
        if home == module:              # bound the module to ``collect``: the function it is
            globals()[other] = getattr(loaded, other)
    return globals()[name]


__all__ = [
    "SCHEMA_VERSION", "aslr_setting", "boost_state", "cgroup_state", "collect",
    "collect_environment", "diff_environments", "env_var_digests", "environment_digest",
    "flatten", "frequency_state", "is_unknown", "kernel_cmdline_params", "load_average",
    "meminfo", "online_cpus", "read_text", "reading_once", "smt_state", "thp_setting", "unknown", "utc_now_iso",
    "virtualization_state",
]
