"""``benchlab delete SESSION...``, ``benchlab rename SESSION NAME`` and ``benchlab store vacuum``:
keeping a store tidy (:mod:`benchlab.store.tidy`). Nothing is deleted that was not named."""

from __future__ import annotations

import sys

import click

from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError
from benchlab.units import parse_age_s, plural


@click.command("delete")
@click.argument("sessions", nargs=-1, metavar="SESSION...")
@click.option("--older-than", "older_than", default=None, metavar="AGE",
              help="Also every session created more than AGE ago (e.g. 30d, 2w, 12h).")
@click.option("-y", "--yes", is_flag=True, help="Do not ask; delete.")
@db_option
def delete_cmd(sessions, older_than, yes, db):
    """Delete SESSIONs (uid, id or name) with their runs and samples, in one transaction.

    Lists what will go and asks first (unless --yes). A running session is never deleted.
    """
    from benchlab.store.tidy import delete_sessions, sessions_to_delete

    if not sessions and older_than is None:
        raise UserError("name the sessions to delete (uid, id or name), or --older-than AGE; "
                        "`benchlab list` shows them")
    age_s = parse_age_s(older_than, what="--older-than") if older_than is not None else None
    store = open_store(db)
    rows = sessions_to_delete(store, sessions, older_than_s=age_s)
    if not rows:
        click.echo(f"no session is older than {older_than} in {store.path}; nothing deleted")
        return
    runs = {r["id"]: r.get("n_runs") for r in store.sessions()}
    for r in rows:
        count = runs.get(r["id"])
        click.echo(f"  {r['uid'][:8]}  {r['created_utc'][:19].replace('T', ' ')}  "
                   f"{r['kind']:<7} {r['status']:<11} "
                   f"{'' if count is None else f'{count} runs  '}{r.get('name') or ''}".rstrip())
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(f"not deleting {len(rows)} session(s) without a terminal to ask; "
                            "add --yes to delete them")
        if not click.confirm(f"delete these {len(rows)} session(s) from {store.path}?",
                             default=False):
            click.echo("nothing deleted")
            return
    done = delete_sessions(store, rows)
    click.echo(f"deleted {plural(len(done.sessions), 'session')} ({plural(done.runs, 'run')}) "
               f"from {store.path}; "
               "`benchlab store vacuum` gives the space back")


@click.command("rename")
@click.argument("session")
@click.argument("name")
@db_option
def rename_cmd(session, name, db):
    """Give SESSION (uid, id or name) the name NAME."""
    from benchlab.store.tidy import rename_session

    store = open_store(db)
    row, old = rename_session(store, session, name)
    click.echo(f"session {row['uid'][:8]}: {old or '(no name)'} -> {name.strip()}")


@click.command("vacuum")
@db_option
def vacuum_cmd(db):
    """Give the space of deleted sessions back to the file system (SQLite VACUUM; PostgreSQL
    VACUUM ANALYZE). Deletes nothing."""
    from benchlab.store.tidy import vacuum

    store = open_store(db)
    done = vacuum(store)
    if done.bytes_before is None:
        click.echo(f"vacuumed {store.path}")
    else:
        click.echo(f"vacuumed {store.path}: {done.bytes_before / 1e6:.2f} MB -> "
                   f"{done.bytes_after / 1e6:.2f} MB")


commands = [delete_cmd, rename_cmd]
