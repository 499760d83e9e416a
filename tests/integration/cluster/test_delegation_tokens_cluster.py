"""Delegation tokens in a cluster: a token created through one broker goes through the metadata
log, so every broker authenticates with it, and expiring it anywhere stops it everywhere."""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest
from kio.schema.create_delegation_token.v3.request import CreateDelegationTokenRequest
from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest

from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.fixtures.servers import wait_until
from tests.integration.broker_security.test_delegation_tokens import SECRET, scram_login
from tests.integration.cluster.test_interbroker_security import (
    ADMIN_PASSWORD,
    MECHANISM,
    client_settings,
    security_properties,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def token_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = start_cluster(
        tmp_path / "cluster",
        3,
        properties={**security_properties("SASL_PLAINTEXT"), "delegation.token.secret.key": SECRET},
        client_protocol="SASL_PLAINTEXT",
        client_settings=client_settings(),
    )
    try:
        yield cluster
    finally:
        print(f"\n=== node logs ===\n{cluster.log_tails(60)}")
        cluster.stop()


def _token_logs_in(bootstrap: str, token_id: str, password: str) -> bool:
    session = scram_login(bootstrap, token_id, password, MECHANISM, ",tokenauth=true")
    if session is None:
        return False
    session.close()
    return True


def test_a_token_created_on_one_broker_authenticates_on_every_broker(token_cluster: LocalCluster) -> None:
    first, *others = token_cluster.brokers
    admin = scram_login(first.bootstrap, "admin", ADMIN_PASSWORD, MECHANISM)
    assert admin is not None
    with admin:
        created = admin.request(
            CreateDelegationTokenRequest(
                owner_principal_type=None,
                owner_principal_name=None,
                renewers=(),
                max_lifetime=datetime.timedelta(hours=1),
            )
        )
    assert created.error_code == 0
    password = base64.b64encode(created.hmac).decode()
    for node in token_cluster.brokers:
        wait_until(
            lambda node=node: _token_logs_in(node.bootstrap, created.token_id, password),
            timeout=20,
            what=f"the token to log in on broker {node.node_id}",
        )

    other_admin = scram_login(others[0].bootstrap, "admin", ADMIN_PASSWORD, MECHANISM)
    assert other_admin is not None
    with other_admin:
        expired = other_admin.request(
            ExpireDelegationTokenRequest(
                hmac=created.hmac, expiry_time_period=datetime.timedelta(milliseconds=-1)
            )
        )
    assert expired.error_code == 0
    for node in token_cluster.brokers:
        wait_until(
            lambda node=node: not _token_logs_in(node.bootstrap, created.token_id, password),
            timeout=20,
            what=f"broker {node.node_id} to refuse the expired token",
        )
    # The metadata log and every data directory hold the token's id, never its HMAC.
    for node in token_cluster.nodes.values():
        for path in node.data_dir.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert created.hmac not in data, path
                assert password.encode() not in data, path
