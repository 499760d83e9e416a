"""issue_cluster_certificates: a CA and per-node keystores a provisioner writes for the controller listener."""

from __future__ import annotations

import ipaddress
import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509

from controlplane.clusters.provisioners.certificates import CA_CERTIFICATE, CA_KEY, issue_cluster_certificates


def _certificate(keystore: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificates(keystore.read_bytes())[0]


def test_it_issues_one_keystore_per_node_signed_by_the_cluster_ca(tmp_path: Path) -> None:
    issued = issue_cluster_certificates(tmp_path, [1, 2, 3], ["127.0.0.1", "kafka-1.internal"], days=30)

    assert sorted(issued) == [1, 2, 3]
    ca = x509.load_pem_x509_certificate((tmp_path / CA_CERTIFICATE).read_bytes())
    for node_id, files in issued.items():
        assert files.truststore == tmp_path / CA_CERTIFICATE
        certificate = _certificate(files.keystore)
        certificate.verify_directly_issued_by(ca)
        assert certificate.subject.rfc4514_string() == f"CN=node-{node_id}"
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
        assert names.get_values_for_type(x509.DNSName) == ["kafka-1.internal"]
        lifetime = certificate.not_valid_after_utc - certificate.not_valid_before_utc
        assert 30 <= lifetime.days <= 31
        # The keystore holds certificate and key: Python's TLS loads it as one file.
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(files.keystore))


def test_private_keys_are_readable_by_the_owner_only(tmp_path: Path) -> None:
    issued = issue_cluster_certificates(tmp_path, [1], ["127.0.0.1"])
    for path in (issued[1].keystore, tmp_path / CA_KEY):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_second_call_reuses_the_ca_and_keeps_issued_nodes(tmp_path: Path) -> None:
    first = issue_cluster_certificates(tmp_path, [1, 2], ["127.0.0.1"])
    kept = first[1].keystore.read_bytes()
    ca_before = (tmp_path / CA_CERTIFICATE).read_bytes()

    second = issue_cluster_certificates(tmp_path, [1, 2, 4], ["127.0.0.1"])

    assert (tmp_path / CA_CERTIFICATE).read_bytes() == ca_before
    assert second[1].keystore.read_bytes() == kept
    ca = x509.load_pem_x509_certificate(ca_before)
    _certificate(second[4].keystore).verify_directly_issued_by(ca)


def test_a_new_ca_reissues_keystores_left_from_the_old_one(tmp_path: Path) -> None:
    issue_cluster_certificates(tmp_path, [1], ["127.0.0.1"])
    (tmp_path / CA_KEY).unlink()

    issued = issue_cluster_certificates(tmp_path, [1], ["127.0.0.1"])

    ca = x509.load_pem_x509_certificate((tmp_path / CA_CERTIFICATE).read_bytes())
    _certificate(issued[1].keystore).verify_directly_issued_by(ca)


def test_it_names_the_properties_of_the_controller_listener(tmp_path: Path) -> None:
    files = issue_cluster_certificates(tmp_path, [7], ["10.0.0.7"])[7]
    assert files.controller_properties() == {
        "listener.name.controller.ssl.keystore.location": str(tmp_path / "node-7.pem"),
        "listener.name.controller.ssl.truststore.location": str(tmp_path / "ca.pem"),
    }


@pytest.mark.parametrize(("hosts", "days", "problem"), [([], 825, "hosts"), (["127.0.0.1"], 0, "days")])
def test_it_refuses_no_hosts_or_no_lifetime(
    tmp_path: Path, hosts: list[str], days: int, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        issue_cluster_certificates(tmp_path, [1], hosts, days=days)
