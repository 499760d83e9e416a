"""A tenant world on a real SASL + ACL cluster, registered as an external cluster with its super user.

The cluster is the session's `managed_cluster` of the engine under test (our broker or Apache Kafka, see
tests/fixtures/engines.py), so every test that takes `kafka_world` runs on both engines. Team A ("payments")
and team B ("search") own unique topic and group prefixes on it, so tests sharing it never see each other's
resources. Every persona talks to the REST API with an API key.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.accounts.models import ServiceAccount
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER
from tests.fixtures.engines import ManagedCluster

SYSTEM = Actor.system()


@dataclass
class KafkaWorld:
    broker: ManagedCluster
    cluster: Cluster
    team_a: Team
    team_b: Team
    account_a: ServiceAccount
    account_b: ServiceAccount
    topic_prefix_a: str
    group_prefix_a: str
    topic_prefix_b: str
    group_prefix_b: str
    transactional_id_prefix_a: str
    transactional_id_prefix_b: str
    org_admin: APIClient
    developer_a: APIClient
    viewer_a: APIClient
    admin_b: APIClient

    def admin_client(self) -> AdminClient:
        return AdminClient(self.broker.client_config())

    def client_config(self, user: str, password: str) -> dict[str, Any]:
        return self.broker.client_config(user, password, "SCRAM-SHA-512")

    def producer(self, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD, **extra: Any) -> Producer:
        return Producer({**self.client_config(user, password), "linger.ms": 0, **extra})

    def consumer(
        self, group: str, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD, **extra: Any
    ) -> Consumer:
        return Consumer(
            {
                **self.client_config(user, password),
                "group.id": group,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "enable.auto.commit": False,
                **extra,
            }
        )


def api_client(username: str, role: str = TeamRole.TEAM_ADMIN) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username, f"{username}@example.com", "a long test password")
    _key, token = accounts.create_api_key(actor=Actor(user=user), name="laptop", role=role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return user, client


@pytest.fixture
def kafka_world(db, settings, managed_cluster: ManagedCluster) -> KafkaWorld:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    return build_world(managed_cluster)


def build_world(managed_cluster: ManagedCluster) -> KafkaWorld:
    """Two teams, their personas and service accounts, and the broker registered as their cluster."""
    uid = uuid.uuid4().hex[:8]
    organization = tenancy.create_organization(actor=SYSTEM, name=f"Acme {uid}")
    team_a = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    team_b = tenancy.create_team(actor=SYSTEM, organization=organization, name="Search")
    prefixes = {
        (team_a, PrefixResourceType.TOPIC): f"pay-{uid}.",
        (team_a, PrefixResourceType.GROUP): f"pay-{uid}-",
        (team_b, PrefixResourceType.TOPIC): f"srch-{uid}.",
        (team_b, PrefixResourceType.GROUP): f"srch-{uid}-",
        (team_a, PrefixResourceType.TRANSACTIONAL_ID): f"paytx-{uid}-",
        (team_b, PrefixResourceType.TRANSACTIONAL_ID): f"srchtx-{uid}-",
    }
    for (team, kind), prefix in prefixes.items():
        tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=kind, prefix=prefix)
    admin_user, org_admin = api_client(f"olga-{uid}")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=admin_user, is_org_admin=True)
    developer_user, developer_a = api_client(f"dave-{uid}")
    tenancy.add_member(actor=SYSTEM, team=team_a, user=developer_user, role=TeamRole.DEVELOPER)
    viewer_user, viewer_a = api_client(f"vera-{uid}")
    tenancy.add_member(actor=SYSTEM, team=team_a, user=viewer_user, role=TeamRole.VIEWER)
    admin_b_user, admin_b = api_client(f"bob-{uid}")
    tenancy.add_member(actor=SYSTEM, team=team_b, user=admin_b_user, role=TeamRole.TEAM_ADMIN)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM,
        organization=organization,
        name=f"secure-{uid}",
        **managed_cluster.registration(),
    )
    return KafkaWorld(
        broker=managed_cluster,
        cluster=cluster,
        team_a=team_a,
        team_b=team_b,
        account_a=accounts.create_service_account(actor=SYSTEM, team=team_a, name=f"pay-app-{uid}"),
        account_b=accounts.create_service_account(actor=SYSTEM, team=team_b, name=f"srch-app-{uid}"),
        topic_prefix_a=prefixes[(team_a, PrefixResourceType.TOPIC)],
        group_prefix_a=prefixes[(team_a, PrefixResourceType.GROUP)],
        topic_prefix_b=prefixes[(team_b, PrefixResourceType.TOPIC)],
        group_prefix_b=prefixes[(team_b, PrefixResourceType.GROUP)],
        transactional_id_prefix_a=prefixes[(team_a, PrefixResourceType.TRANSACTIONAL_ID)],
        transactional_id_prefix_b=prefixes[(team_b, PrefixResourceType.TRANSACTIONAL_ID)],
        org_admin=org_admin,
        developer_a=developer_a,
        viewer_a=viewer_a,
        admin_b=admin_b,
    )


def create_topic(world: KafkaWorld, client: APIClient, name: str, partitions: int = 1, **extra: Any) -> dict:
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "name": name,
        "partitions": partitions,
        **extra,
    }
    response = client.post("/api/v1/topics/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def reconcile(world: KafkaWorld) -> dict:
    response = world.org_admin.post("/api/v1/reconcile-runs/", {"cluster": world.cluster.id}, format="json")
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["state"] == "succeeded", run
    return run
