"""``benchlab system``: check the machine for benchmarking; ``tune`` and ``restore`` settings."""

from __future__ import annotations

from pathlib import Path

import click

from benchlab.cli.json_output import echo_json
from benchlab.cli.output_path import OutputPath
from benchlab.control.system import TUNABLES, restore, run_checks, tune

_STATUS_STYLE = {"ok": "green", "warn": "yellow", "unknown": "dim"}


@click.group("system", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option("--quick", is_flag=True,
              help="Skip the ~1 s CPU contention probe (only read /proc and /sys).")
@click.pass_context
def system(ctx: click.Context, as_json: bool, quick: bool) -> None:
    """Check this machine for benchmarking: governor, boost, SMT, ASLR, swap, THP, load,
    isolated CPUs, perf_event_paranoid, VM/container, clocksource and real CPU contention.

    Subcommands `tune` and `restore` change the settings that can be changed (root).
    """
    if ctx.invoked_subcommand is not None:
        return
    checks = run_checks(include_contention=not quick)
    if as_json:
        echo_json([check.to_dict() for check in checks], indent=2)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="benchlab system checks")
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("status")
    table.add_column("observed", overflow="fold")
    table.add_column("advice", overflow="fold")
    for check in checks:
        table.add_row(check.name, Text(check.status, style=_STATUS_STYLE[check.status]),
                      Text(check.observed), Text(check.advice))
    Console().print(table)


_STATE_FILE_HELP = ("State file for the previous values (default: $BENCHLAB_STATE_DIR/"
                    "tune-state.json, else /var/lib/benchlab/tune-state.json).")


@system.command("tune")
@click.option("--only", "only", multiple=True, type=click.Choice(TUNABLES),
              help="Change only this setting (repeatable); default: all of them.")
@click.option("--state-file", type=OutputPath(path_type=Path),
              help=_STATE_FILE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def tune_command(only: tuple[str, ...], state_file: Path | None, as_json: bool) -> None:
    """Set ASLR off, governor performance, boost off and THP never, where possible (root).

    \b
    Why each:
      aslr 0          same memory layout every run (less variance from alignment)
      governor        'performance': no frequency ramp-up at the start of short runs
      boost off       turbo depends on temperature and busy cores, so it drifts
      thp never       huge-page backing depends on fragmentation; 4 KiB pages do not
    Not changed: SMT (would take CPUs offline), isolcpus (needs a reboot), swap.
    Settings this machine lacks (e.g. cpufreq in a VM) are reported as not available.

    The exact previous values are saved first; `benchlab system restore` puts them back.
    """
    report = tune(state_path=state_file, only=only or None)
    if as_json:
        echo_json(report, indent=2)
        return
    for action in report["actions"]:
        if action["status"] == "changed":
            click.echo(f"{action['name']}: {action['current']} -> {action['target']} "
                       f"({action['path']})")
        elif action["status"] == "already":
            click.echo(f"{action['name']}: already {action['target']}")
        elif action["status"] == "unavailable":
            click.echo(f"{action['name']}: {action['reason']}")
        else:
            click.echo(f"{action['name']}: FAILED: {action['reason']}")
    if report["state_path"]:
        click.echo(f"previous values saved to {report['state_path']}; "
                   "undo with `benchlab system restore`")
    else:
        click.echo("nothing to change: no state file written")
    if any(a["status"] == "failed" for a in report["actions"]):
        raise click.exceptions.Exit(1)


@system.command("restore")
@click.option("--state-file", type=OutputPath(path_type=Path),
              help=_STATE_FILE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print what was restored as JSON.")
def restore_command(state_file: Path | None, as_json: bool) -> None:
    """Put back exactly the values saved by `benchlab system tune` and remove the state file."""
    report = restore(state_path=state_file)
    if as_json:
        echo_json(report, indent=2)
        return
    for item in report["restored"]:
        click.echo(f"{item['name']}: {item['was']} -> {item['value']} ({item['path']})")
    click.echo(f"restored; removed {report['state_path']}")


commands = [system]
