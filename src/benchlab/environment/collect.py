"""The collector: every reader's section in one JSON-serialisable dict, taken at session start.

Every leaf is either a plain value or ``{"unknown": "<reason>"}``: a field this machine does not
expose is never guessed. ``null`` is a *known* value meaning "not set" (e.g. no ``isolcpus=`` on
the kernel command line, or an environment variable value when no store key was given), never
"could not tell". Units are in the key names: ``_kib`` (KiB), ``_s`` (seconds). Timestamps are UTC
ISO 8601 with a trailing ``Z``.

Collection runs at the start of every session, so it only reads ``/proc`` and ``/sys`` and runs a
handful of short subprocesses (``git``, ``systemd-detect-virt``) concurrently, each with a
timeout; it takes well under 0.3 s.

Each section has a public collector in its reader module (``cpu_section``, ``memory_section``,
``kernel_settings_section``, ``git_section`` ...), as pyperf's metadata collectors are, so a
caller that needs one section takes that one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import benchlab
from benchlab.environment._read import (
    NOT_A_REPOSITORY,
    SUBPROCESS_TIMEOUT_S,
    Probe,
    is_unknown,
    outside_git_work_tree,
    utc_now_iso,
    which,
)
from benchlab.environment.cpu import cpu_section
from benchlab.environment.fingerprint import environment_digest
from benchlab.environment.kernel import cgroup_state, kernel_settings_section, numa_section
from benchlab.environment.memory import memory_section
from benchlab.environment.process import (
    ENV_DIGEST_NONE,
    env_digest_label,
    env_var_digests,
    load_section,
)
from benchlab.environment.software import git_section, python_section
from benchlab.environment.system import host_section, os_section
from benchlab.environment.virtualization import virtualization_section

SCHEMA_VERSION = 1


def collect_environment(argv: Sequence[str] | None = None, cwd: str | None = None, *,
                        env_key: bytes | None = None) -> dict[str, Any]:
    """Describe the machine, its settings and this session; every leaf known or unknown-with-reason.

    Parameters
    ----------
    argv : sequence of str, optional
        The full command line to record (default: ``sys.argv``).
    cwd : str, optional
        Working directory whose git commit and dirty state are recorded (default: the current
        directory).
    env_key : bytes, optional
        The store's secret (:meth:`benchlab.store.Store.env_key`): environment variable values are
        stored as HMAC-SHA256 digests keyed by it. Without it only the variable names are stored.

    Returns
    -------
    dict
        JSON-serialisable, with stable nested keys; see the module docstring. ``digest`` holds
        :func:`environment_digest` of the result.
    """
    started = time.monotonic()
    cwd = os.path.abspath(cwd if cwd is not None else os.getcwd())
    argv = list(sys.argv if argv is None else argv)

    # Start the slow-ish external probes first so they overlap with the /proc and /sys reads.
    git_env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    # A missing directory is reported as such rather than as a failure to run git.
    have_git = which("git") is not None and os.path.isdir(cwd)
    if have_git and outside_git_work_tree(cwd):  # git's own answer, without two forks
        git_head = Probe.finished(["git", "rev-parse", "HEAD"], 128, "", NOT_A_REPOSITORY)
        git_status = Probe.finished(["git", "status", "--porcelain"], 128, "", NOT_A_REPOSITORY)
    else:
        git_head = Probe(["git", "rev-parse", "HEAD"], cwd=cwd, env=git_env) if have_git else None
        git_status = (Probe(["git", "status", "--porcelain"], cwd=cwd, env=git_env)
                      if have_git else None)
    have_detect = which("systemd-detect-virt") is not None  # the checks looked it up too
    detect_vm = Probe(["systemd-detect-virt", "--vm"], per_boot=True) if have_detect else None
    detect_container = (Probe(["systemd-detect-virt", "--container"], per_boot=True)
                        if have_detect else None)
    deadline = started + SUBPROCESS_TIMEOUT_S

    collected_at = utc_now_iso()
    cpu = cpu_section()
    notable = cpu["notable_flags"]
    hypervisor_flag = notable if is_unknown(notable) else notable["hypervisor"]

    env: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "collected_at": collected_at,
        "host": host_section(),
        "os": os_section(),
        "cpu": cpu,
        "memory": memory_section(),
        "kernel_settings": kernel_settings_section(),
        "numa": numa_section(),
        "cgroup": cgroup_state(),
        "virtualization": virtualization_section(detect_vm, detect_container, deadline,
                                                  hypervisor_flag),
        "python": python_section(),
        "benchlab": {"version": benchlab.__version__},
        "git": {"cwd": cwd, **git_section(git_head, git_status, deadline, cwd)},
        "process": {"argv": argv, "cwd": cwd, "pid": os.getpid()},
        "env_vars": env_var_digests(key=env_key),
        "env_vars_digest": env_digest_label(env_key) if env_key is not None else ENV_DIGEST_NONE,
        "load": load_section(),
    }
    env["digest"] = environment_digest(env)
    return env


# The name the task and the core use; ``collect_environment`` stays for existing callers.
collect = collect_environment
