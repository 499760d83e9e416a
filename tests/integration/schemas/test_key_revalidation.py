"""The registry remembers verified API keys, but every request re-reads what can change about a key: revoked,
rotated, or its owner deactivated takes effect on the next request, not after the cache's lifetime."""

import base64
from datetime import timedelta

import pytest
from django.test import Client

from controlplane.accounts import services as accounts
from controlplane.accounts.models import ApiKey
from tests.integration.schemas.conftest import SYSTEM, Registry

pytestmark = pytest.mark.integration


def _subjects_status(registry: Registry, credentials: str) -> int:
    authorization = "Basic " + base64.b64encode(credentials.encode()).decode()
    return Client().get(f"{registry.url}/subjects", HTTP_AUTHORIZATION=authorization).status_code


def _key(credentials: str) -> ApiKey:
    return ApiKey.objects.get(key_id=credentials.split(":")[0])


def test_it_refuses_a_revoked_key_on_the_next_request(local_registry) -> None:
    assert _subjects_status(local_registry, local_registry.team_a_developer) == 200
    accounts.revoke_api_key(actor=SYSTEM, api_key=_key(local_registry.team_a_developer))
    assert _subjects_status(local_registry, local_registry.team_a_developer) == 401


def test_it_refuses_a_personal_key_once_its_owner_is_deactivated(local_registry) -> None:
    assert _subjects_status(local_registry, local_registry.org_admin) == 200
    owner = local_registry.org_admin_user
    owner.is_active = False
    owner.save(update_fields=["is_active"])
    assert _subjects_status(local_registry, local_registry.org_admin) == 401


def test_a_key_rotated_with_an_overlap_keeps_working(local_registry) -> None:
    credentials = local_registry.team_a_developer
    assert _subjects_status(local_registry, credentials) == 200
    accounts.rotate_api_key(actor=SYSTEM, api_key=_key(credentials), overlap=timedelta(hours=1))
    assert _subjects_status(local_registry, credentials) == 200


def test_a_key_rotated_without_an_overlap_is_refused_on_the_next_request(local_registry) -> None:
    credentials = local_registry.team_a_developer
    assert _subjects_status(local_registry, credentials) == 200
    accounts.rotate_api_key(actor=SYSTEM, api_key=_key(credentials), overlap=timedelta(0))
    assert _subjects_status(local_registry, credentials) == 401
