"""``benchlab cluster certs``: a team CA and TLS certificates for a Dask cluster. The client
options ``--tls-dir`` / ``--insecure`` every command that takes ``--cluster`` shares are
:func:`benchlab.cli.execute_options.tls_options` (``run`` need not build this command).

Nothing here imports Dask: the certificates are made with ``cryptography`` (imported only by
the ``certs`` command).
"""

from __future__ import annotations

import click

from benchlab.cli.output_path import OutputPath
from benchlab.errors import UserError


@click.group("cluster")
def cluster_group() -> None:
    """Set up a team's Dask cluster: TLS certificates (docs/cluster.md)."""


@cluster_group.command("certs")
@click.argument("directory", type=OutputPath(directory=True))
@click.option("--hosts", default="", metavar="HOST,...",
              help="Host names and IP addresses of the scheduler and workers (written into "
                   "their certificates).")
@click.option("--client", "client_name", default=None, metavar="NAME",
              help="Sign one more client certificate with the CA already in DIR, into DIR/NAME "
                   "(one per person).")
@click.option("--days", default=365, show_default=True, type=int,
              help="Validity of the certificates (days).")
@click.option("--overwrite", is_flag=True, help="Replace an existing CA in DIR.")
def certs(directory: str, hosts: str, client_name: str | None, days: int,
          overwrite: bool) -> None:
    """Make a team CA and certificates for a TLS Dask cluster in DIRECTORY (keys 0600).

    DIR gets ca.pem and ca-key.pem (keep the CA key offline), and a certificate and key for the
    scheduler, the workers and a client. Start the scheduler and workers with them and run
    `benchlab run --cluster tls://SCHEDULER:8786 --tls-dir DIR` (docs/cluster.md).
    """
    from benchlab.core.cluster.tls import add_client, make_certificates

    if client_name is not None:
        out = add_client(directory, client_name, days=days)
        click.echo(f"client certificate for {client_name} in {out} (ca.pem, client.pem, "
                   f"client-key.pem); give that directory to them: --tls-dir {out}")
        return
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    if any(not all(c.isalnum() or c in "-_.:" for c in h) for h in names):
        raise UserError(f"--hosts {hosts!r}: give comma-separated host names or IP addresses")
    written = make_certificates(directory, names, days=days, overwrite=overwrite)
    click.echo(f"team CA and certificates in {directory}: "
               f"{', '.join(p.name for p in written)}")
    click.echo(f"scheduler: dask scheduler --tls-ca-file {directory}/ca.pem --tls-cert "
               f"{directory}/scheduler.pem --tls-key {directory}/scheduler-key.pem")
    click.echo(f"workers:   dask worker tls://SCHEDULER:8786 --tls-ca-file {directory}/ca.pem "
               f"--tls-cert {directory}/worker.pem --tls-key {directory}/worker-key.pem ...")
    click.echo(f"client:    benchlab run --cluster tls://SCHEDULER:8786 --tls-dir {directory} ...")


commands = [cluster_group]
