"""``benchlab env``: show the environment a session would be measured in."""

from __future__ import annotations

import sys
from typing import Any

import click

from benchlab.cli.json_output import echo_json
from benchlab.environment import collect_environment, flatten, is_unknown


def _format_leaf(value: Any) -> tuple[str, bool]:
    """Text for one leaf and whether to show it dimmed (unknown or absent)."""
    if is_unknown(value):
        return f"unknown: {value['unknown']}", True
    if value is None:
        return "not set", True
    if isinstance(value, bool):
        return ("yes" if value else "no"), False
    if isinstance(value, list):
        return (", ".join(map(str, value)), False) if value else ("(none)", True)
    if isinstance(value, dict) and not value:
        return "(none)", True
    return str(value), False


def _print_table(env: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"benchlab environment (digest {env['digest']})")
    table.add_column("section", style="bold")
    table.add_column("field")
    table.add_column("value", overflow="fold")
    previous_section = None
    for path, value in flatten(env):
        section, _, field = path.partition(".")
        # env_vars get one summary row below; the digest is in the title.
        if section in ("digest", "env_vars", "env_vars_digest"):
            continue
        shown_section = section if section != previous_section else ""
        previous_section = section
        text, dim = _format_leaf(value)
        table.add_row(shown_section, field, Text(text, style="dim" if dim else ""))
    names = sorted(env.get("env_vars", {}))
    table.add_row("env_vars", "names (a session stores values only as HMAC digests keyed by "
                  "your own key file, never the store: docs/team-store.md)",
                  Text(", ".join(names) if names else "(none)"))
    Console().print(table)


@click.command("env")
@click.option("--json", "as_json", is_flag=True, help="Print the environment as JSON.")
def env(as_json: bool) -> None:
    """Show the machine, kernel settings and software a benchmark would be measured in.

    Every field is a value or 'unknown' with the reason. Environment variable values are never
    shown; a session stores each only as an HMAC digest keyed by its store's random secret, so
    a dictionary cannot invert it.
    """
    environment = collect_environment(argv=sys.argv)
    if as_json:
        echo_json(environment, indent=2)
    else:
        _print_table(environment)


commands = [env]
