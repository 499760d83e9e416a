"""A private CA and one TLS certificate per cluster node, as PEM files, for the controller listener.

The controller listener authenticates both ends (mutual TLS): every node presents a certificate
signed by the cluster's CA and trusts only that CA. A provisioner calls
`issue_cluster_certificates` once per cluster; calling it again on the same directory reuses the
CA (so a broker added later is trusted by the running nodes) and issues only missing nodes.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_CERTIFICATE = "ca.pem"
CA_KEY = "ca-key.pem"
# Back-dated so that a node whose clock is a little behind the provisioner's accepts it at once.
CLOCK_SKEW = datetime.timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class NodeCertificates:
    node_id: int
    # The node's certificate followed by its private key (Kafka's PEM keystore), mode 0600.
    keystore: Path
    # The CA certificate: the only issuer this node trusts.
    truststore: Path

    def controller_properties(self, listener_name: str = "CONTROLLER") -> dict[str, str]:
        """The broker properties that make `listener_name` mutual TLS with these files."""
        prefix = f"listener.name.{listener_name.lower()}."
        return {
            f"{prefix}ssl.keystore.location": str(self.keystore),
            f"{prefix}ssl.truststore.location": str(self.truststore),
        }


def issue_cluster_certificates(
    directory: Path, node_ids: list[int], hosts: list[str], *, days: int = 825
) -> dict[int, NodeCertificates]:
    """Write `ca.pem` (+ `ca-key.pem`) and `node-<id>.pem` keystores into `directory`.

    `hosts` (IP addresses or DNS names) go into every node certificate's subject alternative
    names, so hostname verification passes whichever voter address a peer dials. Existing files
    are kept: the CA is reused and a node whose keystore exists is not re-issued.
    """
    if not hosts:
        raise ValueError("hosts: at least one address or name is required")
    if days < 1:
        raise ValueError("days: must be at least 1")
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_certificate, new_ca = _load_or_create_ca(directory, days)
    issued = {}
    for node_id in node_ids:
        keystore = directory / f"node-{node_id}.pem"
        # A keystore left over from an earlier CA would be refused by every peer.
        if new_ca or not keystore.exists():
            key = ec.generate_private_key(ec.SECP256R1())
            certificate = _node_certificate(node_id, key, hosts, ca_key, ca_certificate, days)
            _write_private(keystore, _pem(certificate) + _key_pem(key))
        issued[node_id] = NodeCertificates(node_id, keystore, directory / CA_CERTIFICATE)
    return issued


def _load_or_create_ca(
    directory: Path, days: int
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate, bool]:
    """The CA's key and certificate, and whether they were created just now."""
    key_path, certificate_path = directory / CA_KEY, directory / CA_CERTIFICATE
    if key_path.exists() and certificate_path.exists():
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{key_path}: not an EC private key")
        return key, x509.load_pem_x509_certificate(certificate_path.read_bytes()), False
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"kafka-cluster-ca-{os.urandom(4).hex()}")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        # The CA outlives its node certificates so that re-issuing them does not need a new CA.
        .not_valid_after(now + datetime.timedelta(days=days * 2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(key_path, _key_pem(key))
    certificate_path.write_bytes(_pem(certificate))
    return key, certificate, True


def _node_certificate(
    node_id: int,
    key: ec.EllipticCurvePrivateKey,
    hosts: list[str],
    ca_key: ec.EllipticCurvePrivateKey,
    ca_certificate: x509.Certificate,
    days: int,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"node-{node_id}")]))
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName([_general_name(host) for host in hosts]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        # Every node is both a server (its listener) and a client (dialing its peers).
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write_private(path: Path, data: bytes) -> None:
    # Created 0600 rather than chmod-ed afterwards: the key is never readable by others, not even briefly.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.chmod(path, 0o600)  # an existing file keeps its old mode through O_CREAT
