"""The ``benchlab`` command: a thin Click group; each command group lives in its own module.

A module listed in ``COMMAND_MODULES`` exposes ``commands``, a list of Click commands or groups,
and is registered when it exists. The CLI only parses arguments, calls the library layers and
prints; all logic lives in measure/, control/, stats/, machines/, store/ and report/.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from benchlab import __version__
from benchlab.errors import UserError

COMMAND_MODULES = [
    "run", "data", "env", "system", "demo", "analyze", "compare",
    "profile", "variability", "calibrate", "predict", "study", "report",
]


class _Group(click.Group):
    """Turns :class:`UserError` and Click usage errors into one line and exit code 2."""

    def main(self, *args, **kwargs):  # noqa: D401 - Click hook
        kwargs.setdefault("standalone_mode", False)
        try:
            rv = super().main(*args, **kwargs)
            return rv
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("benchlab: aborted", err=True)
            sys.exit(130)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see: {exc.ctx.command_path} --help)"
            click.echo(f"benchlab: error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"benchlab: error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(2)
        except UserError as exc:
            click.echo(f"benchlab: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            sys.exit(0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchlab")
def cli() -> None:
    """benchlab: rigorous, reproducible performance measurement."""


def _register() -> None:
    for name in COMMAND_MODULES:
        modname = f"benchlab.cli.{name}"
        if importlib.util.find_spec(modname) is None:
            continue
        module = importlib.import_module(modname)
        for command in module.commands:
            cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="benchlab")


if __name__ == "__main__":
    main()
