"""TLS with mutual authentication for a team's Dask cluster: a team CA and its certificates, and
the client's :class:`distributed.security.Security`.

Dask's ``tls://`` comm verifies *both* ends against one CA (``ssl.CERT_REQUIRED`` on the
scheduler, the workers and the client) and does not check host names (a cluster's own CA, IP
addresses): whoever holds a certificate signed by the team CA is a member, and nobody else can
connect. :func:`make_certificates` writes such a CA and one certificate per role (scheduler,
worker, client) with the ``cryptography`` package (ECDSA P-256 keys, files 0600);
:func:`add_client` signs one more client certificate (one per person) with the CA in a
directory. :func:`client_security` builds the client's ``Security`` from a directory made so,
from ``$BENCHLAB_TLS_DIR``, or from Dask's own ``distributed.comm.tls.*`` configuration.

The trust model (what this prevents and what not) is in docs/cluster.md.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlab.errors import UserError

#: File names in a certificate directory (``benchlab cluster certs DIR``).
CA_CERT, CA_KEY = "ca.pem", "ca-key.pem"
ROLES = ("scheduler", "worker", "client")


def cert_file(role: str) -> str:
    """The certificate file name of ``role`` in a certificate directory."""
    return f"{role}.pem"


def key_file(role: str) -> str:
    """The private-key file name of ``role`` in a certificate directory."""
    return f"{role}-key.pem"


@dataclass
class ClientTLS:
    """The three files a client presents: the team CA, its certificate and its key (paths)."""

    ca_file: str
    cert: str
    key: str


def _write_private(path: Path, data: bytes) -> None:
    # created 0600 from the start: a key must never exist world-readable, not even briefly
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)


def _new_key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "benchlab team"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(hosts: list[str]):
    from cryptography import x509

    names: list[Any] = []
    for h in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    return x509.SubjectAlternativeName(names)


def _sign(subject_cn: str, key, ca_cert, ca_key, *, hosts: list[str], days: int,
          is_ca: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = _dt.datetime.now(_dt.timezone.utc)
    subject = _name(subject_cn)
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(subject if is_ca else ca_cert.subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - _dt.timedelta(minutes=5))
               .not_valid_after(now + _dt.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=0 if is_ca else None),
                              critical=True))
    if is_ca:
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                          content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, encipher_only=False,
                          decipher_only=False), critical=True)
    else:
        # every Dask process is both a TLS server and a TLS client (workers listen too)
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                   ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        if hosts:
            builder = builder.add_extension(_san(hosts), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _cert_pem(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def make_certificates(directory: str | Path, hosts: list[str], *, days: int = 365,
                      overwrite: bool = False) -> list[Path]:
    """Write a new team CA and a scheduler, worker and client certificate into ``directory``.

    ``hosts``: names and IP addresses put in the scheduler's and workers' certificates
    (informative: Dask checks the CA, not host names). ``days``: validity (days). Refuses
    (UserError) to overwrite an existing CA unless ``overwrite``. Keys are written 0600.
    Returns the files written.
    """
    d = Path(directory)
    if not 1 <= days <= 3650:
        raise UserError(f"--days {days}: give 1..3650 days of validity")
    if (d / CA_KEY).exists() and not overwrite:
        raise UserError(f"{d / CA_KEY} exists: a new CA would lock out every certificate it "
                        f"signed; add a client with --client NAME, or pass --overwrite")
    try:
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)
    except OSError as exc:
        raise UserError(f"cannot create {d} ({exc.strerror}); give a writable directory") from None
    ca_key = _new_key()
    ca_cert = _sign("benchlab team CA", ca_key, None, ca_key, hosts=[], days=days, is_ca=True)
    written = [d / CA_CERT, d / CA_KEY]
    (d / CA_CERT).write_bytes(_cert_pem(ca_cert))
    _write_private(d / CA_KEY, _key_pem(ca_key))
    for role in ROLES:
        key = _new_key()
        cert = _sign(f"benchlab {role}", key, ca_cert, ca_key,
                     hosts=hosts if role != "client" else [], days=days)
        _write_private(d / key_file(role), _key_pem(key))
        (d / cert_file(role)).write_bytes(_cert_pem(cert))
        written += [d / cert_file(role), d / key_file(role)]
    return written


def add_client(directory: str | Path, name: str, *, days: int = 365) -> Path:
    """Sign one more client certificate with the CA in ``directory``, for the person ``name``.

    Writes ``directory/NAME/`` holding ``ca.pem``, ``client.pem`` and ``client-key.pem`` (a
    directory to hand to that person, given to benchlab as ``--tls-dir``). Returns it.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    d = Path(directory)
    if not name or not all(c.isalnum() or c in "-_." for c in name) or name.startswith("."):
        raise UserError(f"--client {name!r}: use letters, digits, '-', '_' and '.'")
    try:
        ca_cert = x509.load_pem_x509_certificate((d / CA_CERT).read_bytes())
        ca_key = serialization.load_pem_private_key((d / CA_KEY).read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise UserError(f"no team CA in {d} ({exc}); make one first with "
                        f"`benchlab cluster certs {d}`") from None
    out = d / name
    out.mkdir(mode=0o700, exist_ok=True)
    key = _new_key()
    cert = _sign(f"benchlab client {name}", key, ca_cert, ca_key, hosts=[], days=days)
    (out / CA_CERT).write_bytes(_cert_pem(ca_cert))
    (out / cert_file("client")).write_bytes(_cert_pem(cert))
    _write_private(out / key_file("client"), _key_pem(key))
    return out


def tls_from_directory(directory: str | Path, what: str) -> ClientTLS:
    """The client's files in a certificate directory; UserError naming a missing one.

    ``what`` names where the directory came from (``--tls-dir``, ``$BENCHLAB_TLS_DIR``).
    """
    d = Path(directory)
    files = ClientTLS(str(d / CA_CERT), str(d / cert_file("client")), str(d / key_file("client")))
    for path in (files.ca_file, files.cert, files.key):
        if not Path(path).is_file():
            raise UserError(f"{what} {d}: no {Path(path).name} there; make the directory with "
                            f"`benchlab cluster certs {d}`")
    return files


def configured_client_tls(tls_dir: str | None) -> ClientTLS | None:
    """The client's TLS files: ``tls_dir`` (``--tls-dir``), else ``$BENCHLAB_TLS_DIR``, else
    Dask's ``distributed.comm.tls.ca-file`` / ``client.cert`` / ``client.key``; None if none."""
    if tls_dir:
        return tls_from_directory(tls_dir, "--tls-dir")
    env = os.environ.get("BENCHLAB_TLS_DIR")
    if env:
        return tls_from_directory(env, "$BENCHLAB_TLS_DIR")
    import dask

    ca = dask.config.get("distributed.comm.tls.ca-file", None)
    cert = dask.config.get("distributed.comm.tls.client.cert", None)
    key = dask.config.get("distributed.comm.tls.client.key", None)
    if ca and cert:
        return ClientTLS(ca, cert, key or cert)
    return None


def client_security(files: ClientTLS) -> Any:
    """A ``distributed.security.Security`` that encrypts every connection and presents the
    client's certificate (mutual authentication); UserError when a file cannot be loaded."""
    import ssl

    from distributed.security import Security

    security = Security(tls_ca_file=files.ca_file, tls_client_cert=files.cert,
                        tls_client_key=files.key, require_encryption=True)
    try:  # load the files now: a wrong key or CA is one line here, not a Dask traceback later
        security.get_connection_args("client")
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise UserError(f"cannot load the TLS files {files.cert}, {files.key} or "
                        f"{files.ca_file} ({exc}); make them with `benchlab cluster certs DIR`"
                        ) from None
    return security
