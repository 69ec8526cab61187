"""Isolation backends: ``--isolation bare | cgroup | wrap:TEMPLATE``.

``bare`` runs the program directly; ``cgroup`` runs it in a fresh benchlab cgroup per run (the
limits given by ``--cpu-quota`` etc., or none, but always with cgroup CPU and memory accounting);
``wrap:TEMPLATE`` hands the program to an external isolator. The template is a shell-like
command line where ``{cmd}`` stands for the program's argv (each word quoted) and ``{meta}`` for a
file path benchlab provides for the isolator's meta file, e.g.::

    wrap:isolate --box-id=0 --meta={meta} --run -- {cmd}
    wrap:systemd-run --scope --quiet -- {cmd}
    wrap:firejail --quiet -- {cmd}
    wrap:docker run --rm IMAGE {cmd}

For ``isolate`` (IOI's sandbox), the meta file (``key:value`` lines) is parsed and stored as the
isolator's own view of the run: time, time-wall, max-rss, csw-voluntary, csw-forced, cg-mem,
status, exitcode.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from benchlab.errors import UserError

#: isolate meta keys stored, with their unit and the factor to the store's unit.
ISOLATE_FIELDS: dict[str, tuple[str, float]] = {
    "time": ("ns", 1e9),
    "time-wall": ("ns", 1e9),
    "max-rss": ("KiB", 1.0),
    "cg-mem": ("KiB", 1.0),
    "csw-voluntary": ("count", 1.0),
    "csw-forced": ("count", 1.0),
    "exitcode": ("code", 1.0),
    "exitsig": ("signal", 1.0),
    "killed": ("flag", 1.0),
    "cg-oom-killed": ("flag", 1.0),
}


@dataclass(frozen=True)
class Isolation:
    """A parsed ``--isolation`` value."""

    mode: str  # bare | cgroup | wrap
    template: str | None = None

    def to_dict(self) -> dict:
        """Plain-data form for the stored setup."""
        return {"mode": self.mode, "template": self.template}

    @property
    def wants_meta(self) -> bool:
        """True when the template asks for a meta-file path."""
        return bool(self.template and "{meta}" in self.template)

    def wrap(self, argv: list[str], meta_path: str | None = None) -> list[str]:
        """The argv that runs ``argv`` under the isolator (unchanged for bare/cgroup)."""
        if self.mode != "wrap":
            return list(argv)
        assert self.template is not None
        words = shlex.split(self.template)
        out: list[str] = []
        for w in words:
            if w == "{cmd}":
                out.extend(argv)
            elif "{meta}" in w:
                out.append(w.replace("{meta}", meta_path or "/dev/null"))
            else:
                out.append(w)
        return out


def parse_isolation(text: str | None) -> Isolation:
    """Parse ``bare``, ``cgroup`` or ``wrap:TEMPLATE`` (TEMPLATE must contain ``{cmd}``)."""
    if text is None or text == "bare":
        return Isolation("bare")
    if text == "cgroup":
        return Isolation("cgroup")
    if text.startswith("wrap:"):
        template = text[len("wrap:"):].strip()
        try:
            words = shlex.split(template)
        except ValueError as exc:
            raise UserError(f"--isolation template cannot be parsed ({exc}); fix its quoting") from None
        if "{cmd}" not in words:
            raise UserError("--isolation wrap:TEMPLATE must contain {cmd} as a word where the "
                            "program goes, e.g. wrap:systemd-run --scope -- {cmd}")
        return Isolation("wrap", template)
    raise UserError(f"--isolation {text!r} is not understood; use bare, cgroup or wrap:TEMPLATE")


def parse_isolate_meta(text: str) -> list[dict]:
    """Measurements (source ``isolate``) from an isolate meta file's ``key:value`` lines.

    Numeric fields listed in :data:`ISOLATE_FIELDS` are converted to the store's units (seconds
    to ns); ``status`` and ``message`` are kept as notes of a ``status`` row.
    """
    rows: list[dict] = []
    notes: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key in ISOLATE_FIELDS:
            unit, factor = ISOLATE_FIELDS[key]
            try:
                rows.append({"source": "isolate", "name": key, "value": float(value) * factor,
                             "unit": unit, "status": "ok"})
            except ValueError:
                rows.append({"source": "isolate", "name": key, "value": None, "unit": unit,
                             "status": "unknown", "note": f"unparsed {value!r}"})
        elif key in ("status", "message"):
            notes[key] = value
    if notes:
        rows.append({"source": "isolate", "name": "status", "value": None, "unit": None,
                     "status": "ok", "note": "; ".join(f"{k}={v}" for k, v in notes.items())})
    return rows
