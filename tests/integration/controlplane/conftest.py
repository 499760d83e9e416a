"""Shared personas for the control-plane API tests.

One organization with team A (admin, developer, viewer) and team B (admin), an org admin, a member of
another organization, one service account per team, and a personal API key for every person.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.accounts.api.throttling import ApiKeyRateThrottle
from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Organization, Team

SYSTEM = Actor.system()


@dataclass
class Persona:
    user: Any
    api_key: ApiKey
    token: str

    @property
    def actor(self) -> Actor:
        return Actor(user=self.user)

    def client(self) -> APIClient:
        """A client that authenticates with the persona's personal API key."""
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")
        return client

    def session(self) -> APIClient:
        """A client signed in like the console (session cookie)."""
        client = APIClient()
        client.force_login(self.user)
        return client


@dataclass
class World:
    organization: Organization
    other_organization: Organization
    team_a: Team
    team_b: Team
    service_account_a: ServiceAccount
    service_account_b: ServiceAccount
    org_admin: Persona
    team_a_admin: Persona
    team_a_developer: Persona
    team_a_viewer: Persona
    team_b_admin: Persona
    outsider: Persona


@pytest.fixture(autouse=True)
def _fresh_throttle_counters() -> None:
    cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    # The personas' passwords are never the subject here; a slow hash would only slow every test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _persona(username: str, key_role: str = TeamRole.TEAM_ADMIN) -> Persona:
    user = get_user_model().objects.create_user(username, f"{username}@example.com", "a long test password")
    api_key, token = accounts.create_api_key(actor=Actor(user=user), name=f"{username} laptop", role=key_role)
    return Persona(user=user, api_key=api_key, token=str(token))


@pytest.fixture
def world(db) -> World:
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    other_organization = tenancy.create_organization(actor=SYSTEM, name="Globex")
    team_a = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    team_b = tenancy.create_team(actor=SYSTEM, organization=organization, name="Search")
    tenancy.add_prefix(actor=SYSTEM, team=team_a, resource_type=PrefixResourceType.TOPIC, prefix="payments.")
    tenancy.add_prefix(actor=SYSTEM, team=team_b, resource_type=PrefixResourceType.TOPIC, prefix="search.")

    org_admin = _persona("olga")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=org_admin.user, is_org_admin=True)
    team_a_admin, team_a_developer, team_a_viewer = _persona("alice"), _persona("dave"), _persona("vera")
    tenancy.add_member(actor=SYSTEM, team=team_a, user=team_a_admin.user, role=TeamRole.TEAM_ADMIN)
    tenancy.add_member(actor=SYSTEM, team=team_a, user=team_a_developer.user, role=TeamRole.DEVELOPER)
    tenancy.add_member(actor=SYSTEM, team=team_a, user=team_a_viewer.user, role=TeamRole.VIEWER)
    team_b_admin = _persona("bob")
    tenancy.add_member(actor=SYSTEM, team=team_b, user=team_b_admin.user, role=TeamRole.TEAM_ADMIN)
    outsider = _persona("otto")
    tenancy.add_org_member(
        actor=SYSTEM, organization=other_organization, user=outsider.user, is_org_admin=True
    )

    return World(
        organization=organization,
        other_organization=other_organization,
        team_a=team_a,
        team_b=team_b,
        service_account_a=accounts.create_service_account(actor=SYSTEM, team=team_a, name="payments-api"),
        service_account_b=accounts.create_service_account(actor=SYSTEM, team=team_b, name="search-indexer"),
        org_admin=org_admin,
        team_a_admin=team_a_admin,
        team_a_developer=team_a_developer,
        team_a_viewer=team_a_viewer,
        team_b_admin=team_b_admin,
        outsider=outsider,
    )


@pytest.fixture
def key_client() -> Callable[[str], APIClient]:
    """A client for a raw API key token, e.g. a service account's."""

    def make(token: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client

    return make


@pytest.fixture
def in_process(monkeypatch) -> Iterator[None]:
    """Like Django's test client: keep the test's database connection (and its transaction) open across
    requests, and lift the per-key rate limit the generated requests would run into."""
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "100000/min"})
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
