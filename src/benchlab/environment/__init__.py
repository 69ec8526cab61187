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

from benchlab.environment._read import is_unknown, read_text, unknown, utc_now_iso
from benchlab.environment.collect import SCHEMA_VERSION, collect, collect_environment
from benchlab.environment.cpu import boost_state, frequency_state, online_cpus, smt_state
from benchlab.environment.diff import diff_environments
from benchlab.environment.fingerprint import environment_digest, flatten
from benchlab.environment.kernel import (
    aslr_setting,
    cgroup_state,
    kernel_cmdline_params,
    thp_setting,
)
from benchlab.environment.memory import meminfo
from benchlab.environment.process import env_var_digests, load_average
from benchlab.environment.virtualization import virtualization_state

__all__ = [
    "SCHEMA_VERSION", "aslr_setting", "boost_state", "cgroup_state", "collect",
    "collect_environment", "diff_environments", "env_var_digests", "environment_digest",
    "flatten", "frequency_state", "is_unknown", "kernel_cmdline_params", "load_average",
    "meminfo", "online_cpus", "read_text", "smt_state", "thp_setting", "unknown", "utc_now_iso",
    "virtualization_state",
]
