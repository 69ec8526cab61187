"""``tune``: apply the benchmarking settings (root), saving the exact previous values first.

The state file (``$BENCHLAB_STATE_DIR/tune-state.json``, default
``/var/lib/benchlab/tune-state.json``) is written owner-only (mode 600) and lists, per setting,
its name, the path written, the previous and the applied value. :func:`known_setting_path` and
:func:`valid_setting_value` say which names, paths and values ``tune`` produces; restore accepts
nothing else.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchlab.control.system.checks import reason_of
from benchlab.environment import is_unknown, online_cpus, read_text, utc_now_iso
from benchlab.environment.cpu import CPUFREQ_ABSENT_REASON, SYS_CPU
from benchlab.errors import UserError

STATE_DIR_ENV = "BENCHLAB_STATE_DIR"
DEFAULT_STATE_DIR = Path("/var/lib/benchlab")
STATE_FILE_NAME = "tune-state.json"
STATE_FORMAT = 1
TUNABLES = ("aslr", "governor", "boost", "thp")

_THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")
_ASLR = Path("/proc/sys/kernel/randomize_va_space")


def default_state_path() -> Path:
    """``$BENCHLAB_STATE_DIR/tune-state.json``, default ``/var/lib/benchlab/tune-state.json``."""
    base = os.environ.get(STATE_DIR_ENV)
    return (Path(base) if base else DEFAULT_STATE_DIR) / STATE_FILE_NAME


@dataclass
class TuneAction:
    """One setting ``tune`` would change, or why it cannot.

    ``status`` is ``change`` (current differs from target), ``already`` (already at target) or
    ``unavailable`` (not available here; ``reason`` says why).
    """

    name: str
    path: str | None
    current: str | None
    target: str | None
    status: str
    reason: str = ""


def current_value(path: Path) -> str | dict[str, str]:
    """The setting in ``path`` as text, or the unknown marker when it cannot be read."""
    text = read_text(path)
    if is_unknown(text):
        return text
    # sysfs multiple-choice files mark the active value in brackets.
    return text[text.index("[") + 1:text.index("]")] if "[" in text else text


def plan_tune(only: Iterable[str] | None = None) -> list[TuneAction]:
    """What :func:`tune` would do for each tunable, without changing anything."""
    names = _validate_names(only)
    actions: list[TuneAction] = []

    def add(name: str, path: Path, target: str, allowed: Iterable[str] | None = None) -> None:
        current = current_value(path)
        if is_unknown(current):
            actions.append(TuneAction(name, str(path), None, target, "unavailable",
                                      f"not available here: {current['unknown']}"))
        elif allowed is not None and target not in allowed:
            actions.append(TuneAction(name, str(path), current, target, "unavailable",
                                      f"not available here: {path} does not offer {target!r}"))
        else:
            status = "already" if current == target else "change"
            actions.append(TuneAction(name, str(path), current, target, status))

    if "aslr" in names:
        add("aslr", _ASLR, "0")
    if "governor" in names:
        cpus = online_cpus()
        policies = ([SYS_CPU / f"cpu{cpu}" / "cpufreq" for cpu in cpus]
                    if not is_unknown(cpus) else [])
        present = [p for p in policies if (p / "scaling_governor").exists()]
        if not present:
            actions.append(TuneAction("governor", None, None, "performance", "unavailable",
                                      f"not available here: {CPUFREQ_ABSENT_REASON}"))
        for policy in present:
            offered = read_text(policy / "scaling_available_governors")
            add(f"governor:{policy.parent.name}", policy / "scaling_governor", "performance",
                None if is_unknown(offered) else offered.split())
    if "boost" in names:
        boost = SYS_CPU / "cpufreq" / "boost"
        no_turbo = SYS_CPU / "intel_pstate" / "no_turbo"
        per_policy = sorted(SYS_CPU.glob("cpufreq/policy*/boost"))
        if boost.exists():
            add("boost", boost, "0")
        elif no_turbo.exists():
            add("boost", no_turbo, "1")
        elif per_policy:
            for path in per_policy:
                add(f"boost:{path.parent.name}", path, "0")
        else:
            actions.append(TuneAction("boost", None, None, "off", "unavailable",
                                      "not available here: no /sys/devices/system/cpu/cpufreq/"
                                      "boost nor intel_pstate/no_turbo (virtualised or driver "
                                      "absent)"))
    if "thp" in names:
        add("thp", _THP_ENABLED, "never")
    return actions


def _validate_names(only: Iterable[str] | None) -> set[str]:
    if only is None:
        return set(TUNABLES)
    names = set(only)
    bad = sorted(names - set(TUNABLES))
    if bad:
        raise UserError(f"unknown setting(s) {', '.join(bad)}; choose from {', '.join(TUNABLES)}")
    return names


def require_root(what: str) -> None:
    """Refuse (UserError) ``benchlab system WHAT`` unless run as root."""
    if os.geteuid() != 0:
        raise UserError(f"benchlab system {what} writes to /proc and /sys and needs root; "
                        f"run it as root (e.g. sudo benchlab system {what})")


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Write the state file atomically, owner-only (mode 600): restore trusts nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # mkstemp creates the file 0600 whatever the umask, under a name no one else can predict.
        handle, tmp = tempfile.mkstemp(prefix=".tune-state-", dir=path.parent)
        try:
            with os.fdopen(handle, "w") as out:
                out.write(json.dumps(state, indent=2) + "\n")
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise UserError(f"cannot write the tune state file {path}: {exc.strerror or exc}; "
                        f"set {STATE_DIR_ENV} to a writable directory") from exc


def known_setting_path(name: str) -> tuple[Path, ...]:
    """The only paths a state entry called ``name`` may name: where :func:`tune` writes it.

    Empty for a name ``tune`` never writes. ``governor:cpuN`` and ``boost:policyN`` take the CPU
    or policy number from the name, so the path follows from the name alone.
    """
    if not isinstance(name, str):
        return ()
    if name == "aslr":
        return (_ASLR,)
    if name == "thp":
        return (_THP_ENABLED,)
    if name == "boost":
        return (SYS_CPU / "cpufreq" / "boost", SYS_CPU / "intel_pstate" / "no_turbo")
    match = re.fullmatch(r"governor:cpu(\d{1,5})", name)
    if match:
        return (SYS_CPU / f"cpu{int(match.group(1))}" / "cpufreq" / "scaling_governor",)
    match = re.fullmatch(r"boost:policy(\d{1,5})", name)
    if match:
        return (SYS_CPU / "cpufreq" / f"policy{int(match.group(1))}" / "boost",)
    return ()


def valid_setting_value(name: str, value: Any) -> bool:
    """Whether ``value`` is one the kernel file behind setting ``name`` can hold."""
    if not isinstance(value, str):
        return False
    if name == "aslr":
        return value in ("0", "1", "2")
    if name == "thp":
        return value in ("always", "madvise", "never")
    if name.startswith("governor:"):
        return re.fullmatch(r"[a-z][a-z0-9_]{0,31}", value) is not None
    return value in ("0", "1")  # boost, boost:policyN and intel_pstate/no_turbo


def write_setting(path: str, value: str) -> str | None:
    """Write ``value`` and read it back; an error message, or None on success."""
    try:
        with open(path, "w") as handle:
            handle.write(value + "\n")
    except OSError as exc:
        return f"writing {value!r} to {path} failed: {exc.strerror or exc}"
    now = current_value(Path(path))
    if now != value:
        return f"{path} reads {now!r} after writing {value!r}"
    return None


def tune(state_path: str | os.PathLike | None = None,
         only: Iterable[str] | None = None) -> dict[str, Any]:
    """Apply benchmarking settings (root), saving the exact previous values first.

    Parameters
    ----------
    state_path : path, optional
        Where to save the previous values (default :func:`default_state_path`).
    only : iterable of str, optional
        Subset of ``TUNABLES`` (aslr, governor, boost, thp); default all.

    Returns
    -------
    dict
        ``state_path`` (str or None when nothing was changed), ``actions`` (one dict per setting:
        name, path, current, target, status, reason; status ``changed``, ``already``,
        ``unavailable`` or ``failed``).

    Raises
    ------
    UserError
        Not root; a state file already exists (restore first); the state file cannot be written.
    """
    require_root("tune")
    path = Path(state_path) if state_path is not None else default_state_path()
    if path.exists():
        raise UserError(f"a tune state already exists at {path}; run `benchlab system restore` "
                        "first so the original settings are not lost")
    actions = plan_tune(only)
    to_change = [a for a in actions if a.status == "change"]
    if to_change:
        # Save before touching anything, so a crash midway can still be restored.
        write_state(path, {
            "format": STATE_FORMAT,
            "tuned_at": utc_now_iso(),
            "boot_id": reason_of(read_text("/proc/sys/kernel/random/boot_id")),
            "settings": [{"name": a.name, "path": a.path, "previous": a.current,
                          "applied": a.target} for a in to_change],
        })
    for action in to_change:
        error = write_setting(action.path, action.target)
        if error:
            action.status, action.reason = "failed", error
        else:
            action.status = "changed"
    return {"state_path": str(path) if to_change else None,
            "actions": [asdict(a) for a in actions]}

