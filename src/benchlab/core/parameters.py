"""hyperfine's parameters: ``--parameter-scan``/``--parameter-list`` values, and the benchmarks
they make by substituting ``{NAME}`` in commands, names and hooks (first parameter fastest)."""

from __future__ import annotations

import itertools
import re

from benchlab.core.plan import BenchmarkSpec
from benchlab.errors import UserError

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def scan_values(name: str, low: str, high: str, step: str | None) -> list[str]:
    """Values of ``--parameter-scan NAME LOW HIGH [--step S]`` as strings, inclusive of HIGH.

    Integers stay integers; decimals keep the step's precision (0.1 steps print as 0.1, 0.2, ...).
    """
    from decimal import Decimal, InvalidOperation  # scans only: ~2 ms off every run's start

    try:
        lo, hi = Decimal(low), Decimal(high)
        st = Decimal(step) if step is not None else Decimal(1)
    except InvalidOperation:
        raise UserError(f"--parameter-scan {name}: LOW, HIGH and --step must be numbers "
                        f"(got {low!r}, {high!r}, {step!r})") from None
    if not all(v.is_finite() for v in (lo, hi, st)):
        raise UserError(f"--parameter-scan {name}: LOW, HIGH and --step must be finite numbers")
    if st <= 0:
        raise UserError(f"--parameter-step-size must be positive (got {step})")
    if hi < lo:
        raise UserError(f"--parameter-scan {name}: HIGH ({high}) is below LOW ({low}); swap them")
    count = int((hi - lo) / st) + 1
    if count > 100_000:
        raise UserError(f"--parameter-scan {name} makes {count} values; use a larger --step")
    return [str(lo + i * st) for i in range(count)]


def expand_benchmarks(commands: list[str], names: list[str],
                      parameters: list[tuple[str, list[str]]]) -> list[BenchmarkSpec]:
    """Cross commands with every combination of parameter values, substituting ``{NAME}``.

    As in hyperfine, names given with ``-n`` pair with commands in order and are substituted too.
    A command line used as the name of more than one benchmark is numbered (``true #1``).
    """
    if names and len(names) != len(commands):
        raise UserError(f"{len(names)} names (-n) for {len(commands)} commands; give one name "
                        f"per command or none")
    pnames = [p for p, _ in parameters]
    dup = {p for p in pnames if pnames.count(p) > 1}
    if dup:
        raise UserError(f"parameter {sorted(dup)[0]!r} is defined twice; define each once")
    # hyperfine's order: the first parameter varies fastest (x=a,y=1; x=b,y=1; x=a,y=2; ...)
    combos = ([tuple(reversed(c)) for c in
               itertools.product(*[vals for _, vals in reversed(parameters)])]
              if parameters else [()])
    specs = []
    for i, command in enumerate(commands):
        used = set(_PLACEHOLDER.findall(command))
        unknown = used - set(pnames)
        if unknown and parameters:
            raise UserError(f"command {command!r} uses {{{sorted(unknown)[0]}}} but no such "
                            f"parameter is defined; add --parameter-list or --parameter-scan")
        for combo in combos:
            values = dict(zip(pnames, combo))
            cmd = substitute_parameters(command, values)
            name = substitute_parameters(names[i], values) if names else cmd
            specs.append(BenchmarkSpec(name=name, command=cmd, parameters=values))
    _number_repeated_commands(specs)
    return specs


def substitute_parameters(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{NAME}`` of a parameter in ``values`` replaced by its value (other
    braces left as they are), as hyperfine substitutes commands, names and hooks."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _number_repeated_commands(specs: list[BenchmarkSpec]) -> None:
    """Name a command given more than once ``CMD #1``, ``CMD #2``...: the same command twice is
    an A/A comparison (as in hyperfine), the first lesson in the machine's noise. Only names
    taken from the command line are numbered; names the user gave (``-n``) stay as given, and
    repeated ones are refused by the plan's check."""
    derived = [s.name for s in specs if s.name == s.command]
    repeated = {n for n in derived if derived.count(n) > 1}
    seen: dict[str, int] = {}
    for spec in specs:
        if spec.name == spec.command and spec.name in repeated:
            seen[spec.name] = seen.get(spec.name, 0) + 1
            spec.name = f"{spec.name} #{seen[spec.name]}"
