"""``benchlab store``: work on whole stores (``store copy SRC DST`` between SQLite and PostgreSQL)."""

from __future__ import annotations

import click

from benchlab.cli.tidy import vacuum_cmd
from benchlab.errors import UserError
from benchlab.units import plural


@click.group("store")
def store_group() -> None:
    """Work on whole stores: copy sessions between SQLite files and PostgreSQL databases."""


@store_group.command("copy")
@click.argument("src", metavar="SRC")
@click.argument("dst", metavar="DST")
@click.option("-s", "--session", "sessions", multiple=True, metavar="SESSION",
              help="Copy this session (uid, id or name; repeatable). Default: every session.")
def copy_cmd(src: str, dst: str, sessions: tuple[str, ...]) -> None:
    """Copy sessions from store SRC to store DST (each an SQLite file or a postgresql:// URL).

    Environments, setups, benchmarks, runs, samples, measurements and metrics go with each
    session. Each copy is verified by row counts and a per-session digest (printed); a session
    already in DST with the same digest is skipped, so copying twice duplicates nothing.
    """
    import os

    from benchlab.store.backends import backend_for
    from benchlab.store.copy import copy_sessions
    from benchlab.store.db import Store

    if src == dst or (backend_for(src).files(src)
                      and os.path.exists(dst) and os.path.exists(src)
                      and os.path.samefile(src, dst)):
        raise UserError(f"SRC and DST are the same store ({src}); give two different stores")
    with Store.open(src, readonly=True) as source, Store.open(dst) as target:
        done = copy_sessions(source, target, sessions)
    totals = {"copied": 0, "present": 0}
    for item in done:
        totals[item.action] += 1
        c = item.counts
        click.echo(f"{item.uid}  {item.action:<7}  {plural(c['benchmarks'], 'benchmark')}, "
                   f"{plural(c['runs'], 'run')}, {plural(c['samples'], 'sample')}, "
                   f"{plural(c['measurements'], 'measurement')}, "
                   f"{plural(c['metrics'], 'metric')}  sha256 {item.digest}  "
                   f"{item.name or ''}".rstrip())
    click.echo(f"{plural(totals['copied'], 'session')} copied, {totals['present']} already in "
               f"{target.path} "
               f"(same digest); every copy verified")


store_group.add_command(vacuum_cmd)
commands = [store_group]
