"""A registry on a live Django server, with two teams and their keys, and confluent-kafka's client for it."""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from django.contrib.auth import get_user_model

from controlplane.accounts import services as accounts
from controlplane.clusters.choices import Provider
from controlplane.clusters.models import Cluster
from controlplane.schemas import cache, services
from controlplane.schemas.api import auth
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole

SYSTEM = Actor.system()


@dataclass
class Registry:
    url: str
    cluster: Cluster
    # "key id:secret", as `basic.auth.user.info` takes it.
    org_admin: str
    team_a_developer: str
    team_a_viewer: str
    team_b_developer: str
    org_admin_user: Any = None

    def client(self, credentials: str | None = None) -> SchemaRegistryClient:
        config = {"url": self.url, "max.retries": 0}
        if credentials is not None:
            config["basic.auth.user.info"] = credentials
        return SchemaRegistryClient(config)


def _key(service_account, role: str) -> str:
    _api_key, token = accounts.create_api_key(
        actor=SYSTEM, name=f"{service_account.name} {role}", role=role, service_account=service_account
    )
    return f"{token.key_id}:{token.secret}"


@pytest.fixture(autouse=True)
def _clean_registry_caches() -> Iterator[None]:
    # Tests reuse database ids after each flush: process caches must not outlive a test.
    cache.clear()
    auth.forget_everything()
    services.forget_parsed()
    yield
    cache.clear()
    auth.forget_everything()
    services.forget_parsed()


def _build_registry(base_url: str) -> Registry:
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    team_a = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    team_b = tenancy.create_team(actor=SYSTEM, organization=organization, name="Search")
    tenancy.add_prefix(actor=SYSTEM, team=team_a, resource_type=PrefixResourceType.TOPIC, prefix="payments.")
    tenancy.add_prefix(
        actor=SYSTEM, team=team_a, resource_type=PrefixResourceType.SUBJECT, prefix="com.acme.payments."
    )
    tenancy.add_prefix(actor=SYSTEM, team=team_b, resource_type=PrefixResourceType.TOPIC, prefix="search.")
    cluster = Cluster.objects.create(organization=organization, name="main", provider=Provider.EXTERNAL)
    account_a = accounts.create_service_account(actor=SYSTEM, team=team_a, name="payments-api")
    account_b = accounts.create_service_account(actor=SYSTEM, team=team_b, name="search-indexer")
    olga = get_user_model().objects.create_user("olga", "olga@example.com", "a long test password")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=olga, is_org_admin=True)
    _, olga_token = accounts.create_api_key(actor=Actor(user=olga), name="olga", role=TeamRole.TEAM_ADMIN)
    return Registry(
        url=f"{base_url}/clusters/{cluster.pk}/schema-registry",
        cluster=cluster,
        org_admin=f"{olga_token.key_id}:{olga_token.secret}",
        team_a_developer=_key(account_a, TeamRole.DEVELOPER),
        team_a_viewer=_key(account_a, TeamRole.VIEWER),
        team_b_developer=_key(account_b, TeamRole.DEVELOPER),
        org_admin_user=olga,
    )


@pytest.fixture
def registry(live_server, transactional_db) -> Registry:
    """The registry on a live server, for real clients."""
    return _build_registry(live_server.url)


@pytest.fixture
def local_registry(db) -> Registry:
    """The same registry for Django's test client (url is the path only)."""
    return _build_registry("")


@pytest.fixture
def shared_registry(transactional_db) -> Registry:
    """The registry committed to the database, for servers in other processes (url is the path only)."""
    return _build_registry("")
